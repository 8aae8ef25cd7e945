//! Input identity: a SHA-256 over what makes a pack what it is (each input
//! file's canonical path, length and modification time; the body, tier,
//! depth, codec and compression; extra landmarks, the void value and the
//! scene). Files are identified by metadata, not hashed, so `--if-unchanged`
//! costs a stat per input rather than a read of gigabytes; touching a file
//! forces a re-bake, which errs on the safe side.

use std::path::Path;

use planet_terrain::pack::Codec;
use sha2::{Digest, Sha256};

use crate::options::{BakeOptions, Region};

fn file_identity(path: &Path) -> String {
    let meta = std::fs::metadata(path).ok();
    let modified =
        meta.as_ref().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    format!(
        "{}|{}|{:?}",
        path.canonicalize().unwrap_or(path.to_owned()).display(),
        meta.map_or(0, |m| m.len()),
        modified
    )
}

/// The fingerprint written into the pack's header.
pub(crate) fn fingerprint(options: &BakeOptions, depth: u8, codec: Codec) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"planet-bake v1\n");
    for input in [Some(&options.dem), options.imagery.as_ref(), options.classes.as_ref()] {
        h.update(input.map(|p| file_identity(p)).unwrap_or_default().as_bytes());
        h.update(b"\n");
    }
    let r = options.body.ellipsoid().radii();
    h.update(
        format!(
            "{}|{:?}|{}|{depth}|{}|{}\n",
            options.body.name(),
            r,
            options.tier,
            codec.code(),
            options.compression_level
        )
        .as_bytes(),
    );
    for l in &options.landmarks {
        h.update(format!("{},{},{},{}\n", l.lat, l.lon, l.min_m, l.max_m).as_bytes());
    }
    if let Some(v) = options.void_value {
        h.update(format!("void {v}\n").as_bytes());
    }
    if let Some((_, text)) = &options.scene {
        h.update(b"scene\n");
        h.update(text.as_bytes());
    }
    h.finalize().into()
}

/// The fingerprint of a pack after a region patch: the pack's fingerprint
/// before it, chained with the patch's own inputs and box. A patched pack
/// therefore never matches the fingerprint of a plain bake of any inputs, so
/// `--if-unchanged` re-bakes it.
pub(crate) fn patch_fingerprint(previous: &[u8; 32], options: &BakeOptions, region: &Region) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"planet-bake patch v1\n");
    h.update(previous);
    h.update(format!("{:?}|{:?}|{:?}|{:?}\n", region.south, region.west, region.north, region.east).as_bytes());
    // The header's depth, codec and level are the pack's; the inputs are the patch's.
    h.update(fingerprint(options, 0, Codec::Heights));
    h.finalize().into()
}
