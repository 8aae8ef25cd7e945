//! The clock line the camera panel shows: the instant drawn, UTC, and the
//! local apparent solar time under the camera.
//!
//! The key decision: local *apparent* solar time (the sun's hour angle),
//! not a time zone, so the line says where the sun stands over the ground
//! drawn, which is what the lighting shows.

use planet_terrain::camera::{Instant, local_solar_time_hours};
use planet_terrain::geo::body::Body;

/// The clock line: the instant drawn, UTC, and the local apparent solar
/// time at the point under the camera (`longitude_deg`).
pub fn clock_line(body: &Body, at: Instant, longitude_deg: f64) -> String {
    let utc = at.to_string().replace('T', " ").replace('Z', "");
    let solar = local_solar_time_hours(body, at, longitude_deg);
    let minutes = (solar * 60.0).floor() as u32 % (24 * 60);
    format!("UTC {utc}  SUN {:02}:{:02}", minutes / 60, minutes % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_line_shows_utc_and_local_solar_time() {
        let at = Instant::parse_rfc3339("2026-06-21T06:00:00Z").unwrap();
        let line = clock_line(&Body::earth(), at, 90.0);
        assert!(line.starts_with("UTC 2026-06-21 06:00:00  SUN "), "{line}");
        // Six hours east of Greenwich at 06:00 UTC: near noon (the equation
        // of time is under two minutes in late June).
        assert!(line.ends_with("SUN 11:58") || line.ends_with("SUN 11:59"), "{line}");
    }
}
