//! planet-cli: the plumbing `planet-bake`, `planet-pack` and `planet-view`
//! share, so each binary is its flags and its job.
//!
//! The key decision: a rule a user meets on the command line (how a
//! longitude is checked, what a size looks like, how an error and its causes
//! print, how a file appears at its path) exists once here, so the three
//! tools cannot drift apart. Nothing here knows about GPUs or GDAL.
//!
//! [`args`] holds the value parsers and shared clap groups, [`report`] the
//! error-chain printer and exit codes, [`fs`] atomic writes, [`paths`] the
//! check that no output is an input or another output, [`scene`] scene
//! loading, [`stack`] opening `PACK...` as one ground, [`font`] the built-in
//! bitmap font, [`picture`] rasters, palettes, legends and PNGs, [`map`] the
//! maps of a stack that `planet-pack map` and the bake's report draw, [`shard`]
//! which part of a sharded bake a process bakes (`planet-bake shard I/N|auto`),
//! [`progress`] a long job's progress (a bar on a terminal, log lines otherwise),
//! [`memory`] the machine's memory and byte counts for people.

pub mod args;
pub mod font;
pub mod fs;
pub mod map;
mod map_colours;
mod map_overlays;
pub mod memory;
pub mod paths;
pub mod picture;
pub mod progress;
pub mod report;
pub mod scene;
pub mod shard;
pub mod stack;

pub use report::exit_code;
