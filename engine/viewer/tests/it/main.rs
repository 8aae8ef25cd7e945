//! planet-view end to end, one test binary: the real binary run headless
//! on lavapipe and in a window under Xvfb, with the validation layers on.
//! [`flight`]: flights, shots and their failures; [`stats`]: the GPU work
//! counts in `--stats`; [`remote`]: packs over HTTP; [`window`]: the
//! window, its panels and clicks; [`common`]: what they share.

mod common;
mod flight;
mod remote;
mod stats;
mod window;
