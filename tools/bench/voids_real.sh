#!/usr/bin/env bash
# A real DEM with voids, alone and stacked (issue #49 item 3): the Sierra
# SRTM clipped to California with voids on its steepest slopes
# (voids_dem.py) is baked alone and read alone and over the demo Earth:
# the bake's counts (tiles, measured, holding filled voids, samples
# filled), `planet-pack sample` at a void and beside it, and provenance
# maps of both. Writes everything under DIR (default target/voids-real).
#
#   tools/bench/voids_real.sh [--out DIR]
#
# Needs packs/earth.planetpack (tools/demo.sh bakes it).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/voids-real
if [[ ${1:-} == --out ]]; then out=$2; fi
mkdir -p "$out"
cargo build --release --locked -q -p planet-bake -p planet-pack
bin=target/release
/usr/bin/python3 tools/bench/voids_dem.py /usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif \
    "$out/sierra-california-voids.tif" | tee "$out/voids.txt"
$bin/planet-bake --dem "$out/sierra-california-voids.tif" --body earth --tier demo \
    --out "$out/california.planetpack" --report "$out/california.report.json"
/usr/bin/python3 - "$out/california.report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"tiles {r['tiles']}, measured {r['tiles_measured']}, holding filled voids {r['tiles_with_filled_voids']}, "
      f"samples filled {r['samples_filled']} of {r['samples']}; {r['nodata_policy']}")
PY
void=$(sed -n 's/^blob at \([-0-9.]*\), \([-0-9.]*\)$/\1 \2/p' "$out/voids.txt" | head -1)
read -r lat lon <<<"$void"
for packs in "$out/california.planetpack" "packs/earth.planetpack $out/california.planetpack"; do
    # shellcheck disable=SC2086
    $bin/planet-pack sample $packs --lat "$lat" --lon "$lon" --detail off
    # shellcheck disable=SC2086
    $bin/planet-pack sample $packs --lat "$lat" --lon "$(/usr/bin/python3 -c "print($lon + 0.05)")" --detail off
done
$bin/planet-pack map "$out/california.planetpack" --what provenance --region 36.7,-120.2,38.1,-118.4 \
    --width 900 --png "$out/provenance-alone.png"
$bin/planet-pack map packs/earth.planetpack "$out/california.planetpack" --what provenance \
    --region 36.7,-120.2,38.1,-118.4 --width 900 --png "$out/provenance-stacked.png"
