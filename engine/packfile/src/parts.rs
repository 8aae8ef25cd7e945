//! Finished tiles from several places, laid out as one pack. A sharded bake
//! leaves its tiles in shard files; the merge stages only the levels above
//! them, and assembling walks every source's entries in key order at once
//! (a heap of one cursor per source), so the merged pack is laid out by the
//! same rule as a single writer's, byte for byte, without the shards'
//! payloads ever being copied into a journal or their indexes held whole.
//!
//! The key decision: a source is anything that yields entries in key order
//! and payloads by entry ([`TileParts`]); a [`Pack`] is one. Every payload
//! copied from a source is checked against its entry's CRC on the way, and
//! a key present in two sources is an error naming both.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::PackError;
use crate::format::IndexEntry;
use crate::reader::Pack;

/// A source of finished tiles for [`crate::PackWriter::assemble_with`].
pub trait TileParts: Sync {
    /// What to call this source in an error (a shard file's path).
    fn part_name(&self) -> String;
    /// How many tiles it holds.
    fn part_tile_count(&self) -> u64;
    /// Its deepest tile's depth.
    fn part_max_depth(&self) -> u8;
    /// The entry of one key, if it holds that tile.
    fn part_entry(&self, key: planet_geo::address::TileKey) -> Result<Option<IndexEntry>, PackError>;
    /// Its entries, ascending by key.
    fn part_entries(&self) -> Box<dyn Iterator<Item = Result<IndexEntry, PackError>> + '_>;
    /// The stored payload of one of its entries, into `into`.
    fn part_payload(&self, entry: &IndexEntry, into: &mut Vec<u8>) -> Result<(), PackError>;
}

impl TileParts for Pack {
    fn part_name(&self) -> String {
        self.path().map_or_else(|| "a pack in memory".to_owned(), |p| p.display().to_string())
    }

    fn part_tile_count(&self) -> u64 {
        self.tile_count()
    }

    fn part_max_depth(&self) -> u8 {
        self.header().max_depth
    }

    fn part_entry(&self, key: planet_geo::address::TileKey) -> Result<Option<IndexEntry>, PackError> {
        self.entry(key.address()).map_err(|e| named(self, e))
    }

    fn part_entries(&self) -> Box<dyn Iterator<Item = Result<IndexEntry, PackError>> + '_> {
        Box::new(self.entries())
    }

    fn part_payload(&self, entry: &IndexEntry, into: &mut Vec<u8>) -> Result<(), PackError> {
        let payload = self.payload(entry).map_err(|e| named(self, e))?;
        let computed = crc32fast::hash(&payload);
        if computed != entry.payload_checksum {
            let error = PackError::PayloadChecksum {
                tile: entry.key.address(),
                offset: entry.payload_offset,
                stored: entry.payload_checksum,
                computed,
            };
            return Err(named(self, error));
        }
        into.clear();
        into.extend_from_slice(&payload);
        Ok(())
    }
}

/// `error` naming the part's file, where it has one: a copy task's error
/// must say which part to bake again, not the pack it writes.
fn named(pack: &Pack, error: PackError) -> PackError {
    match pack.path() {
        Some(path) => error.in_file(path),
        None => error,
    }
}

type Cursor<'a> = Box<dyn Iterator<Item = Result<IndexEntry, PackError>> + 'a>;

/// Every key of `parts` and of `extra` (ascending) in one ascending walk,
/// reading only their indexes, each with the index of the part it came
/// from (`parts.len()` for `extra`): what a merge checks against the
/// bake's tile set and plan before it writes anything. A key in two places
/// is an error.
pub fn merged_keys<'a>(
    parts: &[&'a dyn TileParts],
    extra: Vec<u64>,
) -> impl Iterator<Item = Result<(usize, u64), PackError>> + 'a {
    let mut names: Vec<String> = parts.iter().map(|p| p.part_name()).collect();
    names.push("the merge's own levels".into());
    let mut cursors: Vec<Cursor<'a>> = parts.iter().map(|p| p.part_entries()).collect();
    let extra = extra.into_iter().map(|raw| {
        planet_geo::address::TileKey::from_raw(raw)
            .map(|key| IndexEntry {
                key,
                payload_offset: 0,
                payload_length: 0,
                payload_checksum: 0,
                min_elevation: 0.0,
                max_elevation: 0.0,
                geometric_error: 0.0,
                measured: false,
                voids: false,
            })
            .map_err(|e| PackError::BadSpec(e.to_string()))
    });
    cursors.push(Box::new(extra));
    merged(cursors, names).map(|r| r.map(|(k, e)| (k, e.key.raw())))
}

/// Every entry of `cursors` (each ascending by key) in one ascending walk,
/// with the index of the cursor it came from; a key yielded by two cursors
/// is an error naming both (`names`).
pub(crate) fn merged<'a>(
    mut cursors: Vec<Cursor<'a>>,
    names: Vec<String>,
) -> impl Iterator<Item = Result<(usize, IndexEntry), PackError>> + 'a {
    let mut heap = BinaryHeap::new();
    let mut heads: Vec<Option<IndexEntry>> = vec![None; cursors.len()];
    let mut failed: Option<PackError> = None;
    for (k, cursor) in cursors.iter_mut().enumerate() {
        match cursor.next() {
            Some(Ok(e)) => {
                heap.push(Reverse((e.key.raw(), k)));
                heads[k] = Some(e);
            }
            Some(Err(e)) => failed = failed.or(Some(e)),
            None => {}
        }
    }
    let mut previous: Option<(u64, usize)> = None;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        if let Some(e) = failed.take() {
            done = true;
            return Some(Err(e));
        }
        let Reverse((key, k)) = heap.pop()?;
        let entry = heads[k].take().expect("a heap item has its head");
        if let Some((_, from)) = previous.filter(|(last, _)| *last == key) {
            done = true;
            return Some(Err(PackError::BadContent {
                tile: entry.key.address(),
                reason: format!("held by two parts: {} and {}", names[from], names[k]),
            }));
        }
        match cursors[k].next() {
            Some(Ok(next)) if next.key.raw() <= key => {
                done = true;
                return Some(Err(PackError::BadContent {
                    tile: next.key.address(),
                    reason: format!("{}: entries out of key order", names[k]),
                }));
            }
            Some(Ok(next)) => {
                heap.push(Reverse((next.key.raw(), k)));
                heads[k] = Some(next);
            }
            Some(Err(e)) => failed = Some(e),
            None => {}
        }
        previous = Some((key, k));
        Some(Ok((k, entry)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use planet_geo::address::TileAddress;

    fn entry(tile: TileAddress) -> IndexEntry {
        IndexEntry {
            key: tile.key(),
            payload_offset: 0,
            payload_length: 1,
            payload_checksum: 0,
            min_elevation: 0.0,
            max_elevation: 0.0,
            geometric_error: 0.0,
            measured: false,
            voids: false,
        }
    }

    fn cursor(tiles: Vec<TileAddress>) -> Cursor<'static> {
        let mut entries: Vec<IndexEntry> = tiles.into_iter().map(entry).collect();
        entries.sort_by_key(|e| e.key);
        Box::new(entries.into_iter().map(Ok))
    }

    #[test]
    fn parts_interleave_in_key_order_and_a_shared_key_names_both_parts() {
        let roots = TileAddress::roots();
        let children: Vec<TileAddress> = roots.iter().flat_map(|r| r.children().unwrap()).collect();
        let a = cursor(vec![roots[0], roots[2], children[5], children[9]]);
        let b = cursor(vec![roots[1], children[0], children[23]]);
        let walked: Vec<(usize, u64)> = merged(vec![a, b], vec!["a".into(), "b".into()])
            .map(|r| r.map(|(k, e)| (k, e.key.raw())))
            .collect::<Result<_, _>>()
            .unwrap();
        let keys: Vec<u64> = walked.iter().map(|w| w.1).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
        assert_eq!(walked.len(), 7);
        assert_eq!(walked.iter().filter(|w| w.0 == 1).count(), 3);

        let a = cursor(vec![roots[0], children[3]]);
        let b = cursor(vec![children[3]]);
        let error = merged(vec![a, b], vec!["shard-0".into(), "shard-1".into()]).find_map(Result::err).unwrap();
        let text = error.to_string();
        assert!(text.contains("shard-0") && text.contains("shard-1"), "{text}");
    }
}
