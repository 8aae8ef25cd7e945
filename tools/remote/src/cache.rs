//! The block cache of a remote pack: a memory LRU, and optionally a
//! directory on disk with a byte budget shared by every pack cached there.
//!
//! The key decision: blocks are keyed by the pack's URL *and* its validator
//! (ETag or Last-Modified), so a replaced pack can never be served from the
//! old one's blocks, in this process or a later one. Each block on disk
//! carries its CRC-32 and is written to a temporary name and renamed, so a
//! torn or corrupt block is a miss, never bad bytes. The disk budget is kept
//! by evicting the least recently used blocks (file modification time,
//! refreshed on every hit) across the whole directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::RemoteError;

/// 64-bit FNV-1a: a stable name for a URL or validator (not a security
/// boundary: every block is checksummed by the pack format above it too).
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[derive(Debug)]
struct Memory {
    blocks: HashMap<u64, (Arc<Vec<u8>>, u64)>,
    bytes: u64,
    clock: u64,
}

/// The blocks of one pack version.
#[derive(Debug)]
pub(crate) struct BlockCache {
    memory: Mutex<Memory>,
    memory_budget: u64,
    disk: Option<Disk>,
}

#[derive(Debug)]
struct Disk {
    root: PathBuf,
    dir: PathBuf,
    budget: u64,
    /// Bytes on disk under `root`, as this process counts them.
    used: Mutex<u64>,
}

impl BlockCache {
    pub(crate) fn new(
        url: &str,
        validator: &str,
        memory_budget: u64,
        disk: Option<(&Path, u64)>,
    ) -> Result<BlockCache, RemoteError> {
        let disk = match disk {
            None => None,
            Some((root, budget)) => {
                let dir = root.join(format!("{:016x}-{:016x}", fnv(url), fnv(validator)));
                let cache_error = |cause| RemoteError::Cache { path: dir.clone(), cause };
                std::fs::create_dir_all(&dir).map_err(cache_error)?;
                let used = files_under(root).iter().map(|f| f.1).sum();
                Some(Disk { root: root.to_owned(), dir, budget, used: Mutex::new(used) })
            }
        };
        Ok(BlockCache {
            memory: Mutex::new(Memory { blocks: HashMap::new(), bytes: 0, clock: 0 }),
            memory_budget,
            disk,
        })
    }

    /// Block `index`, from memory or disk.
    pub(crate) fn get(&self, index: u64) -> Option<Arc<Vec<u8>>> {
        {
            let mut memory = self.memory.lock().expect("cache lock");
            memory.clock += 1;
            let clock = memory.clock;
            if let Some((block, used)) = memory.blocks.get_mut(&index) {
                *used = clock;
                return Some(Arc::clone(block));
            }
        }
        let disk = self.disk.as_ref()?;
        let path = disk.dir.join(format!("{index}.blk"));
        let bytes = std::fs::read(&path).ok()?;
        let (block, crc) = bytes.split_at(bytes.len().checked_sub(4)?);
        if crc32fast::hash(block).to_le_bytes() != crc {
            let _ = std::fs::remove_file(&path);
            return None;
        }
        // A hit is a use: the LRU order on disk is the modification time.
        let _ = std::fs::File::options().append(true).open(&path).and_then(|f| f.set_modified(SystemTime::now()));
        let block = Arc::new(block.to_vec());
        self.remember(index, Arc::clone(&block));
        Some(block)
    }

    /// Keeps a fetched block in memory and, with a disk cache, on disk.
    pub(crate) fn put(&self, index: u64, block: Arc<Vec<u8>>) {
        if let Some(disk) = &self.disk {
            disk.store(index, &block);
        }
        self.remember(index, block);
    }

    fn remember(&self, index: u64, block: Arc<Vec<u8>>) {
        let mut memory = self.memory.lock().expect("cache lock");
        memory.clock += 1;
        let clock = memory.clock;
        memory.bytes += block.len() as u64;
        if let Some((old, _)) = memory.blocks.insert(index, (block, clock)) {
            memory.bytes -= old.len() as u64;
        }
        while memory.bytes > self.memory_budget && memory.blocks.len() > 1 {
            let oldest = memory.blocks.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| *k);
            let Some(oldest) = oldest else { break };
            if let Some((old, _)) = memory.blocks.remove(&oldest) {
                memory.bytes -= old.len() as u64;
            }
        }
    }
}

impl Disk {
    fn store(&self, index: u64, block: &[u8]) {
        let path = self.dir.join(format!("{index}.blk"));
        let tmp = self.dir.join(format!("{index}.blk.{}.tmp", std::process::id()));
        let mut bytes = block.to_vec();
        bytes.extend_from_slice(&crc32fast::hash(block).to_le_bytes());
        // A cache that cannot be written is a slower session, not a failure.
        if std::fs::write(&tmp, &bytes).and_then(|()| std::fs::rename(&tmp, &path)).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        let mut used = self.used.lock().expect("cache lock");
        *used += bytes.len() as u64;
        if *used > self.budget {
            *used = evict(&self.root, self.budget * 9 / 10);
        }
    }
}

/// Every block file under `root`: path, size, last use.
fn files_under(root: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut files = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root) else { return files };
    for dir in dirs.flatten() {
        let Ok(entries) = std::fs::read_dir(dir.path()) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_file() {
                files.push((entry.path(), meta.len(), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
            }
        }
    }
    files
}

/// Removes the least recently used blocks under `root` until at most
/// `target` bytes remain; returns the bytes left.
fn evict(root: &Path, target: u64) -> u64 {
    let mut files = files_under(root);
    files.sort_by_key(|f| f.2);
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    for (path, size, _) in files {
        if total <= target {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= size;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupt_block_on_disk_is_a_miss_and_the_budget_evicts_the_oldest() {
        let dir = tempfile::tempdir().unwrap();
        let cache = BlockCache::new("http://x/p", "\"v1\"", 0, Some((dir.path(), 3 * 1000))).unwrap();
        for k in 0..3u64 {
            cache.put(k, Arc::new(vec![k as u8; 996]));
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let fresh = BlockCache::new("http://x/p", "\"v1\"", 0, Some((dir.path(), 3 * 1000))).unwrap();
        assert_eq!(fresh.get(1).unwrap()[..], vec![1u8; 996][..], "blocks survive the process");
        let other = BlockCache::new("http://x/p", "\"v2\"", 0, Some((dir.path(), 3 * 1000))).unwrap();
        assert!(other.get(1).is_none(), "another version of the pack never sees them");
        // Corrupt block 2 on disk: a miss, and the file is dropped.
        let path = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|d| d.unwrap().path().join("2.blk"))
            .find(|p| p.exists())
            .expect("block 2 of the first version is on disk");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[10] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        assert!(fresh.get(2).is_none() && !path.exists());
        // Over budget: the least recently used (block 0) goes first.
        fresh.put(3, Arc::new(vec![3; 996]));
        fresh.put(4, Arc::new(vec![4; 996]));
        assert!(fresh.get(0).is_none(), "the oldest block was evicted");
        assert!(files_under(dir.path()).iter().map(|f| f.1).sum::<u64>() <= 3000);
    }
}
