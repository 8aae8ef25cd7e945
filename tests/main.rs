//! The workspace's system tests, one binary: end-to-end runs of the tools
//! ([`e2e`], [`regional`], [`fidelity`], [`ground_shape`], [`light`], [`web`]) and the tidy checks of the codebase's conventions ([`tidy`]).

mod e2e;
mod fidelity;
mod ground_shape;
mod light;
mod regional;
mod tidy;
mod web;
