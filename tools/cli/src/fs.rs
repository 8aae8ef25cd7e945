//! Files appear whole at their path or not at all.
//!
//! The key decision: every file a tool writes (a report, statistics, a
//! scene, a picture) is written beside its destination under a `.partial`
//! name, flushed to disk, and renamed over the destination, so a killed
//! tool or a full disk never leaves a truncated file where a reader looks.
//! The temporary file is removed when anything fails.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Where the bytes of `path` are staged before the rename.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = partial_path(path);
    let written = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.with_context(|| format!("writing {}", path.display()))
}

/// Why no file can be put at `path`, the value of `flag`, if none can: it
/// is a directory, its directory does not exist, or nothing can be written
/// there (a read-only filesystem, no permission), as a probe file of its
/// own name that is made and removed again shows. Checked before any work,
/// so a long run does not fail at its last write (a pack's rename, a
/// report) with its product half in place.
pub fn unwritable_destination(flag: &str, path: &Path) -> Option<String> {
    let dir = planet_terrain::pack::writer::scratch_dir(path);
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
        assert!(!partial_path(&path).exists());
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
        assert!(!path.exists() && !partial_path(&path).exists());
    }
}
