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

/// The seconds left of a phase, once a rate means something: a twentieth
/// of the phase done since its first count and a second spent on it. (An
/// ETA from the first tile said "355 s" for a 9 s phase.)
fn eta_seconds(done_since_first: u64, left: u64, total: u64, elapsed: Duration) -> Option<f64> {
    let enough = done_since_first >= (total / 20).max(1) && elapsed >= Duration::from_secs(1);
    enough.then(|| left as f64 * elapsed.as_secs_f64() / done_since_first as f64)
}

/// A job's progress; safe to update from many threads.
#[derive(Debug)]
pub struct JobProgress {
    bar: Option<ProgressBar>,
    unit: &'static str,
    start: Instant,
    last_line: Mutex<Option<Instant>>,
    /// The current phase's first count and when it came (a phase starts
    /// when the total changes or the count goes back).
    phase: Mutex<Option<Phase>>,
}

#[derive(Clone, Copy, Debug)]
struct Phase {
    total: usize,
    first_done: usize,
    last_done: usize,
    at: Instant,
    /// Whether its bar is drawn (from its first count short of the end).
    shown: bool,
}

impl JobProgress {
    /// Counts `unit`s ("tiles"); a bar only when standard error is a terminal.
    pub fn new(unit: &'static str) -> JobProgress {
        JobProgress::with_terminal(unit, std::io::stderr().is_terminal())
    }

    /// As [`JobProgress::new`], saying whether to draw a bar.
    pub fn with_terminal(unit: &'static str, terminal: bool) -> JobProgress {
        let bar = terminal.then(|| {
            // Hidden until the first count: a stage that counts nothing
            // (opening a file) shows no empty "0/0" bar.
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            // Plain counts, as the stage lines print them.
            let template = format!("{{bar:30}} {{pos}}/{{len}} {unit}, {{rate}} {unit}/s{{eta_known}}");
            let style = ProgressStyle::with_template(&template)
                .expect("a valid template")
                .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0}", state.per_sec());
                })
                .with_key("eta_known", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let (pos, len) = (state.pos(), state.len().unwrap_or(0));
                    if let Some(eta) = eta_seconds(pos, len.saturating_sub(pos), len, state.elapsed()) {
                        let _ = write!(w, ", ETA {eta:.0} s");
                    }
                })
                .progress_chars("#>-");
            bar.set_style(style);
            bar
        });
        JobProgress { bar, unit, start: Instant::now(), last_line: Mutex::new(None), phase: Mutex::new(None) }
    }

    fn stamp(&self) -> String {
        format!("[{:>7.1}s]", self.start.elapsed().as_secs_f64())
    }

    /// A stage line, which also ends the phase counted before it: the
    /// next count starts a fresh one.
    pub fn stage(&self, message: &str) {
        let line = format!("{} {message}", self.stamp());
        let ended = self.phase.lock().expect("progress lock").take();
        if let (Some(bar), Some(p)) = (&self.bar, ended)
            && p.shown
            && p.last_done < p.total
        {
            bar.finish_and_clear();
        }
        match &self.bar {
            Some(bar) if !bar.is_hidden() && !bar.is_finished() => bar.println(line),
            _ => crate::report::message(&line),
        }
    }

    /// `done` of `total` units are finished. A stage line or another total
    /// starts a new phase: its own rate and ETA, and on a terminal a fresh
    /// bar (the audit after the bake, the merge's steps). Within a phase
    /// counts only go up: a count no higher than the last is a straggler
    /// from another worker and changes nothing, nor does any after the end.
    pub fn update(&self, done: usize, total: usize) {
        // Workers report out of order: within an unfinished phase a count
        // below the last is a straggler, not a new phase. The bar is set
        // under the same lock, so a straggler's calls cannot land after
        // the phase's end.
        let mut guard = self.phase.lock().expect("progress lock");
        let before = *guard;
        let new = match before {
            Some(p) if p.total == total => {
                if done <= p.last_done {
                    return;
                }
                false
            }
            _ => true,
        };
        let mut phase = match before {
            Some(p) if !new => Phase { last_done: done, ..p },
            _ => Phase { total, first_done: done, last_done: done, at: Instant::now(), shown: false },
        };
        let show = !phase.shown && done != total;
        phase.shown |= show;
        *guard = Some(phase);
        if let Some(bar) = &self.bar {
            // A new phase's bar is set while hidden and shown only once it
            // holds this count, and not at all for a phase whose first count
            // ends it: shown first, it drew "0/" the last phase's length,
            // and that line stayed on the terminal under the next stages.
            if new {
                if before.is_some_and(|p| p.shown && p.last_done < p.total) {
                    bar.finish_and_clear();
                }
                bar.set_draw_target(ProgressDrawTarget::hidden());
                bar.reset();
            }
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            if done == total {
                bar.finish_and_clear();
            } else if show {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            return;
        }
        let mut last = self.last_line.lock().expect("progress lock");
        let due = last.is_none_or(|t| t.elapsed() >= LOG_INTERVAL);
        if !due && done != total {
            return;
        }
        *last = Some(Instant::now());
        let elapsed = phase.at.elapsed();
        let since = (done - phase.first_done) as u64;
        let rate = since as f64 / elapsed.as_secs_f64().max(1e-9);
        let eta = eta_seconds(since, total.saturating_sub(done) as u64, total as u64, elapsed)
            .filter(|_| done != total)
            .map(|eta| format!(", ETA {eta:.0} s"))
            .unwrap_or_default();
        let line = format!("{} {done}/{total} {}, {rate:.0} {}/s{eta}", self.stamp(), self.unit, self.unit);
        crate::report::message(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (#32): on a terminal the bar finished with the bake's
    /// tiles and never drew the audit's; and an empty bar stood while a
    /// file opened. Each phase now starts a fresh bar, shown from its first
    /// count.
    #[test]
    fn on_a_terminal_each_phase_gets_a_fresh_bar_from_its_first_count() {
        let progress = JobProgress::with_terminal("tiles", true);
        let bar = progress.bar.clone().expect("a bar on a terminal");
        assert!(bar.is_hidden(), "no bar before a count");
        for done in [10, 100] {
            progress.update(done, 100);
        }
        assert!(bar.is_finished(), "the bake's phase ended");
        progress.update(5, 40);
        assert!(!bar.is_finished(), "the audit's phase has a bar of its own");
        assert_eq!((bar.position(), bar.length()), (5, Some(40)));
        let shown = |p: &JobProgress| p.phase.lock().unwrap().is_some_and(|p| p.shown);
        assert!(shown(&progress));
        progress.update(40, 40);
        // Regression (#32): a phase whose one count ends it (a layout of
        // fewer tiles than its reporting step) left "0/2046 tiles" on the
        // terminal; it now never shows a bar.
        progress.update(7, 7);
        assert!(
            !shown(&progress) && bar.is_hidden() && bar.is_finished(),
            "a phase done at its first count draws none"
        );
        progress.update(1, 9);
        assert!(shown(&progress) && (bar.position(), bar.length()) == (1, Some(9)), "the next phase draws one");
        // Workers report out of order: a straggler's lower count is not a
        // new phase, and nothing lands after the end.
        progress.update(6, 9);
        progress.update(4, 9);
        assert_eq!(bar.position(), 6, "a straggler moves nothing back");
        progress.update(9, 9);
        progress.update(8, 9);
        assert!(bar.is_finished(), "a straggler after the end draws nothing");
        // The next phase of the same total begins at a stage line.
        progress.stage("the next phase");
        progress.update(2, 9);
        assert!(shown(&progress) && !bar.is_finished() && bar.position() == 2, "a fresh bar after the stage");
    }

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

    /// Regression (#32): the first count line of a 9 s phase said "ETA 355
    /// s", a rate from one tile.
    #[test]
    fn an_eta_waits_for_a_twentieth_of_the_phase_and_a_second() {
        let second = Duration::from_secs(1);
        assert_eq!(eta_seconds(1, 2045, 2046, second * 2), None, "one tile says nothing");
        assert_eq!(eta_seconds(200, 1846, 2046, second / 2), None, "nor half a second");
        assert_eq!(eta_seconds(205, 1841, 2046, second * 2), Some(1841.0 * 2.0 / 205.0));
        assert_eq!(eta_seconds(1, 0, 1, second), Some(0.0), "a one-tile phase, done");
    }
}
