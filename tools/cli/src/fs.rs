//! Files appear whole at their path or not at all.
//!
//! The key decision: every file a tool writes (a report, statistics, a
//! scene, a picture) goes through `planet_terrain::files::write_whole`:
//! staged beside its destination under a name no other file has, flushed
//! to disk and renamed over the destination, so a killed tool or a full
//! disk never leaves a truncated file where a reader looks and no input is
//! ever written over; a FIFO or a device there is written into, never
//! replaced. The staging file is removed when anything fails.

use std::path::Path;

use anyhow::{Context, Result};

/// Writes `bytes` to `path` atomically (a staging file no other file can
/// be, fsync, rename), or into the FIFO or character device there
/// (`planet_terrain::files`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    planet_terrain::files::write_whole(path, |out| out.write_all(bytes))
        .with_context(|| format!("writing {}", path.display()))
}

/// Why no file can be put at `path`, the value of `flag`, if none can: it
/// is a directory, its directory does not exist, or nothing can be written
/// there (a read-only filesystem, no permission), as a probe file of its
/// own name that is made and removed again shows. Checked before any work,
/// so a long run does not fail at its last write (a pack's rename, a
/// report) with its product half in place.
pub fn unwritable_destination(flag: &str, path: &Path) -> Option<String> {
    let dir = planet_terrain::pack::names::scratch_dir(path);
    if path.is_dir() {
        return Some(format!("{flag} {} is a directory; give a file path", path.display()));
    }
    if !dir.is_dir() {
        return Some(format!(
            "{flag} {}: its directory {} does not exist; create it first",
            path.display(),
            dir.display()
        ));
    }
    // Never a name a tool writes (a pack's staging files are resumable).
    let probe = dir.join(format!(".planet-write-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
        Err(e) => Some(format!("{flag} {}: nothing can be written in {}: {e}", path.display(), dir.display())),
    }
}

/// Writes a JSON value, pretty-printed with a final newline, atomically.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).context("formatting JSON")? + "\n";
    write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_no_partial() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        std::fs::write(&path, "old").unwrap();
        write_json(&path, &serde_json::json!({"tiles": 3})).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\n  \"tiles\": 3\n}\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the staging file is gone");
    }

    /// Regression (#50): `--stats FIFO` (and a device node) was replaced by
    /// a regular file. A stream is written into and stays what it was.
    #[test]
    fn a_fifo_is_written_into_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("stats.fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_json(&fifo, &serde_json::json!({"frames": 2})).unwrap();
        assert_eq!(reader.join().unwrap(), b"{\n  \"frames\": 2\n}\n");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing staged beside it");
        // A directory (or a socket, a block device) is refused by name.
        let error = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(format!("{error:#}").contains("is a directory"), "{error:#}");
    }

    /// A staging name is never an existing file's: one that is there is
    /// left alone (it may be an input named like a staging file).
    #[test]
    fn staging_never_touches_a_file_that_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("map.png");
        let bystanders = ["map.png.partial", ".map.png.partial", "map.png.tmp"];
        for name in bystanders {
            std::fs::write(dir.path().join(name), name).unwrap();
        }
        write_atomic(&path, b"png").unwrap();
        for name in bystanders {
            assert_eq!(std::fs::read_to_string(dir.path().join(name)).unwrap(), name);
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"png");
    }

    /// Regression (#31): a `--report` on a read-only filesystem was found
    /// unwritable only after the pack was in place. /proc takes no new file,
    /// not even from root.
    #[test]
    fn a_directory_nothing_can_be_written_in_is_found_before_any_work() {
        let problem = unwritable_destination("--report", Path::new("/proc/self/report.json")).expect("refused");
        assert!(problem.starts_with("--report /proc/self/report.json: nothing can be written in"), "{problem}");
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(unwritable_destination("--report", &dir.path().join("ok.json")), None);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the probe is gone");
    }

    #[test]
    fn a_failed_write_leaves_neither_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing-dir").join("report.json");
        let error = write_atomic(&path, b"x").unwrap_err();
        assert!(format!("{error:#}").contains("report.json"), "{error:#}");
        assert!(!path.exists() && !path.parent().unwrap().exists());
    }
}
