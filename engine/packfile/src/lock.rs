//! One writer at a time: the lock a command holds on a pack while it
//! writes or replaces it.
//!
//! The key decision: an advisory exclusive lock (`flock`) on a file beside
//! the pack, `PACK.lock`, held from the writer's planning to its commit,
//! not a lock on the pack itself: a full bake replaces the pack's file by a
//! rename, and a lock on the old file would not keep a patch off the new
//! one. The lock file names its holder (process id and command), so a
//! second writer refuses naming it, or, asked to wait, says whom it waits
//! for. The holder removes the file before it lets go; a waiter that then
//! takes the lock of a removed file sees the path no longer names it and
//! tries again, so two writers never both hold it. The kernel lets go of a
//! killed holder's lock: a lock file left by a crash is taken at once.
//! The copy tasks of a sharded merge's stages write disjoint ranges of one
//! file at once: they share the lock ([`Sharing::Shared`]), which keeps
//! every other writer out while any runs, and leave the file for the
//! merge's commit, which holds it alone, to remove. Readers take no lock
//! (docs/planetpack.md, "Writers and readers").

use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::PackError;

/// Whether a second writer waits for the holder or refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contention {
    Refuse,
    Wait,
}

/// Whether a writer holds the lock alone or with others of its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    Exclusive,
    /// A sharded merge's copy tasks, writing disjoint ranges.
    Shared,
}

/// The lock beside a pack, held until dropped.
#[derive(Debug)]
pub struct WriterLock {
    file: std::fs::File,
    path: PathBuf,
    sharing: Sharing,
}

pub use crate::names::lock_path;

impl WriterLock {
    /// Takes the writers' lock of the pack at `pack` for `command` (what
    /// the lock file says of its holder). `waiting` hears, once, whom a
    /// waiting writer waits for.
    pub fn acquire(
        pack: &Path,
        command: &str,
        contention: Contention,
        waiting: impl FnMut(&str),
    ) -> Result<WriterLock, PackError> {
        WriterLock::acquire_as(pack, command, Sharing::Exclusive, contention, waiting)
    }

    /// [`WriterLock::acquire`], alone or shared with writers of one kind.
    pub fn acquire_as(
        pack: &Path,
        command: &str,
        sharing: Sharing,
        contention: Contention,
        mut waiting: impl FnMut(&str),
    ) -> Result<WriterLock, PackError> {
        let path = lock_path(pack);
        let io = |doing: &'static str| move |e: std::io::Error| PackError::io(doing)(e).in_file(&lock_path(pack));
        let mut told = false;
        loop {
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io("opening the writers' lock"))?;
            let tried = match sharing {
                Sharing::Exclusive => file.try_lock(),
                Sharing::Shared => file.try_lock_shared(),
            };
            match tried {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = holder(&mut file);
                    match contention {
                        Contention::Refuse => {
                            return Err(PackError::Busy { pack: pack.to_owned(), holder, lock: path.clone() });
                        }
                        Contention::Wait => {
                            if !told {
                                waiting(&holder);
                                told = true;
                            }
                            match sharing {
                                Sharing::Exclusive => file.lock(),
                                Sharing::Shared => file.lock_shared(),
                            }
                            .map_err(io("waiting for the writers' lock"))?;
                        }
                    }
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io("taking the writers' lock")(e)),
            }
            // The holder before us removed the file it locked: ours is
            // then a file no path names, and the lock is the new file's.
            let ours = file.metadata().map_err(io("reading the writers' lock"))?;
            let named = std::fs::metadata(&path).ok();
            if named.is_some_and(|m| m.dev() == ours.dev() && m.ino() == ours.ino()) {
                if sharing == Sharing::Exclusive {
                    file.set_len(0).map_err(io("writing the writers' lock"))?;
                    file.rewind().map_err(io("writing the writers' lock"))?;
                    writeln!(file, "pid {} {command}", std::process::id()).map_err(io("writing the writers' lock"))?;
                }
                return Ok(WriterLock { file, path, sharing });
            }
        }
    }
}

/// What a lock file says of its holder.
fn holder(file: &mut std::fs::File) -> String {
    let mut text = String::new();
    let _ = file.rewind().and_then(|()| file.read_to_string(&mut text));
    match text.trim() {
        "" => "another writer".to_owned(),
        said => said.to_owned(),
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Removed while still held, so no one can take a lock on a file
        // about to disappear and keep it; the lock goes with the file. A
        // shared holder leaves it to the others and to the exclusive
        // writer after them.
        if self.sharing == Sharing::Exclusive {
            let _ = std::fs::remove_file(&self.path);
        }
        let _ = self.file.unlock();
    }
}
