//! planet-pack: inspect, verify, sample and look at `.planetpack` files.
//!
//! A thin command-line layer over planet-terrain's reader: every rule it
//! reports is the reader's, so `verify` and the renderer can never disagree
//! about whether a pack is sound. Errors print their whole cause chain and
//! exit non-zero.
//!
//! This file is the flags (clap) and the dispatch, with the output checks
//! every command makes before it reads; each command's work is its own
//! module (`info` with `verify`, `upgrade`, `repair`, `sample`, `cut`,
//! `map`, `tile`, `points`, `export`).

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
mod info;
mod map;
mod npy;
mod output;
mod points;
mod repair;
mod sample;
mod slopes;
mod tile;
mod upgrade;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use planet_cli::args::{self, GeoPoint, Orientation};
use planet_cli::stack::PackOpener;
use planet_remote::{HttpPacks, RemoteOptions};
use planet_terrain::TileAddress;
use planet_terrain::pack::Coverage;

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
        what: planet_cli::map::What,
        /// The box drawn, S,W,N,E in degrees (default: the box of the
        /// regional packs above the stack's last global pack, with a
        /// margin; the whole body when the top pack is global).
        #[arg(long, value_parser = args::region, allow_hyphen_values = true, value_name = "S,W,N,E")]
        region: Option<Coverage>,
        /// Width of the map in pixels (its height follows from the box).
        #[arg(long, default_value_t = 1024, value_parser = map::map_width)]
        width: u32,
        /// The elevation ramp's span, MIN,MAX in metres (default: the
        /// map's own heights, the sea's colours below 0 m and the land's
        /// above), so maps of different places compare.
        #[arg(long, value_parser = map::elevation_range, allow_hyphen_values = true, value_name = "MIN,MAX")]
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
        Command::Info { pack, json, tiles } => info::info(&open(&pack)?, json, tiles),
        Command::Verify { pack } => info::verify(&pack, &open(&pack)?),
        Command::Repair { pack } => repair::repair(&pack),
        Command::Upgrade { pack, out } => {
            check_outputs(std::slice::from_ref(&pack), &[("--out", out.as_deref())])?;
            // A directory or a missing one found only at the rename left `OUT.tmp`.
            if let Some(problem) = out.as_deref().and_then(|o| planet_cli::fs::unwritable_destination("--out", o)) {
                anyhow::bail!(problem);
            }
            upgrade::upgrade(&pack, out.as_deref())
        }
        Command::Export(args) => export::export(&open_stack(&args.packs)?, &args),
        Command::Sample { packs, at, json, scene, detail } => {
            sample::sample(&open_stack(&packs)?, at.lat, at.lon, json, scene.as_deref(), detail.on)
        }
        Command::Tile { pack, key, png, heights, scale, detail } => {
            let tile: TileAddress = key.parse()?;
            check_outputs(
                std::slice::from_ref(&pack),
                &[("--png", png.as_deref()), ("--heights", heights.as_deref())],
            )?;
            if let Some(png) = png {
                tile::picture(&open(&pack)?, tile, &png, scale)?;
            }
            if let Some(out) = heights {
                let stack = open_stack(std::slice::from_ref(&pack))?;
                tile::tile_heights(&stack.with_detail(detail.on), tile, &out)?;
            }
            Ok(())
        }
        Command::Map { packs, png, what, region, width, range, detail } => {
            check_outputs(&packs, &[("--png", Some(&png))])?;
            let region = match region {
                Some(region) => region,
                None => {
                    let coverages: Vec<Coverage> = open_stack(&packs)?.packs().into_iter().map(|(_, c)| c).collect();
                    planet_cli::map::overview(what, &planet_cli::map::stack_coverage(&coverages), width).region
                }
            };
            let spec = planet_cli::map::MapSpec { what, region, width, detail: detail.on, range };
            map::draw_map(&opener, &packs, &spec, &png)
        }
        Command::Points { packs, points, out, spacing, detail } => {
            check_paths(&packs, &[("--points", &points)], &[("--out", Some(&out))])?;
            let points_path = points;
            let points = points::read_points(&points_path)?;
            let stack = open_stack(&packs)?;
            points::ground_at_points(&stack.with_detail(detail.on), &points, spacing, &out)
                .with_context(|| format!("reading the ground at the points of {}", points_path.display()))
        }
        Command::Cut { packs, at, alt, orientation, budget, sse, size, json, drawn_slopes, detail } => {
            let camera =
                CameraArgs { lat: at.lat, lon: at.lon, alt, heading: orientation.heading, pitch: orientation.pitch };
            let stack = open_stack(&packs)?;
            let coverages: Vec<Coverage> = stack.packs().into_iter().map(|(_, c)| c).collect();
            let slopes_over = drawn_slopes.then(|| planet_cli::map::stack_coverage(&coverages));
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

pub(crate) struct CameraArgs {
    lat: f64,
    lon: f64,
    alt: f64,
    heading: f64,
    pitch: f64,
}

/// Every flag and argument `planet-pack --help` lists says what it does.
#[cfg(test)]
#[test]
fn every_argument_says_what_it_does() {
    planet_cli::args::assert_every_argument_described(&<Cli as clap::CommandFactory>::command());
}
