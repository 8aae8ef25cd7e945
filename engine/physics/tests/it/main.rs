//! planet-physics integration tests, one binary: bodies on grounds made
//! from the terrain core's sources and layers, each figure printed with
//! the tolerance it is held to (`--nocapture` shows them).

mod crater;
mod edits;
mod refusals;
mod sea;
mod seams;
mod slope;
mod support;
