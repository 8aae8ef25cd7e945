#!/usr/bin/env bash
# Issue #31, item 2, on real ground: how far a region patch moves the
# ground outside its box, with detail on and off, now that the detail law
# is recorded at the bake and kept by the patch; and, beside it, what the
# reader did before (the law measured again from the patched data), by
# reading the patched pack with its law bytes cleared (version 2).
#
#   tools/patch_detail_probe.sh      (needs release builds and tools/deps.sh)
#
# Base: the Sierra Nevada SRTMGL3 DEM at its own depth. Patch: a plateau
# at 3,500 m over a 0.2 degree box of the Palisades, the roughest ground of
# the DEM (what changes the data's roughness statistics, and so a law
# measured again). Prints one markdown row per
# point: its distance from the box, and the change in metres of
# `planet-pack sample` with detail off, on (the law kept), and on as the
# reader measured it before.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/target/release
dem=/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gdal_calc.py --quiet -A "$dem" --outfile="$work/plateau.tif" --calc="A*0+3500" --NoDataValue=-32768 >/dev/null
bake() { "$bin/planet-bake" "$@" >"$work/bake.log" 2>&1 || { cat "$work/bake.log" >&2; exit 1; }; }
bake --dem "$dem" --body earth --tier test --out "$work/p.planetpack" --jobs 2
cp "$work/p.planetpack" "$work/before.planetpack"
box=(37.0 -118.75 37.2 -118.55) # south west north east
bake patch --dem "$work/plateau.tif" --body earth --tier test --out "$work/p.planetpack" --jobs 2 \
    --region "${box[0]},${box[1]},${box[2]},${box[3]}"
# The patched pack as the reader before version 3 read it: no law recorded.
cp "$work/p.planetpack" "$work/remeasured.planetpack"
/usr/bin/python3 - "$work/remeasured.planetpack" <<'EOF'
import sys, zlib
with open(sys.argv[1], "r+b") as f:
    h = bytearray(f.read(256))
    h[8:10] = (2).to_bytes(2, "little")
    h[21:24] = bytes(3)
    h[248:252] = bytes(4)
    h[252:256] = zlib.crc32(bytes(h[:252])).to_bytes(4, "little")
    f.seek(0)
    f.write(h)
EOF
sample() { # PACK LAT LON on|off
    "$bin/planet-pack" sample "$1" --lat "$2" --lon "$3" --detail "$4" --json |
        /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["elevation_m"])'
}
printf '| point | outside the box | detail off | detail on (law kept) | detail on (law re-measured, before) |\n'
printf '|---|---:|---:|---:|---:|\n'
points=(
    "37.1 -118.77 0.02°" "37.1 -118.8 0.05°" "37.25 -118.65 0.05°" "36.95 -118.65 0.05°" "37.1 -118.5 0.05°"
    "37.1 -119.0 0.25°" "37.45 -118.65 0.25°" "36.75 -118.65 0.25°"
    "37.1 -119.75 1°" "38.0 -118.65 0.8°" "37.6 -119.6 0.85°"
)
for p in "${points[@]}"; do
    read -r lat lon away <<<"$p"
    row="| $lat, $lon | $away"
    for pair in "p off" "p on" "remeasured on"; do
        read -r pack detail <<<"$pair"
        a=$(sample "$work/before.planetpack" "$lat" "$lon" "$detail")
        b=$(sample "$work/$pack.planetpack" "$lat" "$lon" "$detail")
        row+=" | $(/usr/bin/python3 -c "print(f'{$b - $a:+.3f}')")"
    done
    printf '%s |\n' "$row"
done
