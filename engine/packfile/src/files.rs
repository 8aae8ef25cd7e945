//! Files a command writes appear whole at their path, or stream into what
//! is already there when that is a stream.
//!
//! The key decision: a regular file is written under a staging name no
//! other file can have (hidden, beside it, made unique by the process and
//! a counter, and created exclusively, `O_EXCL`), flushed to disk and
//! renamed over the destination, so a killed command or a full disk never
//! leaves a truncated file where a reader looks, and no input, however it
//! is named, is ever the staging file. A destination that is a FIFO or a
//! character device (`--stats /dev/null`, `--png /dev/stdout`, a pipe to
//! another program) is written into, never renamed over: renaming replaced
//! the device node (as root, the system's `/dev/null`). Anything else that
//! is not a regular file (a directory, a socket, a block device) is
//! refused by name before a byte is written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What a destination path names now (links followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination {
    /// Nothing yet, or a regular file: written whole and renamed.
    File,
    /// A FIFO or a character device: written into.
    Stream(&'static str),
    /// Something no output may be written to (a directory, a socket, a
    /// block device).
    Refused(&'static str),
}

/// What `path` names, as a destination.
pub fn destination(path: &Path) -> Destination {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else { return Destination::File };
    let kind = meta.file_type();
    match () {
        _ if kind.is_file() => Destination::File,
        _ if kind.is_fifo() => Destination::Stream("a FIFO"),
        _ if kind.is_char_device() => Destination::Stream("a character device"),
        _ if kind.is_dir() => Destination::Refused("a directory"),
        _ if kind.is_block_device() => Destination::Refused("a block device"),
        _ if kind.is_socket() => Destination::Refused("a socket"),
        _ => Destination::Refused("neither a file nor a stream"),
    }
}

/// Staging files made by this process so far (part of their names).
static STAGED: AtomicU64 = AtomicU64::new(0);

/// A new, empty staging file beside `path`, created exclusively under a
/// hidden name unique to this process and call.
fn create_staging(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    loop {
        let n = STAGED.fetch_add(1, Ordering::Relaxed);
        let staging = dir.join(format!(".{name}.{}.{n}.partial", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&staging) {
            Ok(file) => return Ok((staging, file)),
            // A leftover of another process with our pid, long gone: the
            // next number.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Writes what `write` produces to `path`: whole (staged, synced, renamed)
/// for a regular file or a new one, into it for a FIFO or a character
/// device; refused for anything else. The staging file is removed when
/// anything fails.
pub fn write_whole(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    match destination(path) {
        Destination::Stream(_) => {
            let file = std::fs::OpenOptions::new().write(true).open(path)?;
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)?;
            out.flush()
        }
        Destination::Refused(kind) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is {kind}: nothing is written there; give a file path", path.display()),
        )),
        Destination::File => {
            let (staging, file) = create_staging(path)?;
            let written = (|| {
                let mut out = std::io::BufWriter::new(file);
                write(&mut out)?;
                let file = out.into_inner().map_err(|e| e.into_error())?;
                file.sync_all()?;
                std::fs::rename(&staging, path)
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&staging);
            }
            written
        }
    }
}

/// The names beside `out` that Planet's writers stage it at, or move it
/// to, whatever the output: a pack's partial file and assembled file, a
/// patch's journal, a pack set aside by a failed audit. No input may have
/// one of them (`planet_cli::paths`).
pub fn staging_names(out: &Path) -> Vec<PathBuf> {
    vec![
        crate::names::partial_path(out),
        crate::names::tmp_path(out),
        crate::names::journal_path(out),
        crate::names::lock_path(out),
        out.with_extension("rejected"),
    ]
}
