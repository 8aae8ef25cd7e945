//! planet-pack: inspect, verify, sample and look at `.planetpack` files.
//!
//! A thin command-line layer over planet-terrain's reader: every rule it
//! reports is the reader's, so `verify` and the renderer can never disagree
//! about whether a pack is sound. Errors print their whole cause chain and
//! exit non-zero.

/// `println!` that returns the write's error, so a closed pipe ends the
/// command quietly (see `planet_cli::report`) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout().lock(), $($arg)*)?
    };
}

mod cut;
mod export;
mod image;
mod output;
mod repair;
mod slopes;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use planet_cli::args::{self, GeoPoint, Orientation};
use planet_cli::map;
use planet_cli::stack::PackOpener;
use planet_remote::{HttpPacks, RemoteOptions};
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};
use planet_terrain::ground::{GroundStack, HeightFunction, HeightSource, LawSummary, PackSource, Provenance, locate};
use planet_terrain::layers::LayerStack;
use planet_terrain::pack::{Coverage, Pack};
use planet_terrain::{Geodetic, TileAddress};

#[derive(Parser, Debug)]
#[command(name = "planet-pack", version, about = "Inspect, verify, sample and look at .planetpack files")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    remote: args::Remote,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Header fields, depths, tile counts per depth, sizes and compression.
    Info {
        /// The pack (a path, or an http(s) URL).
        pack: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also list every index entry.
        #[arg(long)]
        tiles: bool,
    },
    /// Check every rule of the format and every payload checksum.
    Verify {
        /// The pack (a path, or an http(s) URL).
        pack: PathBuf,
    },
    /// Complete an interrupted patch from its journal and remove stale bake files.
    Repair {
        /// The pack file whose interrupted patch or bake to complete or clear.
        pack: PathBuf,
    },
    /// Convert a version 1 (flat index), 2 or 3 pack to version 4 (paged index, today's detail law), in
    /// place or to --out; the new file replaces nothing until it verified.
    Upgrade {
        /// The pack file (version 1, 2 or 3).
        pack: PathBuf,
        /// Write the upgraded pack here instead of replacing PACK.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The elevation (metres) where a person would stand at a latitude/longitude,
    /// on a stack of packs (later packs over earlier ones inside their coverage;
    /// the body's ellipsoid at 0 m, marked invented, where none covers the point).
    Sample {
        /// Packs, bottom first: each later one over the earlier ones inside
        /// its coverage (paths, or http(s) URLs).
        #[arg(required = true, value_name = "PACK")]
        packs: Vec<PathBuf>,
        #[command(flatten)]
        at: GeoPoint,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Apply this scene's layers (craters, pads, ...) first.
        #[arg(long)]
        scene: Option<PathBuf>,
        #[command(flatten)]
        detail: args::Detail,
    },
    /// The cut a camera would draw: nodes selected, culled and drawn, the
    /// effective screen error, depths, and the selection's CPU time, over a
    /// stack of packs as `sample` reads it.
    Cut {
        /// Packs, bottom first: each later one over the earlier ones inside
        /// its coverage (paths, or http(s) URLs).
        #[arg(required = true, value_name = "PACK")]
        packs: Vec<PathBuf>,
        #[command(flatten)]
        at: GeoPoint,
        /// Altitude above the ellipsoid, metres.
        #[arg(long, value_parser = args::altitude, allow_hyphen_values = true)]
        alt: f64,
        #[command(flatten)]
        orientation: Orientation,
        /// Node budget (at least the six roots). Default: planet-view's for
        /// the viewport (5,632 at 1920x1080, scaled by the square root of
        /// its pixels, at least 2,048).
        #[arg(long, value_parser = clap::value_parser!(u32).range(6..=1_000_000))]
        budget: Option<u32>,
        /// Screen-space error target, pixels.
        #[arg(long, default_value_t = 1.0, value_parser = args::screen_error)]
        sse: f64,
        /// Viewport, WIDTHxHEIGHT.
        #[arg(long, default_value = "1920x1080", value_parser = args::size)]
        size: (u32, u32),
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also the slopes of the triangles drawn over the packs' boxes
        /// (each drawn node's 33 x 33 lattice, as the renderer draws it):
        /// median, 99th and 99.9th percentile.
        #[arg(long)]
        drawn_slopes: bool,
        #[command(flatten)]
        detail: args::Detail,
    },
    /// An equirectangular picture of a stack of packs (read as `sample`
    /// reads it), of the whole body or of a --region box, coloured by
    /// elevation, provenance, stored depth or geometric error, with a legend.
    Map {
        /// Packs, bottom first: each later one over the earlier ones inside
        /// its coverage (paths, or http(s) URLs).
        #[arg(required = true, value_name = "PACK")]
        packs: Vec<PathBuf>,
        /// Output PNG path.
        #[arg(long)]
        png: PathBuf,
        /// What the colours say.
        #[arg(long, value_enum, default_value = "elevation")]
        what: map::What,
        /// The box drawn, S,W,N,E in degrees (default: the box of the
        /// regional packs above the stack's last global pack, with a
        /// margin; the whole body when the top pack is global).
        #[arg(long, value_parser = args::region, allow_hyphen_values = true, value_name = "S,W,N,E")]
        region: Option<Coverage>,
        /// Width of the map in pixels (its height follows from the box).
        #[arg(long, default_value_t = 1024, value_parser = map_width)]
        width: u32,
        /// The elevation ramp's span, MIN,MAX in metres (default: the
        /// map's own heights, the sea's colours below 0 m and the land's
        /// above), so maps of different places compare.
        #[arg(long, value_parser = elevation_range, allow_hyphen_values = true, value_name = "MIN,MAX")]
        range: Option<(f64, f64)>,
        #[command(flatten)]
        detail: args::Detail,
    },
    /// Write a hillshaded picture of one stored tile (--png), or the heights
    /// of any tile, past the stored depth too (--heights).
    #[command(group(clap::ArgGroup::new("output").required(true).multiple(true).args(["png", "heights"])))]
    Tile {
        /// The pack (a path, or an http(s) URL).
        pack: PathBuf,
        /// Tile address as face/depth/x/y, e.g. 3/7/45/102.
        key: String,
        /// Output PNG path (a stored tile's samples).
        #[arg(long)]
        png: Option<PathBuf>,
        /// Output .npy path: the tile's 131x131 heights in metres, '<f4', as
        /// the ground every consumer reads (resampled and, past the height
        /// data depth, with synthesized detail unless --detail off).
        #[arg(long)]
        heights: Option<PathBuf>,
        #[command(flatten)]
        detail: args::Detail,
        /// Pixels per sample.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=16))]
        scale: u32,
    },
    /// The stack as Cesium quantized-mesh-1.0 tiles for web globes
    /// (--quantized-mesh DIR: layer.json and {z}/{x}/{y}.terrain).
    Export(export::ExportArgs),
    /// The ground's elevation at many latitude/longitude points at once,
    /// read at one spacing (as `sample` reads one point at 1 m): how a DEM's
    /// grid is compared with what a pack draws there.
    Points {
        /// Packs, bottom first, as `sample` stacks them (paths, or http(s) URLs).
        #[arg(required = true, value_name = "PACK")]
        packs: Vec<PathBuf>,
        /// The points: little-endian f64 pairs, latitude then longitude in
        /// degrees, nothing else (16 bytes a point).
        #[arg(long, value_name = "FILE")]
        points: PathBuf,
        /// Output .npy path: one '<f4' elevation in metres per point, in order.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Read the ground at the depth whose sample spacing is at most this
        /// many metres.
        #[arg(long, default_value_t = 1.0, value_parser = args::positive_metres)]
        spacing: f64,
        #[command(flatten)]
        detail: args::Detail,
    },
}

fn main() -> ExitCode {
    planet_cli::exit_code(run(Cli::parse()))
}

fn run(cli: Cli) -> Result<()> {
    let r = &cli.remote;
    let http = HttpPacks::new(RemoteOptions::from_flags(
        r.cache.clone(),
        r.cache_bytes,
        r.request_timeout_s,
        r.read_deadline_s,
    ));
    let opener = PackOpener::reading_urls(http.opener());
    let open = |path: &Path| opener.open_pack(path);
    let open_stack = |paths: &[PathBuf]| opener.open_stack(paths)?.context("give at least one pack");
    match cli.command {
        Command::Info { pack, json, tiles } => info(&open(&pack)?, json, tiles),
        Command::Verify { pack } => verify(&pack, &open(&pack)?),
        Command::Repair { pack } => repair::repair(&pack),
        Command::Upgrade { pack, out } => {
            check_outputs(std::slice::from_ref(&pack), &[("--out", out.as_deref())])?;
            // A directory or a missing one found only at the rename left `OUT.tmp`.
            if let Some(problem) = out.as_deref().and_then(|o| planet_cli::fs::unwritable_destination("--out", o)) {
                anyhow::bail!(problem);
            }
            upgrade(&pack, out.as_deref())
        }
        Command::Export(args) => export::export(&open_stack(&args.packs)?, &args),
        Command::Sample { packs, at, json, scene, detail } => {
            sample(&open_stack(&packs)?, at.lat, at.lon, json, scene.as_deref(), detail.on)
        }
        Command::Tile { pack, key, png, heights, scale, detail } => {
            let tile: TileAddress = key.parse()?;
            check_outputs(
                std::slice::from_ref(&pack),
                &[("--png", png.as_deref()), ("--heights", heights.as_deref())],
            )?;
            if let Some(png) = png {
                picture(&open(&pack)?, tile, &png, scale)?;
            }
            if let Some(out) = heights {
                let stack = open_stack(std::slice::from_ref(&pack))?;
                tile_heights(&stack.with_detail(detail.on), tile, &out)?;
            }
            Ok(())
        }
        Command::Map { packs, png, what, region, width, range, detail } => {
            check_outputs(&packs, &[("--png", Some(&png))])?;
            let region = match region {
                Some(region) => region,
                None => {
                    let coverages: Vec<Coverage> = open_stack(&packs)?.packs().into_iter().map(|(_, c)| c).collect();
                    map::overview(what, &map::stack_coverage(&coverages), width).region
                }
            };
            let spec = map::MapSpec { what, region, width, detail: detail.on, range };
            draw_map(&opener, &packs, &spec, &png)
        }
        Command::Points { packs, points, out, spacing, detail } => {
            check_paths(&packs, &[("--points", &points)], &[("--out", Some(&out))])?;
            let points_path = points;
            let points = read_points(&points_path)?;
            let stack = open_stack(&packs)?;
            ground_at_points(&stack.with_detail(detail.on), &points, spacing, &out)
                .with_context(|| format!("reading the ground at the points of {}", points_path.display()))
        }
        Command::Cut { packs, at, alt, orientation, budget, sse, size, json, drawn_slopes, detail } => {
            let camera =
                CameraArgs { lat: at.lat, lon: at.lon, alt, heading: orientation.heading, pitch: orientation.pitch };
            let stack = open_stack(&packs)?;
            let coverages: Vec<Coverage> = stack.packs().into_iter().map(|(_, c)| c).collect();
            let slopes_over = drawn_slopes.then(|| map::stack_coverage(&coverages));
            let ground = stack.with_detail(detail.on);
            let budget = budget.map_or_else(|| planet_terrain::lod::viewport_budget(size), u64::from);
            cut::cut(&ground, camera, cut::CutAsked { budget: budget as usize, sse, size, json, slopes_over })
        }
    }
}

/// Refuses, before any work, outputs that name one of the packs read or
/// each other (`planet_cli::paths`).
fn check_outputs(packs: &[PathBuf], outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    check_paths(packs, &[], outputs)
}

/// [`check_outputs`] with inputs besides the packs, each named by its flag.
fn check_paths(packs: &[PathBuf], others: &[(&str, &Path)], outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    use planet_cli::paths::named;
    let mut inputs: Vec<_> = packs.iter().map(|p| named("PACK", p)).collect();
    inputs.extend(others.iter().map(|&(flag, p)| named(flag, p)));
    let outputs: Vec<_> = outputs.iter().filter_map(|&(flag, p)| p.map(|p| named(flag, p))).collect();
    planet_cli::paths::check_paths(&inputs, &outputs).map_err(anyhow::Error::msg)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

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

fn upgrade(pack: &Path, out: Option<&Path>) -> Result<()> {
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

fn info(pack: &Pack, as_json: bool, list_tiles: bool) -> Result<()> {
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

fn verify(path: &Path, pack: &Pack) -> Result<()> {
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

/// One path whether a scene is given or not: the height function (the
/// stack with the scene's layers, or with none) read where a person stands,
/// at the depth whose samples lie 1 m apart. A layer therefore changes
/// nothing, bit for bit, away from its footprint.
fn sample(stack: &GroundStack, lat: f64, lon: f64, as_json: bool, scene: Option<&Path>, detail: bool) -> Result<()> {
    let at = Geodetic::from_degrees(lat, lon, 0.0);
    let layers = match scene {
        Some(path) => planet_cli::scene::load_layer_stack(path, stack.body())?.0,
        None => LayerStack::new(),
    };
    let layers_applied = layers.len();
    let function = HeightFunction::new(Arc::new(stack.with_detail(detail)), layers);
    let read_depth = depth_for_spacing(&function, 1.0);
    let surface = GroundReader::new(&function, read_depth).surface(at)?;
    let elevation = surface.ground_m;
    let origin = stack.origin_at(at)?;
    let (provenance, tile) = (origin.provenance, origin.tile);
    let mut described = match (origin.filled, provenance) {
        // A void of the DEM the bake filled: not measured, whatever the
        // tile around it is.
        (Some(fill), _) => format!("a void of the DEM, {fill}"),
        (None, Provenance::Measured) => "measured".to_owned(),
        (None, Provenance::Resampled { from_depth }) => format!("resampled from depth {from_depth}"),
        (None, Provenance::Invented) => "invented: no pack covers it".to_owned(),
    };
    if let Some(above) = &origin.through_void_of {
        described = format!("{described}, seen through a void of {above}");
    }
    // Detail synthesized past the data depth adds invented relief finer
    // than the data over the ground the point stands on; the point is still
    // where that ground came from (measured inside a DEM's footprint).
    let read_tile = locate(function.body(), at, read_depth).0;
    let synthesized =
        provenance != Provenance::Invented && function.source().tile(read_tile)?.provenance == Provenance::Invented;
    if synthesized {
        described = format!("{described}, with detail synthesized past height data depth {}", tile.depth());
    }
    if as_json {
        let value = output::Sample {
            lat,
            lon,
            elevation_m: elevation,
            water_surface_m: surface.water_m,
            water_depth_m: surface.water_m.map(|_| surface.depth_m()),
            depth: tile.depth(),
            tile: tile.to_string(),
            pack: origin.pack,
            measured: provenance.is_measured() && origin.filled.is_none(),
            filled: origin.filled.is_some(),
            provenance: described,
            height_data_depth: stack.data_depth(),
            read_depth,
            packs: stack.packs().iter().map(|(name, _)| name.clone()).collect(),
            layers_applied,
            detail,
            detail_synthesized: synthesized,
        };
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        let water = match surface.water_m {
            Some(level) => format!(", under the sea: its surface at {level:.2} m, {:.2} m deep", surface.depth_m()),
            None => String::new(),
        };
        outln!("{elevation:.2} m at {lat}, {lon}{water} ({described}; tile {tile})");
    }
    Ok(())
}

/// `--range MIN,MAX`: two finite heights in metres, the first the lower.
fn elevation_range(text: &str) -> Result<(f64, f64), String> {
    let parse = |part: &str| part.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    match text.split(',').collect::<Vec<_>>()[..] {
        [lo, hi] => match (parse(lo), parse(hi)) {
            (Some(lo), Some(hi)) if lo < hi => Ok((lo, hi)),
            (Some(_), Some(_)) => Err(format!("'{text}': MIN must be below MAX")),
            _ => Err(format!("'{text}': MIN and MAX must be finite numbers of metres")),
        },
        _ => Err(format!("'{text}': give MIN,MAX in metres, e.g. 2000,4500")),
    }
}

fn map_width(text: &str) -> Result<u32, String> {
    Ok(args::count_in(text, 1..=u64::from(map::MAX_SIDE), "--width (map pixels)")? as u32)
}

fn draw_map(opener: &PackOpener, paths: &[PathBuf], spec: &map::MapSpec, out: &Path) -> Result<()> {
    let packs = opener.open_packs(paths)?;
    let started = std::time::Instant::now();
    let picture = map::render(&packs, spec)?;
    planet_cli::picture::write_png(out, &picture).with_context(|| format!("writing {}", out.display()))?;
    outln!(
        "wrote {} ({}x{} px with its legend, {} of {} pack(s), {:.2} s)",
        out.display(),
        picture.width,
        picture.height,
        spec.what.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default(),
        paths.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn picture(pack: &Pack, tile: TileAddress, out: &Path, scale: u32) -> Result<()> {
    let Some(entry) = pack.entry(tile)? else {
        let hint = match pack.deepest_stored_ancestor(tile)? {
            Some(a) => format!("; its deepest stored ancestor is {}", a.tile()),
            None => String::new(),
        };
        bail!("tile {tile} is not stored in this pack{hint}");
    };
    let decoded = pack.decode(&entry)?;
    let body = &pack.header().body;
    let spacing = body.sample_spacing_m(tile.depth());
    let picture = image::hillshade(&decoded, spacing, scale);
    planet_cli::picture::write_png(out, &picture).with_context(|| format!("writing {}", out.display()))?;
    outln!("wrote {} ({}x{} px, tile {tile})", out.display(), picture.width, picture.height);
    Ok(())
}

pub(crate) struct CameraArgs {
    lat: f64,
    lon: f64,
    alt: f64,
    heading: f64,
    pitch: f64,
}

/// The heights of any tile as NumPy's .npy (version 1.0): a header that
/// says little-endian f32 of shape (131, 131) in C order, padded so the
/// data starts on a 64-byte boundary, then the samples in stored order
/// (rows of constant j, apron included).
fn tile_heights(ground: &dyn HeightSource, tile: TileAddress, out: &Path) -> Result<()> {
    let t = ground.tile(tile).with_context(|| format!("reading tile {tile}"))?;
    let n = planet_terrain::geo::address::TILE_STORED_SAMPLES;
    let bytes = npy_f32(&t.heights, (n as usize, n as usize));
    planet_cli::fs::write_atomic(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    let provenance = match t.provenance {
        Provenance::Measured => "measured".to_owned(),
        Provenance::Resampled { from_depth } => format!("resampled from depth {from_depth}"),
        Provenance::Invented => "invented".to_owned(),
    };
    let voids = match &t.voids {
        Some(v) => format!("; {} samples voids, {}", v.samples.iter().filter(|&&s| s).count(), v.fill),
        None => String::new(),
    };
    outln!("wrote {} ({n}x{n} f32 heights of tile {tile}, {provenance}{voids})", out.display());
    Ok(())
}

/// Latitude/longitude pairs (degrees) from a file of little-endian f64
/// pairs, each checked: a bad one is named by its index.
fn read_points(path: &Path) -> Result<Vec<Geodetic>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if bytes.is_empty() {
        bail!("{}: the file is empty; give at least one point (f64 latitude, f64 longitude)", path.display());
    }
    if bytes.len() % 16 != 0 {
        bail!(
            "{}: {} bytes is not a whole number of points (16 bytes each: f64 latitude, f64 longitude); \
             the last {} bytes are left over",
            path.display(),
            bytes.len(),
            bytes.len() % 16
        );
    }
    let f64_at = |k: usize| f64::from_le_bytes(bytes[k..k + 8].try_into().expect("8 bytes"));
    (0..bytes.len() / 16)
        .map(|k| {
            let (lat, lon) = (f64_at(16 * k), f64_at(16 * k + 8));
            if !(lat.is_finite() && lon.is_finite() && (-90.0..=90.0).contains(&lat) && (-360.0..=360.0).contains(&lon))
            {
                bail!(
                    "{}: point {k} (byte {}) is latitude {lat}, longitude {lon}: latitude must be within -90..=90 \
                     and longitude within -360..=360 degrees",
                    path.display(),
                    16 * k
                );
            }
            Ok(Geodetic::from_degrees(lat, lon, 0.0))
        })
        .collect()
}

/// The elevation at every point, read at the depth of `spacing`, as .npy.
fn ground_at_points(ground: &dyn HeightSource, points: &[Geodetic], spacing: f64, out: &Path) -> Result<()> {
    let depth = depth_for_spacing(ground, spacing);
    let mut reader = GroundReader::new(ground, depth);
    let heights = points
        .iter()
        .enumerate()
        .map(|(k, &at)| {
            reader.height(at).map(|h| h as f32).with_context(|| {
                let (lat, lon) = (at.latitude.to_degrees(), at.longitude.to_degrees());
                format!("point {k} (byte {}): latitude {lat}, longitude {lon}", 16 * k)
            })
        })
        .collect::<Result<Vec<f32>>>()?;
    let bytes = npy_f32(&heights, (heights.len(), 1));
    planet_cli::fs::write_atomic(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    let spacing_read = ground.body().sample_spacing_m(depth);
    outln!("wrote {} ({} points read at depth {depth}, {spacing_read:.2} m spacing)", out.display(), heights.len());
    Ok(())
}

fn npy_f32(values: &[f32], (rows, columns): (usize, usize)) -> Vec<u8> {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {columns}), }}");
    // magic (6) + version (2) + length (2) + header + newline: a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = Vec::with_capacity(10 + header.len() + 4 * values.len());
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes
}

/// Every flag and argument `planet-pack --help` lists says what it does.
#[cfg(test)]
#[test]
fn every_argument_says_what_it_does() {
    planet_cli::args::assert_every_argument_described(&<Cli as clap::CommandFactory>::command());
}
