//! Command-line values and the argument groups the binaries share.
//!
//! The key decision: every number a person types is parsed by a function
//! here that refuses NaN and infinities and states its range, so
//! `--lon nan` fails the same way in every tool, and a negative number needs
//! no `=` (`--alt -430`). Geographic points use the terrain core's one rule
//! for degrees ([`planet_terrain::geo::body::check_latitude_degrees`]).

use clap::Args;
use planet_terrain::geo::body::{check_latitude_degrees, check_longitude_degrees};

/// A finite number.
pub fn finite(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a number"))?;
    if value.is_finite() { Ok(value) } else { Err(format!("'{text}' is not a finite number")) }
}

/// A latitude in degrees.
pub fn latitude(text: &str) -> Result<f64, String> {
    check_latitude_degrees(finite(text)?).map_err(|e| e.to_string())
}

/// A longitude in degrees.
pub fn longitude(text: &str) -> Result<f64, String> {
    check_longitude_degrees(finite(text)?).map_err(|e| e.to_string())
}

/// A heading in degrees, clockwise from north (any finite angle).
pub fn heading(text: &str) -> Result<f64, String> {
    finite(text)
}

/// A pitch in degrees above the horizontal, -90..=90.
pub fn pitch(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if (-90.0..=90.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value}: pitch must lie in -90..=90 degrees"))
    }
}

/// An altitude in metres: finite, and within a million kilometres of the
/// datum (past that nothing of a body is drawn and f64 steps get coarse).
pub fn altitude(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if value.abs() <= 1e9 { Ok(value) } else { Err(format!("{value}: altitude must lie within 1e9 m of the datum")) }
}

/// A camera height above the ground (`--agl`), metres: above it, so
/// positive, and within 1e9 m. Below the ground the camera stood inside
/// the terrain and drew its underside, with exit 0.
pub fn above_ground(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if value > 0.0 && value <= 1e9 {
        Ok(value)
    } else {
        Err(format!("{value}: the height above the ground must lie in (0, 1e9] m; --alt places a camera anywhere"))
    }
}

/// A ground sample spacing in metres: finite, above a millimetre and at
/// most a million kilometres.
pub fn positive_metres(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if (1e-3..=1e9).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value}: a spacing must lie in [0.001, 1e9] m"))
    }
}

/// A screen-space error target in pixels: finite and positive.
pub fn screen_error(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if value > 0.0 && value <= 1e6 {
        Ok(value)
    } else {
        Err(format!("{value}: the screen-space error must lie in (0, 1e6] pixels"))
    }
}

/// A vertical field of view in degrees: finite, 1..=170.
pub fn field_of_view(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if (1.0..=170.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value}: the field of view must lie in 1..=170 degrees"))
    }
}

/// Frames per second of path time: finite, in (0, 1000].
pub fn frame_rate(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if value > 0.0 && value <= 1000.0 {
        Ok(value)
    } else {
        Err(format!("{value}: frames per second must lie in (0, 1000]"))
    }
}

/// An instant, UTC, as RFC 3339 (`2026-06-21T06:00:00Z`): the terrain
/// core's one rule ([`planet_terrain::camera::Instant::parse_rfc3339`]).
pub fn utc_time(text: &str) -> Result<planet_terrain::camera::Instant, String> {
    planet_terrain::camera::Instant::parse_rfc3339(text).map_err(|e| e.to_string())
}

/// Seconds of sky time per second of path or window time: finite, in
/// -1e6..=1e6 (0 holds the sun still, negative runs it back).
pub fn time_rate(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if value.abs() <= 1e6 { Ok(value) } else { Err(format!("{value}: the time rate must lie in -1e6..=1e6")) }
}

/// A whole number of `what` in `range`, the range stated when it is not.
///
/// ```
/// assert_eq!(planet_cli::args::count_in("14", 14..=2048, "tile slots"), Ok(14));
/// assert!(planet_cli::args::count_in("3", 14..=2048, "tile slots").unwrap_err().contains("14..=2048"));
/// ```
pub fn count_in(text: &str, range: std::ops::RangeInclusive<u64>, what: &str) -> Result<u64, String> {
    let value: u64 = text.trim().parse().map_err(|_| {
        format!("'{text}' is not a whole number (expected {what} in {}..={})", range.start(), range.end())
    })?;
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value}: {what} must lie in {}..={}", range.start(), range.end()))
    }
}

/// `on` or `off` (what `--detail` takes).
///
/// ```
/// assert_eq!(planet_cli::args::on_off("off"), Ok(false));
/// assert!(planet_cli::args::on_off("yes").unwrap_err().contains("on or off"));
/// ```
pub fn on_off(text: &str) -> Result<bool, String> {
    match text.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        other => Err(format!("'{other}': expected on or off")),
    }
}

/// `--detail on|off`: ground synthesized past the height data depth (on by
/// default; off shows the resampled data alone, for comparison).
#[derive(Args, Debug, Clone, Copy)]
pub struct Detail {
    /// Synthesize ground detail past the packs' height data depth: on or off.
    #[arg(long = "detail", default_value = "on", value_parser = on_off, value_name = "on|off", action = clap::ArgAction::Set)]
    pub on: bool,
}

/// A viewport or window size, `WIDTHxHEIGHT`, each 1..=16384.
///
/// ```
/// assert_eq!(planet_cli::args::size("1920x1080"), Ok((1920, 1080)));
/// assert!(planet_cli::args::size("1920x0").is_err());
/// ```
pub fn size(text: &str) -> Result<(u32, u32), String> {
    let parsed = text.split_once('x').and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
    match parsed {
        Some((w, h)) if (1..=16384).contains(&w) && (1..=16384).contains(&h) => Ok((w, h)),
        _ => Err(format!("'{text}': expected WIDTHxHEIGHT, each 1..=16384 (e.g. 1920x1080)")),
    }
}

/// A latitude/longitude box `S,W,N,E` in degrees, held to the pack
/// format's rule for coverage (south < north; west != east, a box may cross
/// the antimeridian).
///
/// ```
/// assert_eq!(planet_cli::args::region("44,5,48,12").unwrap().north, 48.0);
/// assert!(planet_cli::args::region("48,5,44,12").unwrap_err().contains("south < north"));
/// ```
pub fn region(text: &str) -> Result<planet_terrain::pack::Coverage, String> {
    let values: Result<Vec<f64>, _> = text.split(',').map(|p| p.trim().parse::<f64>()).collect();
    let Ok([south, west, north, east]) = values.as_deref() else {
        return Err(format!("'{text}': expected S,W,N,E in degrees (e.g. 44,5,48,12)"));
    };
    let coverage = planet_terrain::pack::Coverage { south: *south, west: *west, north: *north, east: *east };
    coverage.validate().map(|()| coverage).map_err(|e| format!("S,W,N,E: {e}"))
}

/// Ellipsoid radii `A,B,C` in metres, each finite and positive; the body's
/// physical range (`planet_terrain::geo::body::RADIUS_M`) applies when the
/// body is made.
pub fn radii(text: &str) -> Result<[f64; 3], String> {
    let parts: Vec<&str> = text.split(',').collect();
    let [a, b, c] = parts[..] else {
        return Err(format!("'{text}': expected A,B,C, three radii in metres (e.g. 3396190,3396190,3376200)"));
    };
    let radius = |t: &str| -> Result<f64, String> {
        let r = finite(t)?;
        if r > 0.0 { Ok(r) } else { Err(format!("{r}: a radius must be positive")) }
    };
    Ok([radius(a)?, radius(b)?, radius(c)?])
}

/// A point on the body, in degrees.
#[derive(Args, Clone, Copy, Debug, PartialEq)]
pub struct GeoPoint {
    /// Latitude in degrees, north positive.
    #[arg(long, value_parser = latitude, allow_hyphen_values = true)]
    pub lat: f64,
    /// Longitude in degrees, east positive (-360..=360).
    #[arg(long, value_parser = longitude, allow_hyphen_values = true)]
    pub lon: f64,
}

/// Which way a camera looks.
#[derive(Args, Clone, Copy, Debug, PartialEq)]
pub struct Orientation {
    /// Degrees clockwise from north.
    #[arg(long, default_value_t = 0.0, value_parser = heading, allow_hyphen_values = true)]
    pub heading: f64,
    /// Degrees above the horizontal (-90 looks straight down).
    #[arg(long, default_value_t = -90.0, value_parser = pitch, allow_hyphen_values = true)]
    pub pitch: f64,
}

/// Every argument of `command` and its subcommands that `--help` would
/// list without a word of explanation, as `subcommand --flag` (clap's own
/// `--help` and `--version` aside): what a binary's test holds empty, so
/// no flag reaches a user undescribed.
pub fn undescribed_arguments(command: &clap::Command) -> Vec<String> {
    let mut out = Vec::new();
    let name = command.get_name();
    for arg in command.get_arguments() {
        let builtin = matches!(arg.get_id().as_str(), "help" | "version");
        if !builtin && !arg.is_hide_set() && arg.get_help().is_none() && arg.get_long_help().is_none() {
            let spelled = arg.get_long().map_or_else(|| arg.get_id().to_string().to_uppercase(), |l| format!("--{l}"));
            out.push(format!("{name} {spelled}"));
        }
    }
    for sub in command.get_subcommands() {
        out.extend(undescribed_arguments(sub));
    }
    out
}

/// Fails (a binary's test) naming every argument [`undescribed_arguments`] finds.
pub fn assert_every_argument_described(command: &clap::Command) {
    let undescribed = undescribed_arguments(command);
    assert!(undescribed.is_empty(), "{}: arguments without help text: {undescribed:?}", command.get_name());
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn an_argument_without_help_text_is_named_with_its_subcommand() {
        let command = clap::Command::new("tool")
            .arg(clap::Arg::new("said").long("said").help("Says what it does"))
            .subcommand(clap::Command::new("map").arg(clap::Arg::new("png").long("png")).arg(clap::Arg::new("pack")));
        assert_eq!(undescribed_arguments(&command), ["map --png", "map PACK"]);
    }

    #[derive(Parser, Debug)]
    struct Probe {
        #[command(flatten)]
        point: GeoPoint,
        #[command(flatten)]
        orientation: Orientation,
        #[arg(long, value_parser = altitude, allow_hyphen_values = true)]
        alt: Option<f64>,
    }

    fn parse(args: &[&str]) -> Result<Probe, String> {
        Probe::try_parse_from(std::iter::once("probe").chain(args.iter().copied())).map_err(|e| e.to_string())
    }

    #[test]
    fn negative_numbers_need_no_equals_sign() {
        let probe = parse(&["--lat", "-33.9", "--lon", "-70.7", "--alt", "-430", "--pitch", "-20"]).unwrap();
        assert_eq!(
            (probe.point.lat, probe.point.lon, probe.alt, probe.orientation.pitch),
            (-33.9, -70.7, Some(-430.0), -20.0)
        );
    }

    #[test]
    fn nan_and_infinities_are_refused_everywhere() {
        for (flag, value) in
            [("--lat", "nan"), ("--lon", "NaN"), ("--heading", "inf"), ("--alt", "-inf"), ("--pitch", "nan")]
        {
            let mut args = vec![flag, value];
            for (name, default) in [("--lat", "1"), ("--lon", "2")] {
                if name != flag {
                    args.extend([name, default]);
                }
            }
            let error = parse(&args).unwrap_err();
            assert!(error.contains("not a finite number"), "{flag} {value}: {error}");
        }
    }

    #[test]
    fn ranges_are_stated() {
        let error = parse(&["--lat", "91", "--lon", "0"]).unwrap_err();
        assert!(error.contains("latitude 91: must be a finite number of degrees in -90..=90"), "{error}");
        let error = parse(&["--lat", "0", "--lon", "400"]).unwrap_err();
        assert!(error.contains("-360..=360"), "{error}");
        assert_eq!(size("1920x1080"), Ok((1920, 1080)));
        assert!(size("0x10").is_err() && size("big").is_err());
        assert!(screen_error("0").is_err() && screen_error("nan").is_err());
        assert!(field_of_view("nan").unwrap_err().contains("not a finite number"));
        assert!(field_of_view("171").unwrap_err().contains("1..=170"));
        assert!(frame_rate("inf").unwrap_err().contains("not a finite number"));
        assert!(frame_rate("0").unwrap_err().contains("(0, 1000]"));
        assert_eq!(count_in("64", 1..=1024, "uploads"), Ok(64));
        assert_eq!(count_in("0", 1..=1024, "uploads"), Err("0: uploads must lie in 1..=1024".into()));
        assert!(count_in("nan", 1..=1024, "uploads").unwrap_err().contains("not a whole number"));
        assert_eq!(radii("3396190,3396190,3376200"), Ok([3396190.0, 3396190.0, 3376200.0]));
        assert!(radii("1,2").is_err() && radii("1,-2,3").is_err() && radii("1,nan,3").is_err());
    }
}

/// A byte count: digits with an optional K, M, G or T suffix (powers of 1024).
pub fn bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit.trim_end_matches(['B', 'b', 'i']).to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        other => return Err(format!("'{text}': unknown unit '{other}' (use K, M, G or T)")),
    };
    let n: u64 = digits.parse().map_err(|_| format!("'{text}' is not a byte count (e.g. 512M, 2G)"))?;
    n.checked_mul(1u64 << shift).filter(|&b| b > 0).ok_or_else(|| format!("'{text}' must be between 1 byte and 16 EiB"))
}

/// How packs given as `http://` or `https://` URLs are cached.
#[derive(clap::Args, Debug, Clone)]
pub struct Remote {
    /// Keep blocks of remote packs in this directory across sessions.
    #[arg(long = "cache", value_name = "DIR", global = true)]
    pub cache: Option<std::path::PathBuf>,
    /// The on-disk cache's budget (e.g. 512M, 2G); least recently used blocks go first.
    #[arg(long = "cache-bytes", value_name = "N", value_parser = bytes, default_value = "1G", global = true)]
    pub cache_bytes: u64,
    /// One HTTP request's limit, connecting included (seconds).
    #[arg(long = "request-timeout", value_name = "S", value_parser = seconds, default_value = "15", global = true)]
    pub request_timeout_s: f64,
    /// One read's limit over HTTP, every retry and wait included (seconds):
    /// past it the server counts as slow and the read fails.
    #[arg(long = "read-deadline", value_name = "S", value_parser = seconds, default_value = "30", global = true)]
    pub read_deadline_s: f64,
}

/// A duration in seconds: finite, above zero, at most a day.
fn seconds(text: &str) -> Result<f64, String> {
    let s: f64 = text.parse().map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if s.is_finite() && s > 0.0 && s <= 86_400.0 {
        Ok(s)
    } else {
        Err(format!("{text}: a duration must lie in (0, 86400] seconds"))
    }
}

#[cfg(test)]
mod byte_tests {
    use super::bytes;

    #[test]
    fn byte_counts_read_with_units() {
        assert_eq!(bytes("512"), Ok(512));
        assert_eq!(bytes("4K"), Ok(4096));
        assert_eq!(bytes("2G"), Ok(2 << 30));
        assert_eq!(bytes("1GiB"), Ok(1 << 30));
        assert!(bytes("0").is_err() && bytes("3X").is_err() && bytes("G").is_err() && bytes("99999999999T").is_err());
    }
}
