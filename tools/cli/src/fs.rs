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
/// is a directory, or its directory does not exist. Checked before any
/// work, so a long run does not fail at its last write (a pack's rename, a
/// report) with its product half in place.
pub fn unwritable_destination(flag: &str, path: &Path) -> Option<String> {
    let dir = planet_terrain::pack::writer::scratch_dir(path);
    if path.is_dir() {
        Some(format!("{flag} {} is a directory; give a file path", path.display()))
    } else if !dir.is_dir() {
        Some(format!("{flag} {}: its directory {} does not exist; create it first", path.display(), dir.display()))
    } else {
        None
    }
}

/// Writes a JSON value, pretty-printed with a final newline, atomically.
pub fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
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

    #[test]
    fn a_failed_write_leaves_neither_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing-dir").join("report.json");
        let error = write_atomic(&path, b"x").unwrap_err();
        assert!(format!("{error:#}").contains("report.json"), "{error:#}");
        assert!(!path.exists() && !partial_path(&path).exists());
    }
}
