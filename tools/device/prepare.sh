#!/usr/bin/env bash
# Prepares .gl/ for the GPU machine (../shared/device/README.md): the Vulkan
# loader packages, release builds of planet-view and of the render test
# binary, and the demo pack. Run here, from the repository root, after
# tools/demo.sh has baked packs/earth.planetpack; then run
# tools/device/gpu_figures.sh there (carry .gl).
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ -f packs/earth.planetpack ]] || { echo "prepare: run tools/demo.sh first (it bakes packs/earth.planetpack)" >&2; exit 1; }
ls .gl/*.deb >/dev/null 2>&1 || ../shared/device/prepare-vulkan.sh
cargo build --release --locked -q -p planet-view
tests=$(cargo test --release --locked -q -p planet-render --test it --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
mkdir -p .gl/bin
cp target/release/planet-view .gl/bin/
cp "$tests" .gl/bin/render-tests
strip .gl/bin/planet-view .gl/bin/render-tests   # line tables are most of their size; .gl must stay under 64 MiB
cp packs/earth.planetpack packs/flythrough.json .gl/
du -sh .gl
