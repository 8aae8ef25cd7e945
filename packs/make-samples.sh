#!/usr/bin/env bash
# Remakes the committed sample packs in packs/samples/ from the synthetic DEM
# (bake/examples/synthetic_dem.rs) with the project's own bake. The samples
# are small enough to commit and stand in wherever a test, a newcomer or a
# bug report needs a real pack at hand without the demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo run -q --release --locked -p planet-bake --example synthetic_dem -- "$work/tethys.tif" 0.5
mkdir -p packs/samples
cargo run -q --release --locked -p planet-bake -- --dem "$work/tethys.tif" \
    --radii 531100,531100,531100 --name tethys --tier sample --level 19 \
    --out packs/samples/tethys.planetpack --report "$work/report.json"
cargo run -q --release --locked -p planet-pack -- info packs/samples/tethys.planetpack
