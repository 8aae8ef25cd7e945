//! The grid-convention audit: sample the source at well-known places before
//! anything is baked.
//!
//! A longitude read backwards, a latitude flipped or a grid shifted by half a
//! turn produces a planet that looks entirely plausible and is wrong
//! everywhere; nothing downstream can tell. So each landmark's value is
//! checked against a range, and when the raster as given fails, the same
//! landmarks are re-read under each misreading (longitude negated, latitude
//! negated, longitude + 180, both negated). A misreading under which the
//! landmarks agree is named in the refusal. Ranges are wide enough for coarse
//! data (a 5' grid smooths Everest to about 6 km) and narrow enough that a
//! misread grid fails them.

use std::fmt;

/// A place with a known elevation range (metres).
#[derive(Clone, Debug, PartialEq)]
pub struct Landmark {
    pub name: String,
    /// Given on the command line (`--landmark`): the user vouches for it,
    /// so it must agree; the built-in table's tolerance is for its own.
    pub user: bool,
    pub lat: f64,
    pub lon: f64,
    pub min_m: f64,
    pub max_m: f64,
}

impl Landmark {
    fn new(name: &str, lat: f64, lon: f64, min_m: f64, max_m: f64) -> Landmark {
        Landmark { name: name.to_owned(), user: false, lat, lon, min_m, max_m }
    }

    /// Parses `LAT,LON,MIN,MAX` (degrees, metres), as given to `--landmark`.
    pub fn parse(text: &str) -> Result<Landmark, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let numbers: Result<Vec<f64>, _> = parts.iter().map(|p| p.parse::<f64>()).collect();
        match numbers.as_deref() {
            Ok([lat, lon, min, max])
                if (-90.0..=90.0).contains(lat) && (-180.0..=360.0).contains(lon) && min <= max =>
            {
                Ok(Landmark {
                    user: true,
                    ..Landmark::new(&format!("user landmark {lat},{lon}"), *lat, *lon, *min, *max)
                })
            }
            _ => Err(format!("'{text}' is not LAT,LON,MIN,MAX (degrees, metres, MIN <= MAX)")),
        }
    }

    fn accepts(&self, value: f64) -> bool {
        (self.min_m..=self.max_m).contains(&value)
    }
}

/// The built-in table for a body (empty for bodies without one).
pub fn table(body: &str) -> Vec<Landmark> {
    let l = Landmark::new;
    match body {
        "earth" => vec![
            l("Mount Everest massif", 27.988, 86.925, 4_000.0, 8_900.0),
            l("Tibetan Plateau", 33.0, 88.0, 4_300.0, 5_800.0),
            l("Altiplano", -17.0, -68.0, 3_300.0, 4_500.0),
            l("Challenger Deep", 11.35, 142.2, -11_100.0, -6_000.0),
            l("Puerto Rico Trench", 19.8, -66.5, -8_700.0, -6_000.0),
            l("Qattara Depression (below sea level)", 30.0, 27.5, -150.0, 60.0),
            l("Caspian Sea basin (below sea level)", 42.0, 50.5, -800.0, 0.0),
            l("Greenland ice sheet summit", 72.6, -38.5, 2_800.0, 3_400.0),
            l("Dome A, Antarctic ice sheet", -80.4, 77.4, 3_500.0, 4_300.0),
            l("Amazon basin", -3.0, -60.0, 0.0, 200.0),
            l("Central Pacific abyssal plain", 0.0, -140.0, -5_500.0, -3_500.0),
            l("Central Indian Ocean basin", -30.0, 80.0, -5_000.0, -3_000.0),
            l("Congo basin", 0.0, 20.0, 250.0, 600.0),
            l("Hudson Bay", 60.0, -85.0, -300.0, 0.0),
        ],
        "moon" => vec![
            l("South Pole-Aitken basin floor", -55.0, -170.0, -8_500.0, -2_500.0),
            l("Far-side highlands", 5.0, -160.0, 2_000.0, 11_000.0),
            l("Mare Imbrium", 33.0, -16.0, -4_500.0, -1_000.0),
            l("Mare Crisium", 17.0, 59.0, -6_000.0, -2_000.0),
        ],
        "mars" => vec![
            l("Olympus Mons", 18.65, -133.8, 15_000.0, 22_500.0),
            l("Hellas Planitia", -42.4, 70.5, -8_500.0, -5_000.0),
            l("Arsia Mons", -8.26, -120.1, 12_000.0, 18_500.0),
            l("Vastitas Borealis", 70.0, 0.0, -5_500.0, -3_500.0),
            l("Elysium Mons", 25.02, 147.2, 10_000.0, 14_500.0),
        ],
        _ => Vec::new(),
    }
}

/// A way of misreading a grid, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    AsGiven,
    LongitudeReversed,
    LatitudeFlipped,
    Shifted180,
    Rotated180,
}

impl Reading {
    pub const MISREADINGS: [Reading; 4] =
        [Reading::LongitudeReversed, Reading::LatitudeFlipped, Reading::Shifted180, Reading::Rotated180];

    /// Where to read the source to see what it holds for (lat, lon) if the
    /// file was written with this misreading.
    pub fn apply(self, lat: f64, lon: f64) -> (f64, f64) {
        let wrap = |v: f64| (v + 180.0).rem_euclid(360.0) - 180.0;
        match self {
            Reading::AsGiven => (lat, lon),
            Reading::LongitudeReversed => (lat, wrap(-lon)),
            Reading::LatitudeFlipped => (-lat, lon),
            Reading::Shifted180 => (lat, wrap(lon + 180.0)),
            Reading::Rotated180 => (-lat, wrap(-lon)),
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Reading::AsGiven => "as given",
            Reading::LongitudeReversed => "the longitude runs backwards (east and west swapped)",
            Reading::LatitudeFlipped => {
                "the latitude is flipped (north and south swapped, e.g. rows south-up but georeferenced north-up)"
            }
            Reading::Shifted180 => {
                "the grid is shifted by 180 degrees of longitude (e.g. 0..360 data labelled -180..180)"
            }
            Reading::Rotated180 => "both axes run backwards",
        }
    }
}

/// One landmark's reading.
#[derive(Clone, Debug, PartialEq)]
pub struct LandmarkCheck {
    pub landmark: Landmark,
    /// The source's value there, or `None` outside its coverage or in a void.
    pub value: Option<f64>,
    pub ok: bool,
}

/// What the audit concluded.
#[derive(Clone, Debug, PartialEq)]
pub struct LandmarkAudit {
    pub checks: Vec<LandmarkCheck>,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Every landmark inside the coverage agrees (or all but a few of many,
    /// listed in `checks`).
    Accepted,
    /// No landmark lies inside the raster's coverage.
    NothingToCheck,
    /// A misreading explains the landmarks.
    Misread { reading: Reading, agree_if_undone: usize, of: usize },
    /// The landmarks disagree and no misreading explains them.
    Disagree,
}

impl LandmarkAudit {
    /// Runs the audit; `sample` reads the source at (lat, lon) degrees.
    pub fn run<E>(
        landmarks: &[Landmark],
        mut sample: impl FnMut(f64, f64) -> Result<Option<f64>, E>,
    ) -> Result<LandmarkAudit, E> {
        // Whether a reading's checks pass: every user landmark inside the
        // raster agrees, and all but a stray one in eight of the table's
        // (a void, an odd dataset among many).
        let passes = |checks: &[LandmarkCheck]| {
            let inside = |user: bool| checks.iter().filter(move |c| c.landmark.user == user && c.value.is_some());
            let agree = |user: bool| inside(user).filter(|c| c.ok).count();
            let table = inside(false).count();
            agree(true) == inside(true).count() && agree(false) + table / 8 >= table
        };
        let mut score = |reading: Reading| -> Result<(Vec<LandmarkCheck>, usize, usize), E> {
            let mut checks = Vec::new();
            let (mut inside, mut agree) = (0, 0);
            for l in landmarks {
                let (lat, lon) = reading.apply(l.lat, l.lon);
                let value = sample(lat, lon)?;
                let ok = value.is_some_and(|v| l.accepts(v));
                inside += usize::from(value.is_some());
                agree += usize::from(ok);
                checks.push(LandmarkCheck { landmark: l.clone(), value, ok });
            }
            Ok((checks, inside, agree))
        };
        let (checks, inside, agree) = score(Reading::AsGiven)?;
        if inside == 0 {
            return Ok(LandmarkAudit { checks, verdict: Verdict::NothingToCheck });
        }
        if passes(&checks) {
            return Ok(LandmarkAudit { checks, verdict: Verdict::Accepted });
        }
        let mut best: Option<(Reading, usize, usize)> = None;
        for reading in Reading::MISREADINGS {
            let (checks_then, inside_then, agree_then) = score(reading)?;
            if agree_then > agree && passes(&checks_then) && best.is_none_or(|b| agree_then > b.1) {
                best = Some((reading, agree_then, inside_then));
            }
        }
        let verdict = match best {
            Some((reading, agree_if_undone, of)) => Verdict::Misread { reading, agree_if_undone, of },
            None => Verdict::Disagree,
        };
        Ok(LandmarkAudit { checks, verdict })
    }

    pub fn disagreeing(&self) -> impl Iterator<Item = &LandmarkCheck> {
        self.checks.iter().filter(|c| c.value.is_some() && !c.ok)
    }
}

impl fmt::Display for LandmarkCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.landmark;
        match self.value {
            Some(v) => {
                write!(f, "{} ({}, {}): {v:.0} m, expected {:.0}..{:.0} m", l.name, l.lat, l.lon, l.min_m, l.max_m)
            }
            None => write!(f, "{} ({}, {}): outside the raster", l.name, l.lat, l.lon),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_landmarks_parse_or_explain() {
        let l = Landmark::parse("46.5, 8.0, 1000, 4000").unwrap();
        assert_eq!((l.lat, l.lon, l.min_m, l.max_m), (46.5, 8.0, 1000.0, 4000.0));
        for bad in ["1,2,3", "95,0,0,1", "0,0,5,1", "a,b,c,d"] {
            assert!(Landmark::parse(bad).is_err(), "{bad}");
        }
    }

    /// Regression (#31): a user landmark the raster contradicts passed
    /// under the table's one-in-eight tolerance without a word.
    #[test]
    fn a_user_landmark_the_raster_contradicts_fails_the_audit() {
        let table = table("earth");
        let mut landmarks = table.clone();
        let everest = table.iter().max_by(|a, b| a.min_m.total_cmp(&b.min_m)).expect("a high place").clone();
        landmarks.push(Landmark::parse(&format!("{},{},100,200", everest.lat, everest.lon)).unwrap());
        // A raster that reads every table landmark right.
        let truth = |lat: f64, lon: f64| -> Result<Option<f64>, ()> {
            let l = table.iter().find(|l| l.lat == lat && l.lon == lon);
            Ok(l.map(|l| (l.min_m + l.max_m) / 2.0))
        };
        assert_eq!(LandmarkAudit::run(&table, truth).unwrap().verdict, Verdict::Accepted);
        let audit = LandmarkAudit::run(&landmarks, truth).unwrap();
        assert_eq!(audit.verdict, Verdict::Disagree);
        let named: Vec<_> = audit.disagreeing().map(|c| c.landmark.name.clone()).collect();
        assert_eq!(named, [format!("user landmark {},{}", everest.lat, everest.lon)]);
    }

    #[test]
    fn earth_table_is_spread_and_varied() {
        let t = table("earth");
        assert!(t.len() >= 10);
        assert!(t.iter().any(|l| l.max_m <= 0.0 && l.min_m < -5000.0), "a trench");
        assert!(t.iter().any(|l| l.min_m > 3000.0), "a high place");
        assert!(t.iter().any(|l| l.lat < -60.0) && t.iter().any(|l| l.lat > 60.0), "both polar regions");
        assert!(t.iter().any(|l| l.lon < -90.0) && t.iter().any(|l| l.lon > 90.0), "both hemispheres");
    }
}
