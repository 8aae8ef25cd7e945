//! `planet-pack upgrade`: a version 1, 2 or 3 pack made version 4 (the
//! paged index, today's detail law), in place or to `--out`.
//!
//! The key decision: the version bytes alone choose the path (so a pack
//! that fails to open for another reason says that reason), one writer at
//! a time holds the pack's lock, and the upgraded file replaces nothing
//! until it verified.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use planet_terrain::ground::{LawSummary, PackSource};
use planet_terrain::pack::Pack;

use crate::repair;

/// Before anything is read: the new pack is staged beside --out, so an
/// input named like a staging file (`new.planetpack.tmp --out
/// new.planetpack`) was truncated under the copy and the upgrade died.
fn check_upgrade_paths(pack: &Path, out: &Path) -> Result<()> {
    use planet_cli::paths::{named, pack_output};
    if out == pack {
        return Ok(());
    }
    planet_cli::paths::check_paths(&[named("PACK", pack)], &[pack_output("--out", out)]).map_err(anyhow::Error::msg)
}

pub(crate) fn upgrade(pack: &Path, out: Option<&Path>) -> Result<()> {
    use planet_terrain::pack::format::{
        VERSION, VERSION_FLAT_INDEX, VERSION_TILE_PROVENANCE, VERSION_TWIST_LAW, VERSION_WITHOUT_DETAIL_LAW,
    };
    if planet_cli::stack::is_remote(pack) {
        bail!("{}: upgrade rewrites a local file; download the pack first", pack.display());
    }
    let out = out.unwrap_or(pack);
    check_upgrade_paths(pack, out)?;
    // One writer at a time (#50): held until the upgraded pack is in place.
    let _lock = repair::writer_lock(out, "planet-pack upgrade")?;
    // An in-place upgrade killed in its journal windows finishes on a
    // re-run (#50: it asked for `repair`, and could leave its journal).
    if out == pack
        && let Some(done) = repair::finish_left_journal(pack)?
    {
        outln!("{}: {done}", pack.display());
    }
    // The version bytes decide, so a pack that fails to open for another
    // reason says that reason, not "version 1".
    let mut head = [0u8; 10];
    let read = std::fs::File::open(pack).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
    match read {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            bail!("{}: shorter than a pack's header (256 bytes): not a pack", pack.display())
        }
        other => other.with_context(|| format!("{}: reading the header", pack.display()))?,
    }
    let from = u16::from_le_bytes([head[8], head[9]]);
    match from {
        VERSION_FLAT_INDEX => {
            planet_terrain::pack::upgrade(pack, out, &mut |tmp| PackSource::measure_detail_law_at(tmp))?;
        }
        VERSION_WITHOUT_DETAIL_LAW | VERSION_TWIST_LAW if out == pack => {
            Pack::open(pack)?.verify()?;
            planet_terrain::pack::record_detail_law(pack, PackSource::measure_detail_law_at(pack)?)?;
        }
        VERSION_WITHOUT_DETAIL_LAW | VERSION_TWIST_LAW => {
            planet_terrain::pack::upgrade_copy(pack, out, &mut |tmp| PackSource::measure_detail_law_at(tmp))?;
        }
        _ => {
            let version = Pack::open(pack)?.header().version();
            if out != pack {
                bail!("{} is already version {version}; copy it instead", pack.display());
            }
            if version == VERSION_TILE_PROVENANCE {
                // Which samples were voids is not in a version 4 pack: only
                // its DEM knows. It reads as it is (tiles with voids not
                // measured), so nothing is rewritten.
                outln!(
                    "{}: version {version}, nothing to do: its tiles with voids read unmeasured; to keep \
                     their measured samples measured (version {VERSION}), bake it again from its DEM \
                     (`planet-bake --if-unchanged` does)",
                    pack.display()
                );
            } else {
                outln!("{}: already version {version}, nothing to do", pack.display());
            }
            return Ok(());
        }
    }
    let upgraded = Pack::open(out)?;
    let law = upgraded.header().detail.as_ref().map(LawSummary::of);
    let law = law.with_context(|| format!("{}: the upgraded pack records no detail law", out.display()))?;
    outln!(
        "{}: version {from} -> {} at {}: {} tiles, {} bytes, verified; detail law {law}",
        pack.display(),
        upgraded.header().version(),
        out.display(),
        upgraded.header().tile_count,
        upgraded.file_length(),
    );
    Ok(())
}
