//! No command writes over what it reads, or over what it just wrote.
//!
//! The key decision: paths are compared by the file they name, not by how
//! they are spelt. A path that exists is its device and inode after
//! following links (`dem.tif`, `./dem.tif`, a hard link and a symbolic link
//! to it are one file); a path that does not exist yet is its directory's
//! identity and its name, so two outputs spelt differently into one new
//! file still meet. Every binary calls [`check_paths`] once with every
//! path it will read and write, before any work, so a refusal costs nothing
//! and leaves everything as it was. The same call refuses an input that is
//! there but is not a file (a FIFO blocks its reader until a writer comes,
//! a device reads without end, a directory is no raster), by its type,
//! before anything opens it.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A path a command reads or writes, with the flag (or argument) that named
/// it: what a refusal says.
#[derive(Clone, Copy, Debug)]
pub struct Named<'a> {
    pub flag: &'a str,
    pub path: &'a Path,
    /// A directory is a valid input here (GDAL reads some rasters, an
    /// ESRI grid for one, as a directory).
    pub directory_ok: bool,
    /// An output that is only ever renamed into place whole (a pack): a
    /// FIFO or a device there is refused, not written into.
    pub whole_only: bool,
}

/// `path`, as `flag` named it.
pub fn named<'a>(flag: &'a str, path: &'a Path) -> Named<'a> {
    Named { flag, path, directory_ok: false, whole_only: false }
}

/// A raster `flag` names for GDAL: a file, or a directory GDAL reads.
pub fn raster<'a>(flag: &'a str, path: &'a Path) -> Named<'a> {
    Named { flag, path, directory_ok: true, whole_only: false }
}

/// A pack (or another file renamed into place whole) that `flag` writes:
/// never a stream.
pub fn pack_output<'a>(flag: &'a str, path: &'a Path) -> Named<'a> {
    Named { flag, path, directory_ok: false, whole_only: true }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Identity {
    /// An existing file (links followed).
    File { device: u64, inode: u64 },
    /// A file not there yet: its directory (an existing one's identity, or
    /// its path made absolute) and its name.
    Planned { directory: Box<Identity>, name: OsString },
    /// A path whose directory cannot be told either: compared as spelt,
    /// made absolute.
    Spelt(PathBuf),
}

fn identity(path: &Path, links_left: u8) -> Identity {
    if let Ok(meta) = std::fs::metadata(path) {
        return Identity::File { device: meta.dev(), inode: meta.ino() };
    }
    // A link to a file not there yet writes that file.
    if links_left > 0
        && let Ok(target) = std::fs::read_link(path)
    {
        let base = path.parent().unwrap_or(Path::new("."));
        return identity(&base.join(target), links_left - 1);
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => match std::fs::metadata(dir) {
            Ok(meta) => Identity::Planned {
                directory: Box::new(Identity::File { device: meta.dev(), inode: meta.ino() }),
                name: name.to_os_string(),
            },
            Err(_) => Identity::Spelt(absolute),
        },
        _ => Identity::Spelt(absolute),
    }
}

/// Refuses a command whose inputs are there but are not files, whose
/// outputs name one of its inputs (or a name it stages an output at:
/// `planet_terrain::files::staging_names`), or each other, or whose
/// outputs are there but can be neither replaced nor written into (a
/// directory, a socket; a FIFO or a device for a pack). Inputs may name
/// one file twice (reading it twice harms nothing); an input not there
/// (or a URL) is left to whatever opens it to report. An output that is a
/// FIFO or a device is written into, so two outputs may name one.
pub fn check_paths(inputs: &[Named<'_>], outputs: &[Named<'_>]) -> Result<(), String> {
    for input in inputs {
        let Ok(meta) = std::fs::metadata(input.path) else { continue };
        let kind = meta.file_type();
        let Some(what) = planet_terrain::pack::reader::not_a_file(&kind) else { continue };
        if kind.is_dir() && input.directory_ok {
            continue;
        }
        return Err(format!("{} {} is {what}, not a file: give the path of a file", input.flag, input.path.display()));
    }
    let inputs_seen: Vec<(Named<'_>, Identity)> = inputs.iter().map(|i| (*i, identity(i.path, 8))).collect();
    let mut files = Vec::with_capacity(outputs.len());
    for output in outputs {
        use planet_terrain::files::{Destination, destination};
        match destination(output.path) {
            Destination::Refused(kind) => {
                return Err(format!(
                    "{} {} is {kind}: nothing is written there; give a file path",
                    output.flag,
                    output.path.display()
                ));
            }
            Destination::Stream(kind) if output.whole_only => {
                return Err(format!(
                    "{} {} is {kind}: a pack is a file, made beside its path and renamed over it; give a file path",
                    output.flag,
                    output.path.display()
                ));
            }
            Destination::Stream(_) => {}
            Destination::File => files.push(*output),
        }
        refuse_staging_collision(&inputs_seen, output)?;
    }
    let outputs_seen: Vec<(Named<'_>, Identity)> = files.iter().map(|o| (*o, identity(o.path, 8))).collect();
    for (k, (output, id)) in outputs_seen.iter().enumerate() {
        if let Some((input, _)) = inputs_seen.iter().find(|(_, other)| other == id) {
            return Err(format!(
                "{} {} is the same file as {} {}: a command never writes over what it reads; give another path",
                output.flag,
                output.path.display(),
                input.flag,
                input.path.display()
            ));
        }
        if let Some((earlier, _)) = outputs_seen[..k].iter().find(|(_, other)| other == id) {
            return Err(format!(
                "{} {} and {} {} are one file: each output needs its own path",
                earlier.flag,
                earlier.path.display(),
                output.flag,
                output.path.display()
            ));
        }
    }
    Ok(())
}

/// Refuses an input that is a file `output` is staged at beside it.
fn refuse_staging_collision(inputs: &[(Named<'_>, Identity)], output: &Named<'_>) -> Result<(), String> {
    for staging in planet_terrain::files::staging_names(output.path) {
        let id = identity(&staging, 8);
        if let Some((input, _)) = inputs.iter().find(|(_, other)| *other == id) {
            return Err(format!(
                "{} {} is {}, where {} {} is staged: a command never writes over what it reads; give the output \
                 another name or move the input",
                input.flag,
                input.path.display(),
                staging.display(),
                output.flag,
                output.path.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_spelt_or_linked_differently_is_still_its_input() {
        let dir = tempfile::tempdir().unwrap();
        let dem = dir.path().join("dem.tif");
        std::fs::write(&dem, "raster").unwrap();
        let hard = dir.path().join("hard.tif");
        std::fs::hard_link(&dem, &hard).unwrap();
        let soft = dir.path().join("soft.tif");
        std::os::unix::fs::symlink(&dem, &soft).unwrap();
        let dotted = dir.path().join(".").join("dem.tif");
        for out in [&dem, &hard, &soft, &dotted] {
            let error = check_paths(&[named("--dem", &dem)], &[named("--out", out)]).unwrap_err();
            assert!(error.starts_with(&format!("--out {} is the same file as --dem", out.display())), "{error}");
        }
        let other = dir.path().join("earth.planetpack");
        assert_eq!(check_paths(&[named("--dem", &dem)], &[named("--out", &other)]), Ok(()));
    }

    #[test]
    fn two_outputs_into_one_new_file_are_refused_however_spelt() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("tile.png");
        let same = dir.path().join("sub").join("..").join("tile.png");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let error = check_paths(&[], &[named("--png", &png), named("--heights", &same)]).unwrap_err();
        assert!(error.contains("--png") && error.contains("--heights") && error.contains("are one file"), "{error}");
        let heights = dir.path().join("tile.f32");
        assert_eq!(check_paths(&[], &[named("--png", &png), named("--heights", &heights)]), Ok(()));
        // A dangling link writes its target: it and the target are one file.
        let link = dir.path().join("link.png");
        std::os::unix::fs::symlink(&png, &link).unwrap();
        assert!(check_paths(&[], &[named("--png", &png), named("--shot", &link)]).is_err());
    }

    /// Regression (#31): `planet-pack info` on a FIFO blocked forever.
    #[test]
    fn an_input_that_is_no_file_is_refused_by_its_type() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("dem.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let error = check_paths(&[named("--dem", &fifo)], &[]).unwrap_err();
        assert!(error.contains("is a FIFO, not a file"), "{error}");
        let error = check_paths(&[named("--scene", dir.path())], &[]).unwrap_err();
        assert!(error.contains("is a directory, not a file"), "{error}");
        let error = check_paths(&[named("--path", Path::new("/dev/zero"))], &[]).unwrap_err();
        assert!(error.contains("is a device, not a file"), "{error}");
        assert_eq!(check_paths(&[named("--dem", &dir.path().join("not-there.tif"))], &[]), Ok(()));
    }

    /// #50: a stream output is written into (two outputs may name one), a
    /// pack is never a stream, and no input may be where an output is
    /// staged.
    #[test]
    fn streams_are_outputs_packs_are_files_and_staging_names_are_nobodys() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out.fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert_eq!(check_paths(&[], &[named("--stats", &fifo), named("--shot", &fifo)]), Ok(()));
        let error = check_paths(&[], &[pack_output("--out", &fifo)]).unwrap_err();
        assert!(error.contains("is a FIFO: a pack is a file"), "{error}");
        let out = dir.path().join("o.planetpack");
        let staged = dir.path().join("o.planetpack.partial");
        std::fs::write(&staged, "dem").unwrap();
        let error = check_paths(&[named("--dem", &staged)], &[pack_output("--out", &out)]).unwrap_err();
        assert!(error.starts_with(&format!("--dem {} is", staged.display())) && error.contains("is staged"), "{error}");
    }

    #[test]
    fn an_input_named_twice_is_read_twice() {
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("a.planetpack");
        std::fs::write(&pack, "pack").unwrap();
        assert_eq!(check_paths(&[named("PACK", &pack), named("PACK", &pack)], &[]), Ok(()));
    }
}
