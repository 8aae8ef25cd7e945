//! The sky's clock in a window: real time times a rate the keys (or the
//! view panel) set, or paused.
//!
//! The key decision: a small set of rates (1x up to a day a second) the
//! keys step through, scaled by `--time-rate`, rather than a free number,
//! so `,` and `.` always land on round figures.

use planet_terrain::camera::Instant as UtcInstant;

/// Rates the sky's clock runs at: seconds of sky time per second.
pub(super) const RATES: [f64; 7] = [1.0, 10.0, 60.0, 600.0, 3600.0, 21_600.0, 86_400.0];

/// The sky's clock in a window: an instant, a rate (1x at first, scaled by
/// `--time-rate`), paused or not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Clock {
    pub(super) now: UtcInstant,
    pub(super) rate: usize,
    scale: f64,
    pub(super) paused: bool,
}

impl Clock {
    pub(super) fn new(now: UtcInstant, scale: f64) -> Clock {
        Clock { now, rate: 0, scale, paused: false }
    }

    pub(super) fn advance(&mut self, wall_seconds: f64) {
        if !self.paused {
            self.now = self.now.plus_seconds(wall_seconds * RATES[self.rate] * self.scale);
        }
    }

    pub(super) fn faster(&mut self) {
        self.rate = (self.rate + 1).min(RATES.len() - 1);
    }

    pub(super) fn slower(&mut self) {
        self.rate = self.rate.saturating_sub(1);
    }

    pub(super) fn label(&self) -> String {
        if self.paused { "TIME PAUSED".to_string() } else { format!("TIME X{}", RATES[self.rate] * self.scale) }
    }

    /// The rates as the view panel lists them.
    pub(super) fn labels(&self) -> Vec<String> {
        RATES.iter().map(|r| format!("x{}", r * self.scale)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_runs_at_its_rate_and_pauses() {
        let mut clock = Clock::new(UtcInstant::J2000, 1.0);
        clock.advance(2.0);
        assert_eq!(clock.now.seconds_since_j2000(), 2.0, "1x at first");
        clock.faster();
        clock.faster();
        clock.advance(1.0);
        assert_eq!(clock.now.seconds_since_j2000(), 62.0, "a minute a second");
        assert_eq!(clock.label(), "TIME X60");
        clock.paused = true;
        clock.advance(5.0);
        assert_eq!(clock.now.seconds_since_j2000(), 62.0);
        assert_eq!(clock.label(), "TIME PAUSED");
        for _ in 0..20 {
            clock.slower();
        }
        assert_eq!(clock.rate, 0, "never below 1x");
        for _ in 0..20 {
            clock.faster();
        }
        assert_eq!(RATES[clock.rate], 86_400.0, "at most a day a second");
    }
}
