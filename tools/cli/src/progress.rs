//! Progress of a long job (a bake, a verify) on standard error: a live bar
//! on a terminal, sparse plain lines otherwise.
//!
//! The key decision: the output adapts to where it goes, never to a flag. On
//! a terminal an `indicatif` bar redraws in place (count, rate, ETA) and
//! stage lines print above it; under CI, nohup or a scheduler's log file the
//! bar would be a wall of carriage returns, so the same calls print one
//! timestamped line per stage and a count line at most every ten seconds
//! (and at the end), which reads well in a log.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// Seconds between count lines when standard error is not a terminal.
const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// A job's progress; safe to update from many threads.
#[derive(Debug)]
pub struct JobProgress {
    bar: Option<ProgressBar>,
    unit: &'static str,
    start: Instant,
    last_line: Mutex<Option<Instant>>,
}

impl JobProgress {
    /// Counts `unit`s ("tiles"); a bar only when standard error is a terminal.
    pub fn new(unit: &'static str) -> JobProgress {
        JobProgress::with_terminal(unit, std::io::stderr().is_terminal())
    }

    /// As [`JobProgress::new`], saying whether to draw a bar.
    pub fn with_terminal(unit: &'static str, terminal: bool) -> JobProgress {
        let bar = terminal.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let template = format!("{{bar:30}} {{human_pos}}/{{human_len}} {unit}, {{rate}} {unit}/s, ETA {{eta}}");
            let style = ProgressStyle::with_template(&template)
                .expect("a valid template")
                .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0}", state.per_sec());
                })
                .progress_chars("#>-");
            bar.set_style(style);
            bar
        });
        JobProgress { bar, unit, start: Instant::now(), last_line: Mutex::new(None) }
    }

    fn stamp(&self) -> String {
        format!("[{:>7.1}s]", self.start.elapsed().as_secs_f64())
    }

    /// A stage line: above the bar on a terminal, a log line otherwise.
    pub fn stage(&self, message: &str) {
        let line = format!("{} {message}", self.stamp());
        match &self.bar {
            Some(bar) => bar.println(line),
            None => crate::report::message(&line),
        }
    }

    /// `done` of `total` units are finished.
    pub fn update(&self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            if done == total {
                bar.finish_and_clear();
            }
            return;
        }
        let mut last = self.last_line.lock().expect("progress lock");
        let due = last.is_none_or(|t| t.elapsed() >= LOG_INTERVAL);
        if !due && done != total {
            return;
        }
        *last = Some(Instant::now());
        let elapsed = self.start.elapsed().as_secs_f64();
        let rate = done as f64 / elapsed.max(1e-9);
        let eta = total.saturating_sub(done) as f64 / rate.max(1e-9);
        let line = format!("{} {done}/{total} {}, {rate:.0} {}/s, ETA {eta:.0} s", self.stamp(), self.unit, self.unit);
        crate::report::message(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_a_terminal_counts_print_at_most_every_interval_and_always_at_the_end() {
        let p = JobProgress::with_terminal("tiles", false);
        assert!(p.bar.is_none());
        p.update(1, 100);
        let first = p.last_line.lock().unwrap().expect("the first count prints");
        p.update(2, 100);
        assert_eq!(p.last_line.lock().unwrap().unwrap(), first, "the second, a moment later, does not");
        p.update(100, 100);
        assert_ne!(p.last_line.lock().unwrap().unwrap(), first, "the last always prints");
        assert!(JobProgress::with_terminal("tiles", true).bar.is_some());
    }
}
