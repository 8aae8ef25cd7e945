#!/usr/bin/env bash
# planet-pack's quantized-mesh export beside another generator on the same
# DEM (issue #53): PyPI's pydelatin (Delaunay refinement to a maximum error)
# with PyPI's quantized-mesh-encoder (Kyle Barron's encoder), pinned below,
# in a venv under target/peer-venv (made with the system's GDAL and numpy).
# They mesh and encode but do not tile, so tools/bench/export_vs_peer.py
# tiles for them: exactly the tiles our export's layer.json lists, each a
# 65 x 65 grid read from the DEM with GDAL (bilinear), meshed to the same
# per-level error.
#
# The DEM is baked with planet-bake, exported with planet-pack over the
# DEM's box (--region; the coarse levels down to the two roots come with
# it), once with --jobs 1 and once with the default workers, then the peer
# makes the same z/x/y in one Python process. Each is timed with GNU time
# (wall, CPU, peak resident memory), ROUNDS times interleaved (default 3),
# the fastest round counting. Then every tile of both is decoded and
# compared: bytes, vertices, triangles, the height drawn at every grid
# sample against the DEM, shared edges between neighbours, and (on a
# sample of tiles) the ground each side meshes. Prints Markdown tables and
# one JSON line per run; the whole report is kept in OUT/report.md.
#
# Builds nothing: target/release/planet-bake and planet-pack must be built.
#
# usage: [ROUNDS=n] [MAX_LEVEL=n] tools/bench/export_vs_peer.sh [DEM] [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
dem=${1:-/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif}
out=${2:-target/export-vs-peer}
rounds=${ROUNDS:-3}
encoder_version=0.5.0
delatin_version=0.4.0
bake=target/release/planet-bake
pack_tool=target/release/planet-pack
for tool in "$bake" "$pack_tool"; do
    if [[ ! -x $tool ]]; then
        echo "export_vs_peer: $tool is not built (cargo build --release -p planet-bake -p planet-pack)" >&2
        exit 2
    fi
done
[[ -f $dem ]] || { echo "export_vs_peer: no DEM at $dem" >&2; exit 2; }

venv=target/peer-venv
[[ -x $venv/bin/python ]] || /usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check \
    "quantized-mesh-encoder==$encoder_version" "pydelatin==$delatin_version"
py=$venv/bin/python
script=tools/bench/export_vs_peer.py

mkdir -p "$out/times" "$out/logs"
start=$(date +%s)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
memory=$(free -g | awk '/Mem:/ {print $2}')
system=$(. /etc/os-release && echo "$PRETTY_NAME")
stack=$("$py" -c 'import platform, numpy; from osgeo import gdal
print(f"GDAL {gdal.__version__}, numpy {numpy.__version__}, Python {platform.python_version()}")')
{
    echo "machine: $(nproc) cores, $cpu, $memory GiB, $system; $(date -u '+%Y-%m-%d %H:%M UTC');" \
        "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "peer: quantized-mesh-encoder $encoder_version, pydelatin $delatin_version (PyPI); $stack"
} | tee "$out/report.md"

pack=$out/$(basename "${dem%.*}").planetpack
if ! "$bake" --dem "$dem" --body earth --out "$pack" >"$out/logs/bake.log" 2>&1; then
    echo "export_vs_peer: the bake failed:" >&2
    tail -20 "$out/logs/bake.log" >&2
    exit 1
fi
# The DEM's box, S,W,N,E.
region=$("$py" -c "
from osgeo import gdal
ds = gdal.Open('$dem')
w, dx, _, n, _, dy = ds.GetGeoTransform()
print(f'{n + dy * ds.RasterYSize!r},{w!r},{n!r},{w + dx * ds.RasterXSize!r}')")
levels=()
[[ -n ${MAX_LEVEL:-} ]] && levels=(--max-level "$MAX_LEVEL")
echo "pack: $pack ($(du -m "$pack" | cut -f1) MB); region S,W,N,E $region${MAX_LEVEL:+, levels to $MAX_LEVEL}" |
    tee -a "$out/report.md"

runs=()
timed() {  # STEM LABEL KIND DIR COMMAND...: run from a fresh DIR under GNU time
    local stem=$out/times/$1.$round label=$2 kind=$3 dir=$4
    shift 4
    rm -rf "$dir"
    if ! /usr/bin/time -v -o "$stem.time" "$@" >"$out/logs/$(basename "$stem").log" 2>&1; then
        echo "export_vs_peer: '$label' failed:" >&2
        tail -20 "$out/logs/$(basename "$stem").log" >&2
        exit 1
    fi
    local spec="$label,$kind,$stem.time"
    [[ $kind == peer ]] && spec+=",$stem.parts.json"
    runs+=(--run "$spec")
}
for round in $(seq "$rounds"); do
    timed ours-1 "planet-pack --jobs 1" ours "$out/ours" \
        "$pack_tool" export "$pack" --quantized-mesh "$out/ours" --region "$region" "${levels[@]}" --jobs 1
    timed ours-workers "planet-pack ($(nproc) workers)" ours "$out/ours-workers" \
        "$pack_tool" export "$pack" --quantized-mesh "$out/ours-workers" --region "$region" "${levels[@]}"
    timed peer "pydelatin + quantized-mesh-encoder" peer "$out/peer" \
        "$py" "$script" peer --layer "$out/ours/layer.json" --dem "$dem" --out "$out/peer" \
        --parts "$out/times/peer.$round.parts.json"
    echo "round $round of $rounds done ($(($(date +%s) - start)) s)"
done
# The workers change nothing in the bytes.
diff -rq "$out/ours" "$out/ours-workers" >/dev/null ||
    { echo "export_vs_peer: the exports with 1 and $(nproc) workers differ" >&2; exit 1; }

echo | tee -a "$out/report.md"
"$py" "$script" measure --dem "$dem" --ours "$out/ours" --peer "$out/peer" --pack "$pack" \
    --planet-pack "$pack_tool" "${runs[@]}" | tee -a "$out/report.md"
echo "whole bench: $(($(date +%s) - start)) s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)" |
    tee -a "$out/report.md"
