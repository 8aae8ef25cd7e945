//! Input identity: a SHA-256 over what makes a pack what it is (the bytes of
//! each input; the body, tier, depth, codec and compression; extra
//! landmarks, the void value and the scene).
//!
//! The key decision: inputs are identified by their content, never by path
//! or modification time. Touching a file, or copying it elsewhere, leaves
//! the fingerprint alone; changing one byte changes it. That costs one
//! streaming read of every input per bake (see docs/PERFORMANCE.md for the
//! measured rate), a small price beside the bake itself, and it is what lets
//! `--if-unchanged` and `--resume` trust a fingerprint. The gdal crate does
//! not expose GDAL's file list for a dataset (GDALGetFileList), so besides
//! the named file the sidecars GDAL reads by naming convention are hashed
//! when present (`.aux.xml`, world files, `.prj`); the sources a VRT names
//! are not (the VRT's own text, which names them, is). An input in one of
//! GDAL's virtual file systems (`/vsicurl/`, `/vsis3/`, ...) is hashed the
//! same way, its bytes read through GDAL (`vsi`), so a DEM served over HTTP
//! gives the fingerprint (and the pack) of the same file on disk.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use planet_terrain::pack::Codec;
use sha2::{Digest, Sha256};

use crate::error::BakeError;
use crate::options::{BakeOptions, Region};

/// The files whose bytes stand for the dataset named `path`: the file
/// itself, then each conventional sidecar that exists.
fn dataset_files(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_owned()];
    let with_suffix = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let mut sidecars = vec![with_suffix(".aux.xml"), path.with_extension("wld"), path.with_extension("prj")];
    // The world file of `x.tif` is `x.tfw` (first and last letters + w) or `x.tifw`.
    if let Some(ext) = path.extension().and_then(|e| e.to_str()).filter(|e| e.len() >= 2) {
        let (first, last) = (&ext[..1], &ext[ext.len() - 1..]);
        sidecars.push(path.with_extension(format!("{first}{last}w")));
        sidecars.push(path.with_extension(format!("{ext}w")));
    }
    let exists = |p: &PathBuf| match crate::vsi::is_virtual(p) {
        true => p.to_str().and_then(crate::vsi::size).is_some(),
        false => p.is_file(),
    };
    files.extend(sidecars.into_iter().filter(exists));
    files
}

/// Feeds every byte of `path` to `h`, preceded by a tag and followed by the
/// length, so that two files' bytes can never run into each other.
fn hash_file(h: &mut Sha256, tag: &str, path: &Path) -> Result<(), BakeError> {
    let fail = |e: std::io::Error| {
        BakeError::Options(format!("{}: reading it to fingerprint the inputs: {e}", path.display()))
    };
    let (mut file, expected): (Box<dyn Read>, Option<u64>) = match path.to_str() {
        Some(name) if crate::vsi::is_virtual(path) => {
            (Box::new(crate::vsi::VsiFile::open(name).map_err(fail)?), crate::vsi::size(name))
        }
        _ => (Box::new(File::open(path).map_err(fail)?), None),
    };
    let mut buffer = vec![0u8; 1 << 20];
    let mut length = 0u64;
    h.update(tag.as_bytes());
    loop {
        let n = file.read(&mut buffer).map_err(fail)?;
        if n == 0 {
            break;
        }
        h.update(&buffer[..n]);
        length += n as u64;
    }
    if expected.is_some_and(|e| e != length) {
        return Err(fail(std::io::Error::other(format!(
            "read {length} bytes where the file has {}; it changed or the connection failed",
            expected.unwrap_or(0)
        ))));
    }
    h.update(format!("|{length}\n").as_bytes());
    Ok(())
}

/// The fingerprint written into the pack's header.
pub(crate) fn fingerprint(options: &BakeOptions, depth: u8, codec: Codec) -> Result<[u8; 32], BakeError> {
    let mut h = Sha256::new();
    h.update(b"planet-bake v2\n");
    for (role, input) in
        // A colour- or class-only patch has no DEM (an empty path).
        [
            ("dem", Some(&options.dem).filter(|_| options.has_dem())),
            ("imagery", options.imagery.as_ref()),
            ("classes", options.classes.as_ref()),
        ]
    {
        h.update(format!("{role}\n").as_bytes());
        let Some(dataset) = input else { continue };
        for (k, file) in dataset_files(dataset).iter().enumerate() {
            // Sidecars by their role (suffix), not their path.
            let tag = if k == 0 { "file".to_owned() } else { format!("sidecar {}", sidecar_suffix(dataset, file)) };
            hash_file(&mut h, &tag, file)?;
        }
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
    Ok(h.finalize().into())
}

/// A sidecar's name with the dataset's stem removed (`.aux.xml`, `.tfw`).
fn sidecar_suffix(dataset: &Path, sidecar: &Path) -> String {
    let name = sidecar.file_name().unwrap_or_default().to_string_lossy();
    let stem = dataset.file_stem().unwrap_or_default().to_string_lossy();
    name.strip_prefix(&*stem).unwrap_or(&name).to_owned()
}

/// The digest of a patch's inputs: the rasters' bytes and the flags that
/// shape them (the header's depth, codec and level are the pack's, so they
/// do not enter). Computed once per patch; the header keeps its first 16
/// bytes as the record of what the last patch was made from.
pub(crate) fn patch_inputs_digest(options: &BakeOptions) -> Result<[u8; 32], BakeError> {
    fingerprint(options, 0, Codec::Heights)
}

/// The fingerprint of a pack after a region patch: the pack's fingerprint
/// before it, chained with the patch's inputs digest and box. A patched
/// pack therefore never matches the fingerprint of a plain bake of any
/// inputs, so `--if-unchanged` re-bakes it.
pub(crate) fn patch_fingerprint(previous: &[u8; 32], inputs: &[u8; 32], region: &Region) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"planet-bake patch v1\n");
    h.update(previous);
    h.update(format!("{:?}|{:?}|{:?}|{:?}\n", region.south, region.west, region.north, region.east).as_bytes());
    h.update(inputs);
    h.finalize().into()
}
