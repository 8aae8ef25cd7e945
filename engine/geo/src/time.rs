//! An instant on the UTC time scale, and its RFC 3339 text form.
//!
//! The key decision: an instant is one `f64` of seconds since J2000.0
//! (2000-01-01T12:00:00Z), and UTC stands in for both UT1 (within 0.9 s:
//! 0.004 degrees of Earth's turn) and TT (69 s: 0.0008 degrees of the sun's
//! longitude). A picture needs the terminator in the right place, not
//! leap-second bookkeeping; in exchange the instant adds plainly to a path
//! keyframe's time and the clock of a running window. An `f64` holds a
//! century either side of J2000 to better than a microsecond.
//!
//! The parser is hand-written (the terrain core takes no date crate): it
//! accepts exactly `YYYY-MM-DDTHH:MM:SS[.fff]Z` (a lower-case `t`/`z` or a
//! space for `T` too, as RFC 3339 allows), UTC only, years 1900 to 2100 (the
//! span the solar ephemeris is stated for, with margin), and refuses
//! anything else naming the rule it broke.

use std::fmt;

use thiserror::Error;

/// Seconds in a day.
pub const DAY_S: f64 = 86_400.0;
/// The Julian date of J2000.0.
pub const J2000_JD: f64 = 2_451_545.0;

/// The years an instant may name.
pub const YEARS: std::ops::RangeInclusive<i64> = 1900..=2100;

/// One instant, UTC, as seconds since J2000.0.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Instant {
    seconds_since_j2000: f64,
}

/// Why a text is not an instant.
#[derive(Debug, Error, PartialEq)]
#[error("'{text}' is not a UTC time: {rule} (expected YYYY-MM-DDTHH:MM:SS[.fff]Z, e.g. 2026-06-21T06:00:00Z)")]
pub struct TimeError {
    pub text: String,
    pub rule: String,
}

impl Instant {
    /// J2000.0 itself.
    pub const J2000: Instant = Instant { seconds_since_j2000: 0.0 };

    pub fn from_seconds_since_j2000(seconds: f64) -> Instant {
        Instant { seconds_since_j2000: seconds }
    }

    pub fn seconds_since_j2000(&self) -> f64 {
        self.seconds_since_j2000
    }

    /// Days (of 86 400 s) since J2000.0.
    pub fn days_since_j2000(&self) -> f64 {
        self.seconds_since_j2000 / DAY_S
    }

    pub fn julian_date(&self) -> f64 {
        J2000_JD + self.days_since_j2000()
    }

    /// This instant `seconds` later (earlier when negative).
    pub fn plus_seconds(&self, seconds: f64) -> Instant {
        Instant { seconds_since_j2000: self.seconds_since_j2000 + seconds }
    }

    /// A civil date and time, UTC; `second` may carry a fraction.
    pub fn from_civil(year: i64, month: u32, day: u32, hour: u32, minute: u32, second: f64) -> Instant {
        let days = days_from_civil(year, month, day) - days_from_civil(2000, 1, 1);
        let seconds = days as f64 * DAY_S + f64::from(hour) * 3600.0 + f64::from(minute) * 60.0 + second - 43_200.0;
        Instant { seconds_since_j2000: seconds }
    }

    /// The civil date and time, UTC: (year, month, day, hour, minute, second).
    pub fn to_civil(&self) -> (i64, u32, u32, u32, u32, f64) {
        let since_midnight_2000 = self.seconds_since_j2000 + 43_200.0;
        let days = (since_midnight_2000 / DAY_S).floor();
        let in_day = since_midnight_2000 - days * DAY_S;
        let (year, month, day) = civil_from_days(days as i64 + days_from_civil(2000, 1, 1));
        let hour = (in_day / 3600.0).floor().min(23.0);
        let minute = ((in_day - hour * 3600.0) / 60.0).floor().min(59.0);
        let second = in_day - hour * 3600.0 - minute * 60.0;
        (year, month, day, hour as u32, minute as u32, second)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` (see the module comment).
    pub fn parse_rfc3339(text: &str) -> Result<Instant, TimeError> {
        let refuse = |rule: &str| TimeError { text: text.to_owned(), rule: rule.to_owned() };
        let b = text.as_bytes();
        if b.len() < 20 {
            return Err(refuse("too short"));
        }
        let digits = |from: usize, len: usize, what: &str| -> Result<u32, TimeError> {
            let part = &b[from..from + len];
            if !part.iter().all(u8::is_ascii_digit) {
                return Err(refuse(&format!("the {what} must be {len} digits")));
            }
            Ok(part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
        };
        let separator = |at: usize, allowed: &[u8], what: &str| {
            if allowed.contains(&b[at]) {
                Ok(())
            } else {
                Err(refuse(&format!("expected {what} at character {}", at + 1)))
            }
        };
        let year = i64::from(digits(0, 4, "year")?);
        separator(4, b"-", "'-'")?;
        let month = digits(5, 2, "month")?;
        separator(7, b"-", "'-'")?;
        let day = digits(8, 2, "day")?;
        separator(10, b"Tt ", "'T'")?;
        let hour = digits(11, 2, "hour")?;
        separator(13, b":", "':'")?;
        let minute = digits(14, 2, "minute")?;
        separator(16, b":", "':'")?;
        let whole = digits(17, 2, "second")?;
        let mut second = f64::from(whole);
        let mut at = 19;
        if b[at] == b'.' {
            let start = at + 1;
            let end = (start..b.len()).find(|&k| !b[k].is_ascii_digit()).unwrap_or(b.len());
            if end == start || end - start > 9 {
                return Err(refuse("a fraction of a second needs 1 to 9 digits after '.'"));
            }
            let fraction: f64 =
                text[start..end].parse().map(|f: f64| f / 10f64.powi((end - start) as i32)).unwrap_or(0.0);
            second += fraction;
            at = end;
        }
        if at >= b.len() || !matches!(b[at], b'Z' | b'z') {
            return Err(refuse("only UTC is accepted: end with 'Z' (no offsets)"));
        }
        if at + 1 != b.len() {
            return Err(refuse("nothing may follow the 'Z'"));
        }
        if !YEARS.contains(&year) {
            return Err(refuse(&format!("the year must lie in {}..={}", YEARS.start(), YEARS.end())));
        }
        if !(1..=12).contains(&month) {
            return Err(refuse("the month must lie in 01..=12"));
        }
        if day < 1 || day > days_in_month(year, month) {
            return Err(refuse(&format!("day {day:02} does not exist in {year}-{month:02}")));
        }
        if hour > 23 || minute > 59 || whole > 59 {
            return Err(refuse("the time of day must lie in 00:00:00..=23:59:59 (leap seconds are not represented)"));
        }
        Ok(Instant::from_civil(year, month, day, hour, minute, second))
    }
}

impl std::str::FromStr for Instant {
    type Err = TimeError;

    fn from_str(text: &str) -> Result<Instant, TimeError> {
        Instant::parse_rfc3339(text)
    }
}

/// RFC 3339, UTC, whole seconds (the fraction is dropped, not rounded, so a
/// clock never shows a second before it began).
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, mo, d, h, mi, s) = self.to_civil();
        write!(f, "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{:02}Z", (s.floor() as u32).min(59))
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn j2000_is_noon_on_the_first_of_january_2000() {
        let t = Instant::parse_rfc3339("2000-01-01T12:00:00Z").unwrap();
        assert_eq!(t, Instant::J2000);
        assert_eq!(t.julian_date(), J2000_JD);
        // JD 2460000.5 is 2023-02-25T00:00:00Z.
        let later = Instant::parse_rfc3339("2023-02-25T00:00:00Z").unwrap();
        assert_eq!(later.julian_date(), 2_460_000.5);
    }

    #[test]
    fn text_round_trips_and_fractions_count() {
        for text in ["2026-06-21T06:00:00Z", "1900-03-01T00:00:00Z", "2100-12-31T23:59:59Z", "2024-02-29T13:14:15Z"] {
            assert_eq!(Instant::parse_rfc3339(text).unwrap().to_string(), text);
        }
        let a = Instant::parse_rfc3339("2026-06-21T06:00:00.250Z").unwrap();
        let b = Instant::parse_rfc3339("2026-06-21 06:00:00z").unwrap();
        assert!((a.seconds_since_j2000() - b.seconds_since_j2000() - 0.25).abs() < 1e-6);
        assert_eq!(a.plus_seconds(3599.75).to_string(), "2026-06-21T07:00:00Z");
    }

    #[test]
    fn bad_text_is_refused_with_the_rule() {
        let cases = [
            ("2026-06-21", "too short"),
            ("2026-06-21T06:00:00+02:00", "only UTC"),
            ("2026-06-21T06:00:00", "too short"),
            ("2026-06-21T06:00:00.Z", "1 to 9 digits"),
            ("2026-06-21T06:00:00Zjunk", "nothing may follow"),
            ("2026-13-01T00:00:00Z", "month"),
            ("2025-02-29T00:00:00Z", "day 29 does not exist in 2025-02"),
            ("2026-06-21T24:00:00Z", "time of day"),
            ("2026-06-21T23:59:60Z", "leap seconds"),
            ("1850-01-01T00:00:00Z", "year must lie in 1900..=2100"),
            ("2026/06/21T06:00:00Z", "expected '-' at character 5"),
            ("2026-06-2xT06:00:00Z", "day must be 2 digits"),
        ];
        for (text, rule) in cases {
            let error = Instant::parse_rfc3339(text).expect_err(text).to_string();
            assert!(error.contains(rule) && error.contains(text), "{text}: {error}");
        }
    }
}
