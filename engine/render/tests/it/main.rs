//! planet-render's integration tests, one binary, on lavapipe with the
//! validation layers on: the vertex shader held to its CPU reference
//! ([`conformance`]), and pictures, holes, draws and validation
//! ([`render`]), a lost device survived ([`device_loss`]), the sea at sea level ([`sea`]), the imagery as the
//! ground's colour ([`imagery`]) and where an inset meets the ground below
//! ([`inset_edge`]), a second view in the same frame ([`views`]), several bodies in one picture
//! ([`several_bodies`]), over packs written from formulas ([`box_packs`]),
//! sharing the fixtures and golden check in [`support`].
//!
//! One binary links the renderer once instead of once per area.

mod bodies;
mod box_packs;
mod conformance;
mod device_loss;
mod imagery;
mod inset_edge;
mod render;
mod sea;
mod several_bodies;
mod statistics;
mod support;
mod surface;
mod ui;
mod views;
