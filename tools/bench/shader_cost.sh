#!/usr/bin/env bash
# The terrain shaders' cost before and after a change, in one run: five
# shots of a scene, 960x540, on the release viewer built with the
# terrain shaders (shaders/*.glsl, terrain.vert, terrain.frag) as they were
# at REV ("before") and as they are ("after"); prints the shaded terrain
# pass's, the depth prepass's and the frame's GPU time (median of five,
# from --stats).
#
#   tools/bench/shader_cost.sh REV [SCENE]
#
# SCENE: palisade (default) - the SRTM around North Palisade (a 78 km crop
#            baked as the Earth's) from 12 km at a 12-degree sun (e.g. REV
#            8bbaa59, the shader before #51's light);
#        sea - the demo Earth (tools/demo.sh's packs/earth.planetpack):
#            100 m over the Pacific looking level, and the Aegean's coasts
#            from 120 km (e.g. REV 004c9b3, the shaders before the sea at
#            sea level);
#        ground - the demo's stack (packs/earth.planetpack and
#            packs/sierra.planetpack) 2 m above the granite below North
#            Palisade and Yosemite Valley's meadow (e.g. REV 6129fc8, the
#            shaders before the ground's structure at 2 m).
# SHOTS (environment, default 5): shots per view and build.
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:?usage: tools/bench/shader_cost.sh REV [palisade|sea|ground]}
scene=${2:-palisade}
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
work=$(mktemp -d)
shaders=(shaders/common.glsl shaders/heights.glsl shaders/surface.glsl shaders/horizon.glsl shaders/terrain.vert shaders/terrain.frag)
mkdir -p "$work/now"
cp "${shaders[@]}" "$work/now/"
trap 'for s in "${shaders[@]}"; do cp "$work/now/$(basename "$s")" "$s"; done; rm -rf "$work"' EXIT
cargo build --release --locked -q -p planet-bake -p planet-view
case $scene in
palisade)
    /usr/bin/python3 - "$work/palisade.tif" <<'PY'
import sys
from osgeo import gdal
gdal.Translate(sys.argv[1], "/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif", srcWin=[1100, 500, 940, 940])
PY
    target/release/planet-bake --dem "$work/palisade.tif" --body earth --out "$work/palisade.planetpack" >/dev/null 2>&1
    views=("$work/palisade.planetpack --lat 36.93 --lon -118.52 --alt 12000 --heading 300 --pitch -25 --time 2026-03-21T00:57:00Z")
    ;;
sea)
    [[ -f packs/earth.planetpack ]] || { echo "shader_cost.sh: packs/earth.planetpack is missing; run tools/demo.sh" >&2; exit 2; }
    views=("packs/earth.planetpack --lat 0 --lon -140 --agl 100 --heading 90 --pitch 0 --time 2026-03-20T20:00:00Z"
        "packs/earth.planetpack --lat 36.6 --lon 23.3 --alt 120000 --heading 20 --pitch -40 --time 2026-06-21T12:30:00Z")
    ;;
ground)
    for p in packs/earth.planetpack packs/sierra.planetpack; do
        [[ -f $p ]] || { echo "shader_cost.sh: $p is missing; run tools/demo.sh" >&2; exit 2; }
    done
    views=("packs/earth.planetpack packs/sierra.planetpack --lat 37.085 --lon -118.505 --agl 2 --heading 330 --pitch -4"
        "packs/earth.planetpack packs/sierra.planetpack --lat 37.735 --lon -119.60 --agl 2 --heading 60 --pitch -6")
    ;;
*)
    echo "shader_cost.sh: unknown scene '$scene' (palisade, sea or ground)" >&2
    exit 2
    ;;
esac
shots=${SHOTS:-5}
shots() {
    for v in "${!views[@]}"; do
        for k in $(seq "$shots"); do
            # shellcheck disable=SC2086 # each view is its words
            target/release/planet-view ${views[$v]} --size 960x540 --shot "$work/$1.png" \
                --stats "$work/$1-$v-$k.json" 2>/dev/null
        done
        /usr/bin/python3 - "$work" "$1" "$v" <<'PY'
import json, statistics, sys
work, label, view = sys.argv[1:]
import glob
runs = [json.load(open(f))["gpu_ms"] for f in sorted(glob.glob(f"{work}/{label}-{view}-*.json"))]
shaded = [r["terrain_shaded"] for r in runs]
print(f"| view {view} | {label} | {statistics.median(shaded):,.0f} ms | {min(shaded):,.0f}-{max(shaded):,.0f} | "
      f"{statistics.median(r['terrain_depth'] for r in runs):,.0f} ms | {statistics.median(r['total'] for r in runs):,.0f} ms |")
PY
    done
}
echo "| view | shaders | shaded terrain pass, median of $shots | runs | depth prepass, median | whole frame, median |"
echo "|---|---|---:|---|---:|---:|"
for s in "${shaders[@]}"; do git show "$rev:$s" > "$s"; done
cargo build --release --locked -q -p planet-view
shots before
for s in "${shaders[@]}"; do cp "$work/now/$(basename "$s")" "$s"; done
cargo build --release --locked -q -p planet-view
shots after
