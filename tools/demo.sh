#!/usr/bin/env bash
# The main job on the embedded default. Today: what the terrain core knows
# about Earth, depth by depth, with the measured precision of the f32 vertex
# path. It grows into "bake the demo Earth and render it" as the bake and the
# renderer land.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
cargo run --release --locked -p planet-terrain --example core_table -- "${@:-earth}"
