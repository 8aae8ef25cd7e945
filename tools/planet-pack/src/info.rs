//! `planet-pack info` and `verify`: one pack on its own, its header and
//! index summarised, or every rule of the format and every payload checked.
//!
//! The key decision: both read only through planet-terrain's reader, and
//! `info` tallies the index in one streaming pass over its pages, so a
//! planet's index is never held for a summary and `verify` can never
//! disagree with what the renderer would accept.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use planet_terrain::ground::LawSummary;
use planet_terrain::pack::Pack;

use crate::output;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Tiles per depth and payload bytes, in one streaming pass over the
/// index pages: a planet's index is not held in memory for a summary.
fn tally_entries(pack: &Pack) -> Result<(Vec<u64>, u64)> {
    let mut per_depth = vec![0u64; usize::from(pack.header().max_depth) + 1];
    let mut payload_bytes = 0u64;
    for e in pack.entries() {
        let e = e?;
        per_depth[usize::from(e.tile().depth())] += 1;
        payload_bytes += u64::from(e.payload_length);
    }
    Ok((per_depth, payload_bytes))
}

#[expect(
    clippy::too_many_lines,
    reason = "debt: the text form prints each PackInfo field by hand; to be derived from the typed PackInfo"
)]
pub(crate) fn info(pack: &Pack, as_json: bool, list_tiles: bool) -> Result<()> {
    let h = pack.header();
    let (per_depth, payload_bytes) = tally_entries(pack)?;
    let layout = pack.layout();
    let decoded_bytes = h.tile_count * h.codec.decoded_length() as u64;
    let ratio = decoded_bytes as f64 / payload_bytes.max(1) as f64;
    let radii = h.body.ellipsoid().radii();
    let c = h.coverage;
    if as_json {
        let tiles = if list_tiles {
            Some(pack.entries().map(|e| e.map(|e| output::TileEntry::from(&e))).collect::<Result<_, _>>()?)
        } else {
            None
        };
        let info = output::PackInfo {
            path: pack.path().map(|p| p.display().to_string()),
            version: h.version(),
            body: h.body.name().to_owned(),
            radii_m: [radii.x, radii.y, radii.z],
            tier: h.tier.clone(),
            codec: h.codec.code(),
            compression: "zstd",
            compression_level: h.compression_level,
            height_data_depth: h.height_data_depth,
            colour_data_depth: h.colour_data_depth,
            max_depth: h.max_depth,
            tile_count: h.tile_count,
            tiles_per_depth: per_depth,
            coverage: h.coverage,
            fingerprint: hex(&h.fingerprint),
            patches: h.patches.count,
            last_patch: h
                .patches
                .last
                .map(|l| output::LastPatchInfo { region: l.region, inputs_sha256_prefix: hex(&l.inputs) }),
            detail_law: h.detail.as_ref().map(LawSummary::of),
            file_bytes: pack.file_length(),
            index_bytes: h.payload_offset - h.index_offset,
            index_pages: output::IndexPages {
                root_bytes: layout.root_length(),
                directory_pages: layout.directories,
                leaf_pages: layout.leaves,
            },
            payload_bytes,
            decoded_bytes,
            compression_ratio: ratio,
            tiles,
        };
        outln!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(());
    }
    if let Some(path) = pack.path() {
        outln!("pack          {}", path.display());
    }
    outln!("body          {} (radii {} x {} x {} m)", h.body.name(), radii.x, radii.y, radii.z);
    outln!("tier          {}", h.tier);
    outln!("codec         {} ({})", h.codec.code(), codec_name(h.codec.code()));
    outln!("compression   zstd level {}", h.compression_level);
    outln!(
        "depths        heights measured to {}, colour to {}, stored to {}",
        h.height_data_depth,
        h.colour_data_depth,
        h.max_depth
    );
    outln!(
        "coverage      {}..{} N, {}..{} E{}",
        c.south,
        c.north,
        c.west,
        c.east,
        if c.is_global() { " (global)" } else { "" }
    );
    outln!("fingerprint   {}", hex(&h.fingerprint));
    match h.patches.last {
        None => outln!("patches       none (as baked)"),
        Some(l) => outln!(
            "patches       {}; the last over {},{},{},{} (S,W,N,E) from inputs {}..",
            h.patches.count,
            l.region.south,
            l.region.west,
            l.region.north,
            l.region.east,
            hex(&l.inputs)
        ),
    }
    match &h.detail {
        Some(law) => outln!("detail law    {}", LawSummary::of(law)),
        None => outln!("detail law    none recorded (version 2): measured when read; `planet-pack upgrade` records it"),
    }
    outln!("tiles         {}", h.tile_count);
    for (depth, count) in per_depth.iter().enumerate().filter(|(_, n)| **n > 0) {
        outln!("  depth {depth:>2}    {count}");
    }
    outln!(
        "index         version {}: a {} B root, {} directory and {} leaf pages",
        h.version(),
        layout.root_length(),
        layout.directories,
        layout.leaves
    );
    outln!(
        "bytes         {} file, {} index, {} payload ({:.2}x smaller than the {} decoded)",
        pack.file_length(),
        h.payload_offset - h.index_offset,
        payload_bytes,
        ratio,
        decoded_bytes
    );
    if list_tiles {
        outln!(
            "{:<16} {:>12} {:>8} {:>11} {:>11} {:>9} measured",
            "tile",
            "offset",
            "length",
            "min m",
            "max m",
            "error m"
        );
        for e in pack.entries() {
            let e = e?;
            outln!(
                "{:<16} {:>12} {:>8} {:>11.2} {:>11.2} {:>9.3} {}",
                e.tile().to_string(),
                e.payload_offset,
                e.payload_length,
                e.min_elevation,
                e.max_elevation,
                e.geometric_error,
                e.measured
            );
        }
    }
    Ok(())
}

fn codec_name(code: u8) -> &'static str {
    match code {
        0 => "heights",
        1 => "heights + classes",
        _ => "heights + classes + colour",
    }
}

pub(crate) fn verify(path: &Path, pack: &Pack) -> Result<()> {
    let progress = planet_cli::progress::JobProgress::new("tiles");
    let summary = pack.verify_with_progress(&mut |done, total| progress.update(done as usize, total as usize))?;
    outln!(
        "ok: {} — every rule holds; {} tiles, {} payload bytes decoded and checksummed",
        path.display(),
        summary.tiles,
        summary.payload_bytes
    );
    Ok(())
}
