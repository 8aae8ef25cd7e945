//! The screenshot key (F12): the next frame is read back and written as a
//! PNG, and the message line says where.
//!
//! The key decision: a screenshot rides the path `--frames` takes (the
//! frame drawn with `ReadBack::Always`, `Session::save_last_frame` after
//! it), asked for by the key and done by the next redraw, so the picture is
//! exactly a frame the window presented, panels and all. It lands beside
//! the scene file (the work it shows) or else in the working directory,
//! named by the UTC wall-clock time, and never over an earlier picture.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};
use planet_render::scene::ReadBack;
use planet_terrain::camera::Instant;

use super::App;
use crate::session::{frame_path, read_back_for};

impl App {
    /// F12: the next frame is read back and written (see [`screenshot_path`]).
    pub(super) fn ask_for_screenshot(&mut self) {
        let dir = screenshot_dir(self.run.authoring.scene_file.as_deref());
        self.screenshot = Some(screenshot_path(&dir, SystemTime::now(), |path| path.exists()));
    }

    /// What this frame reads back: every frame with `--frames`, and the one
    /// a screenshot was asked for.
    pub(super) fn read_back(&self) -> ReadBack {
        if self.screenshot.is_some() { ReadBack::Always } else { read_back_for(self.run.frames.as_deref()) }
    }

    /// Writes what the frame just drawn read back: the `--frames` file, and
    /// the screenshot asked for (a copy of that file when both: the frame is
    /// read back once). A screenshot that cannot be written is said, not an
    /// error: the window goes on.
    pub(super) fn save_frame(&mut self) -> Result<()> {
        let Some(live) = &mut self.live else { return Ok(()) };
        let frame_file = self.run.frames.as_deref().map(|dir| frame_path(dir, self.frame));
        if let Some(file) = &frame_file {
            live.session.save_last_frame(file)?;
        }
        let Some(shot) = self.screenshot.take() else { return Ok(()) };
        let written = match &frame_file {
            Some(file) => std::fs::copy(file, &shot)
                .map(drop)
                .with_context(|| format!("copying {} to {}", file.display(), shot.display())),
            None => live.session.save_last_frame(&shot),
        };
        self.say(match written {
            Ok(()) => format!("screenshot written to {}", shot.display()),
            Err(e) => format!("no screenshot: {e:#}"),
        });
        Ok(())
    }
}

/// The directory screenshots go to: the scene file's (`--scene`), else
/// the working directory; absolute, so the message says where the picture
/// is whatever directory the viewer was started from.
pub fn screenshot_dir(scene_file: Option<&Path>) -> PathBuf {
    // Joining an absolute scene directory replaces the working one.
    let here = std::env::current_dir().unwrap_or_default();
    scene_file.and_then(Path::parent).map_or_else(|| here.clone(), |dir| here.join(dir))
}

/// Where a screenshot taken at `now` goes in `dir`:
/// `planet-view-YYYYMMDD-HHMMSS.png` by the UTC time, with `-2`, `-3`, ...
/// after it when that name is `taken` (two in one second).
pub fn screenshot_path(dir: &Path, now: SystemTime, taken: impl Fn(&Path) -> bool) -> PathBuf {
    let unix_seconds = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let at = Instant::from_civil(1970, 1, 1, 0, 0, 0.0).plus_seconds(unix_seconds as f64);
    let (year, month, day, hour, minute, second) = at.to_civil();
    let stem = format!("planet-view-{year:04}{month:02}{day:02}-{hour:02}{minute:02}{:02}", second.floor() as u32);
    (1..)
        .map(|n| dir.join(if n == 1 { format!("{stem}.png") } else { format!("{stem}-{n}.png") }))
        .find(|path| !taken(path))
        .expect("some name is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screenshots_go_beside_the_scene_else_in_the_working_directory() {
        let here = std::env::current_dir().expect("a working directory");
        let expected = [
            (Some("/work/scenes/alps.json"), PathBuf::from("/work/scenes")),
            (Some("scenes/alps.json"), here.join("scenes")),
            (Some("alps.json"), here.clone()),
            (None, here.clone()),
        ];
        for (scene, dir) in expected {
            assert_eq!(screenshot_dir(scene.map(Path::new)), dir, "{scene:?}");
        }
    }

    /// 2026-03-20 10:15:00 UTC.
    const AT: u64 = 1_774_001_700;

    #[test]
    fn screenshots_are_named_by_the_utc_time_and_never_overwrite() {
        let now = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(AT);
        let dir = Path::new("/work/scenes");
        let expected = [
            (vec![], "/work/scenes/planet-view-20260320-101500.png"),
            (vec!["planet-view-20260320-101500.png"], "/work/scenes/planet-view-20260320-101500-2.png"),
            (
                vec!["planet-view-20260320-101500.png", "planet-view-20260320-101500-2.png"],
                "/work/scenes/planet-view-20260320-101500-3.png",
            ),
        ];
        for (taken, path) in expected {
            let taken: Vec<PathBuf> = taken.into_iter().map(|name| dir.join(name)).collect();
            assert_eq!(screenshot_path(dir, now, |p| taken.iter().any(|t| t == p)), Path::new(path));
        }
        let a_second_on = now + std::time::Duration::from_millis(1999);
        assert_eq!(
            screenshot_path(dir, a_second_on, |_| false),
            Path::new("/work/scenes/planet-view-20260320-101501.png"),
            "whole seconds, not rounded"
        );
    }
}
