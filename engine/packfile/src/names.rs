//! The names of the files beside a pack: where its writer stages, assembles
//! and locks, and where a patch keeps its journal.
//!
//! The key decision: the names are a pure function of the pack's path and
//! live apart from the writer, so a reader (which refuses a pack with a
//! patch pending) and a command checking its destination know them
//! without building the writer.

use std::path::{Path, PathBuf};

/// `path` with `suffix` added to its file name: where a pack's journal,
/// temporary file and a merge's records lie beside it.
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(suffix);
    path.with_file_name(name)
}

/// The journal a writer for `out` stages tiles in.
pub fn partial_path(out: &Path) -> PathBuf {
    sibling(out, ".partial")
}

/// The directory `out` lies in (`.` for a bare file name): where the
/// writer's scratch files and a bake's go, on the disk that holds the pack.
pub fn scratch_dir(out: &Path) -> &Path {
    out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Where a writer for `out` assembles the finished file before the rename.
pub fn tmp_path(out: &Path) -> PathBuf {
    sibling(out, ".tmp")
}

/// Where the lock of the pack at `pack` lives.
pub fn lock_path(pack: &Path) -> PathBuf {
    sibling(pack, ".lock")
}

/// The redo journal beside the pack at `pack`.
pub fn journal_path(pack: &Path) -> PathBuf {
    let mut name = pack.file_name().unwrap_or_default().to_owned();
    name.push(".patch-journal");
    pack.with_file_name(name)
}
