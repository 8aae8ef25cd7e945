//! Input identity: a SHA-256 over what makes a pack what it is (the bytes of
//! each input; the body, tier, depth, codec and compression; extra
//! landmarks, the void value and the scene).
//!
//! The key decision: inputs are identified by their content, never by path
//! or modification time. Touching a file, or copying it elsewhere, leaves
//! the fingerprint alone; changing one byte changes it. That costs one
//! read of every input per bake, chunks hashed in parallel (`digest`; see
//! docs/PERFORMANCE.md for the measured rate), a small price beside the
//! bake itself, and it is what lets `--if-unchanged`, `--resume` and a
//! sharded bake's merge trust a fingerprint. A cluster's shards read the
//! inputs' digests from a manifest made once (`--inputs-digest`), checking
//! a sample of chunks, and reach the same fingerprint (docs/CLUSTER.md). The gdal crate does
//! not expose GDAL's file list for a dataset (GDALGetFileList), so besides
//! the named file the sidecars GDAL reads by naming convention are hashed
//! when present (`.aux.xml`, world files, `.prj`); the sources a VRT names
//! are not (the VRT's own text, which names them, is). An input in one of
//! GDAL's virtual file systems (`/vsicurl/`, `/vsis3/`, ...) is hashed the
//! same way, its bytes read through GDAL (`vsi`), so a DEM served over HTTP
//! gives the fingerprint (and the pack) of the same file on disk.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use planet_terrain::pack::Codec;
use sha2::{Digest, Sha256};

use crate::digest::{
    CHUNK_BYTES, FileDigest, MANIFEST_FORMAT, Manifest, ManifestFile, abandoned, checked_digest, file_digest,
    file_digest_until,
};
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

/// Every input file of a bake in the fingerprint's order: its role, its tag
/// ("file", or the sidecar's suffix: by role, never by path) and its path.
pub(crate) fn input_files(options: &BakeOptions) -> Vec<(&'static str, String, PathBuf)> {
    // A colour- or class-only patch has no DEM (an empty path).
    let dem = Some(options.dem.as_path()).filter(|_| options.has_dem());
    raster_files(dem, options.imagery.as_deref(), options.classes.as_deref())
}

/// [`input_files`] of these rasters.
fn raster_files(
    dem: Option<&Path>,
    imagery: Option<&Path>,
    classes: Option<&Path>,
) -> Vec<(&'static str, String, PathBuf)> {
    let mut files = Vec::new();
    for (role, input) in [("dem", dem), ("imagery", imagery), ("classes", classes)] {
        let Some(dataset) = input else { continue };
        for (k, file) in dataset_files(dataset).into_iter().enumerate() {
            let tag = if k == 0 { "file".to_owned() } else { format!("sidecar {}", sidecar_suffix(dataset, &file)) };
            files.push((role, tag, file));
        }
    }
    files
}

/// The digests of a bake's input files, in the fingerprint's order, with
/// each file's role and tag: the part of the fingerprint that reads the
/// inputs, kept apart so a bake can take it while it opens the rasters and
/// audits their landmarks (`Run::prepare`).
pub(crate) struct InputDigests(Vec<(&'static str, String, FileDigest)>);

/// The digests of the inputs' files. With `--inputs-digest` they come from
/// the manifest, each checked by its length and a sample of its chunks
/// (`digest`); the fingerprint is the same. Given up between chunks once
/// `stop` is set.
pub(crate) fn input_digests(options: &BakeOptions, stop: &AtomicBool) -> Result<InputDigests, BakeError> {
    let manifest = options.inputs_digest.as_deref().map(Manifest::read).transpose()?;
    let files = input_files(options);
    if let (Some(m), Some(path)) = (&manifest, &options.inputs_digest) {
        // A file the manifest lists that is gone now (a sidecar removed)
        // would change the fingerprint as surely as a changed byte.
        let roles: Vec<&str> = files.iter().map(|f| f.0).collect();
        let gone = m
            .files
            .iter()
            .find(|f| roles.contains(&f.role.as_str()) && !files.iter().any(|g| g.0 == f.role && g.1 == f.tag));
        if let Some(gone) = gone {
            return Err(BakeError::Manifest {
                path: path.to_owned(),
                reason: format!(
                    "the manifest lists {} ({} {}), which this bake's inputs do not have",
                    gone.name, gone.role, gone.tag
                ),
            });
        }
    }
    let salt = options.shard.map_or(0, |s| s.index);
    let mut digests = Vec::with_capacity(files.len());
    for (role, tag, path) in files {
        if stop.load(Ordering::Relaxed) {
            return Err(abandoned(&path));
        }
        let digest = match (&manifest, &options.inputs_digest) {
            (Some(m), Some(manifest_path)) => {
                let d = m.find(role, &tag).ok_or_else(|| BakeError::Manifest {
                    path: path.clone(),
                    reason: format!(
                        "the --inputs-digest manifest {} has no {role} {tag}; make it again with planet-bake digest",
                        manifest_path.display()
                    ),
                })?;
                checked_digest(&path, d, salt)?
            }
            _ => file_digest_until(&path, stop)?,
        };
        digests.push((role, tag, digest));
    }
    Ok(InputDigests(digests))
}

/// The fingerprint written into the pack's header, reading the inputs.
pub(crate) fn fingerprint(options: &BakeOptions, depth: u8, codec: Codec) -> Result<[u8; 32], BakeError> {
    Ok(fingerprint_of(options, &input_digests(options, &AtomicBool::new(false))?, depth, codec))
}

/// The fingerprint written into the pack's header, from the inputs'
/// digests.
pub(crate) fn fingerprint_of(options: &BakeOptions, digests: &InputDigests, depth: u8, codec: Codec) -> [u8; 32] {
    let mut h = Sha256::new();
    // The rules' version: v4 since provenance per sample (pack version 5,
    // void masks), so `--if-unchanged` bakes earlier packs of the same
    // inputs again.
    h.update(b"planet-bake v4\n");
    for role in ["dem", "imagery", "classes"] {
        h.update(format!("{role}\n").as_bytes());
        for (_, tag, digest) in digests.0.iter().filter(|f| f.0 == role) {
            h.update(format!("{tag}|").as_bytes());
            digest.feed(&mut h);
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
    h.finalize().into()
}

/// Reads every input whole and writes the digest manifest a sharded bake's
/// tasks take with `--inputs-digest` (`planet-bake digest ... --out OUT`);
/// returns how many files it lists.
pub fn write_inputs_manifest(
    dem: &Path,
    imagery: Option<&Path>,
    classes: Option<&Path>,
    out: &Path,
) -> Result<usize, BakeError> {
    let mut files = Vec::new();
    for (role, tag, path) in raster_files(Some(dem), imagery, classes) {
        let digest = file_digest(&path)?;
        files.push(ManifestFile { role: role.to_owned(), tag, name: path.display().to_string(), digest });
    }
    let manifest = Manifest { format: MANIFEST_FORMAT.to_owned(), chunk_bytes: CHUNK_BYTES, files };
    let json = serde_json::to_value(&manifest).expect("plain data serialises");
    planet_cli::fs::write_json(out, &json).map_err(|e| BakeError::Io {
        path: out.to_owned(),
        doing: "writing the manifest",
        cause: format!("{e:#}"),
    })?;
    Ok(manifest.files.len())
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
