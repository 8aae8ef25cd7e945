//! planet-terrain's integration tests, one binary: addressing and keys,
//! geodesy, the f32 precision path, packs and their patch journal, height
//! sources, stacks of packs, layers and selection, each in its module,
//! sharing the fixtures in [`support`].
//!
//! One binary links the crate once instead of once per area.

mod addressing;
mod detail;
mod geodesy;
mod journal;
mod kept_bounds;
mod layers;
mod pack;
mod precision;
mod sea;
mod seams;
mod select;
mod select_reference;
mod sources;
mod stack;
mod support;
