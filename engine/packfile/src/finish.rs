//! Finishing a writer: its staged tiles, and the finished tiles of other
//! parts, laid out in key order in `OUT.tmp` (`assemble`), or only the
//! header and index laid out for copy tasks (`lay_out`).
//!
//! The key decision: nothing is laid out until every declared tile is
//! staged, and every source is walked in key order where it lies, never
//! copied into memory: the index pass and the payload pass (`assemble.rs`)
//! each walk the merged sources again, so finishing holds one index page
//! and one payload, whatever the pack's size.

use std::fs::File;

use crate::assemble::{PayloadSources, Payloads, index_pass};
use crate::commit::{Assembled, WriteSummary};
use crate::error::PackError;
use crate::format::IndexEntry;
use crate::index::IndexLayout;
use crate::parts::{TileParts, merged};
use crate::ranged::{CopyRange, LaidOut, cut_ranges, range_step};
use crate::spec::PackSpec;
use crate::writer::{PackWriter, tmp_path};

impl PackWriter {
    /// Lays the pack out in key order, writes it beside `out`, and renames
    /// it into place. Refuses while any declared tile is missing.
    pub fn finish(self) -> Result<WriteSummary, PackError> {
        self.assemble()?.commit()
    }

    /// Lays the pack out in key order in `OUT.tmp` and syncs it; `OUT` is
    /// untouched. Refuses while any declared tile is missing.
    pub fn assemble(self) -> Result<Assembled, PackError> {
        self.assemble_with(&[])
    }

    /// As [`PackWriter::assemble`], with the finished tiles of `others`
    /// (a sharded bake's shard files) laid out among this writer's own, in
    /// one key order: the bytes a single writer of all of them would write.
    /// A tile in two places, or a payload whose CRC fails, is an error.
    pub fn assemble_with(self, others: &[&dyn TileParts]) -> Result<Assembled, PackError> {
        self.assemble_reporting(others, &mut |_, _| {})
    }

    /// [`PackWriter::assemble_with`], telling `progress` (done, total tiles)
    /// how the payload pass, the bulk of the work, goes: every 4,096 tiles
    /// and at the end.
    pub fn assemble_reporting(
        self,
        others: &[&dyn TileParts],
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Assembled, PackError> {
        let out = self.out.clone();
        self.assemble_inner(others, Payloads::Copy(progress)).map(|(a, _)| a).map_err(|e| e.in_file(&out))
    }

    /// The first stage of a merge whose payloads separate tasks copy
    /// (`pack::ranged`): the header and index of the pack `others` make,
    /// written in `OUT.tmp` at its full length with the payloads left to
    /// copy, and the file's payloads cut into `tasks` ranges of about equal
    /// bytes. This writer stages no tiles of its own (they lie in its
    /// journal, which copy tasks on other nodes do not read).
    pub fn lay_out(self, others: &[&dyn TileParts], tasks: u32) -> Result<LaidOut, PackError> {
        let out = self.out.clone();
        if self.tile_count() > 0 || tasks == 0 {
            return Err(PackError::BadSpec(
                "a pack laid out for copy tasks takes every tile from its parts, and at least one task".into(),
            ));
        }
        let (assembled, ranges) =
            self.assemble_inner(others, Payloads::Leave { tasks }).map_err(|e| e.in_file(&out))?;
        Ok(LaidOut { summary: assembled.summary, ranges, _journal: assembled._journal })
    }

    fn assemble_inner(
        self,
        others: &[&dyn TileParts],
        payloads: Payloads<'_>,
    ) -> Result<(Assembled, Vec<CopyRange>), PackError> {
        let state = self.state.into_inner().expect("writer lock");
        let missing = state.tiles.pending_count();
        if missing > 0 {
            let (first, _) =
                state.tiles.pending_in(0..state.tiles.len(), 1).map_err(PackError::io("reading the staged set"))?;
            return Err(PackError::Incomplete { missing: missing as usize, first: first[0] });
        }
        state.partial.sync_all().map_err(PackError::io("syncing the partial file"))?;
        let tile_count = state.tiles.len() + others.iter().map(|p| p.part_tile_count()).sum::<u64>();
        let max_depth = assembled_max_depth(&self.spec, state.tiles.max_depth(), others);
        let mut header = self.spec.header_of(tile_count, max_depth)?;
        let layout = IndexLayout::for_tiles(header.tile_count).map_err(PackError::BadSpec)?;
        // Every source is walked in key order where it lies, never copied:
        // finishing holds one index page and one payload beyond it. This
        // writer's own staged tiles are source 0, their entries carrying
        // where the payload lies in the partial file.
        let walk = || {
            let own = state.tiles.iter().map(|item| {
                let (_, s) = item.map_err(PackError::io("reading the staged set"))?;
                let s = s.expect("checked complete");
                Ok(IndexEntry { payload_offset: s.payload_at, ..s.entry })
            });
            let mut cursors: Vec<Box<dyn Iterator<Item = Result<IndexEntry, PackError>> + '_>> = vec![Box::new(own)];
            cursors.extend(others.iter().map(|p| p.part_entries()));
            let mut names = vec![self.partial_path.display().to_string()];
            names.extend(others.iter().map(|p| p.part_name()));
            merged(cursors, names)
        };

        // Leaf pages are written where the layout puts them as they fill,
        // then the directory pages, the root and the header, then the
        // payloads in key order.
        let tmp = tmp_path(&self.out);
        let file = File::create(&tmp).map_err(PackError::io("creating the pack's temporary file"))?;
        let result = (|| -> Result<Vec<CopyRange>, PackError> {
            let step = match payloads {
                Payloads::Leave { tasks } => range_step(tile_count, tasks),
                Payloads::Copy(_) => u64::MAX,
            };
            let marks = index_pass(&file, &mut header, layout, walk(), step)?;
            match payloads {
                Payloads::Copy(progress) => {
                    let sources = PayloadSources { partial: &state.partial, others };
                    sources.copy(&file, header.payload_offset, walk(), tile_count, progress)?;
                    Ok(Vec::new())
                }
                Payloads::Leave { tasks } => {
                    let write_error = PackError::io("writing the pack");
                    file.set_len(header.file_length).and_then(|()| file.sync_all()).map_err(write_error)?;
                    Ok(cut_ranges(&marks, (tile_count, header.file_length), tasks))
                }
            }
        })();
        let ranges = match result {
            Ok(ranges) => ranges,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        };
        let assembled = Assembled {
            out: self.out,
            tmp,
            _journal: state.partial,
            partial_path: self.partial_path,
            summary: WriteSummary {
                tiles: tile_count,
                file_length: header.file_length,
                payload_bytes: header.file_length - header.payload_offset,
            },
        };
        Ok((assembled, ranges))
    }
}

/// The assembled pack's max_depth: its deepest tile's. A part of a
/// sharded bake that holds only levels above the data depths (a wave
/// file) still declares them, since a header's data depths never pass
/// its max_depth; a pack that holds its data depths has them already.
fn assembled_max_depth(spec: &PackSpec, own: u8, others: &[&dyn TileParts]) -> u8 {
    let declared = spec.height_data_depth.max(spec.colour_data_depth);
    others.iter().map(|p| p.part_max_depth()).fold(own.max(declared), std::cmp::Ord::max)
}
