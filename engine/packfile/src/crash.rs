//! Test hooks that kill the process inside a named crash window.
//!
//! The key decision: crash recovery is proven by really dying, not by
//! simulating a failure with an error return (which would run destructors,
//! flush buffers and unwind through cleanup code a real kill never reaches).
//! Each window of a bake or a patch (docs/planetpack.md, "Crash windows")
//! calls [`abort_point`] with its name; when the environment variable
//! `PLANET_ABORT_AT` names that window the process calls
//! `std::process::abort()` there, leaving exactly the files a kill at that
//! moment would. `PLANET_ABORT_AFTER_TILES=N` kills a writer after it staged
//! its N-th tile, so a test can prove the kill landed mid-bake, and
//! `PLANET_DELAY_PER_TILE_MS` slows staging so a test can cancel a running
//! bake from outside (a scheduler's `scancel`). All are
//! test hooks: nothing sets them in normal use, and unset they cost one
//! environment lookup per window (and per staged tile). They act only in a
//! build with the `testing` feature (the one the test suite runs); in a
//! production build every hook returns at once, so no variable set by
//! mistake can kill a user's bake.

/// The variable naming the window to die in.
pub const ABORT_AT: &str = "PLANET_ABORT_AT";
/// The variable giving the number of staged tiles to die after.
pub const ABORT_AFTER_TILES: &str = "PLANET_ABORT_AFTER_TILES";

/// The variable giving milliseconds to sleep after each staged tile, so a
/// test can cancel a bake (a scheduler's task) while it is surely running.
pub const DELAY_PER_TILE_MS: &str = "PLANET_DELAY_PER_TILE_MS";

/// Every window name a hook exists for, in the order a bake, then a patch,
/// passes through them.
pub const WINDOWS: &[&str] = &[
    "bake-stage",
    "bake-assemble",
    "bake-audit",
    "bake-rename",
    "bake-cleanup",
    "merge-copy",
    "patch-compute",
    "patch-journal",
    "patch-payloads",
    "patch-index",
    "patch-header",
    "patch-cleanup",
];

/// The variable naming the window to stop in (a test hook): the writer
/// makes the file `PLANET_PAUSE_FILE` names there and waits until it is
/// removed, so a test can run a second command against a writer that is
/// surely in that window (races driven by hooks, not by sleeps).
pub const PAUSE_AT: &str = "PLANET_PAUSE_AT";
/// The file a paused writer makes and waits on.
pub const PAUSE_FILE: &str = "PLANET_PAUSE_FILE";

/// Dies here when `PLANET_ABORT_AT` names `window`, and stops here while
/// `PLANET_PAUSE_AT` names it (test hooks).
pub fn abort_point(window: &str) {
    if !cfg!(feature = "testing") {
        return;
    }
    debug_assert!(WINDOWS.contains(&window), "unknown crash window {window}");
    if std::env::var_os(ABORT_AT).is_some_and(|w| w == window) {
        eprintln!("{ABORT_AT}={window}: aborting (test hook)");
        std::process::abort();
    }
    if std::env::var_os(PAUSE_AT).is_some_and(|w| w == window)
        && let Some(file) = std::env::var_os(PAUSE_FILE).map(std::path::PathBuf::from)
    {
        eprintln!("{PAUSE_AT}={window}: paused until {} is removed (test hook)", file.display());
        if std::fs::write(&file, window).is_ok() {
            while file.exists() {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// Sleeps `PLANET_DELAY_PER_TILE_MS` for each of `tiles` tiles just
/// written (a test hook, so a test can cancel a merge's copy task).
pub(crate) fn delay_tiles(tiles: usize) {
    if !cfg!(feature = "testing") {
        return;
    }
    if let Some(ms) = std::env::var(DELAY_PER_TILE_MS).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms.saturating_mul(tiles as u64)));
    }
}

/// Dies when this process has staged `staged` tiles and
/// `PLANET_ABORT_AFTER_TILES` is that number (a test hook), or at the first
/// staged tile when `PLANET_ABORT_AT=bake-stage`.
pub(crate) fn after_tiles(staged: usize) {
    if !cfg!(feature = "testing") {
        return;
    }
    if staged == 1 {
        abort_point("bake-stage");
    }
    delay_tiles(1);
    let limit = std::env::var(ABORT_AFTER_TILES).ok().and_then(|v| v.parse::<usize>().ok());
    if limit == Some(staged) {
        eprintln!("{ABORT_AFTER_TILES}={staged}: aborting (test hook)");
        std::process::abort();
    }
}
