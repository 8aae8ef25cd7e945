#!/usr/bin/env bash
# A sharded bake against the single-process bake of the same raster, on
# this machine: 1, 2 and 4 shards, the shards run two at a time (one per
# core, --jobs 1 each) as a scheduler would place them, then the merge
# (--jobs 2). Prints wall and CPU (user + sys) time of the shards and the
# merge, the merge's share of the CPU time, and whether the merged pack is
# byte-identical to the single-process one (cmp). The raster is ETOPO5
# resampled with GDAL to WIDTH x WIDTH/2 (8640: data depth 4, 2,046 tiles;
# 17280: depth 5, 8,190 tiles).
#
# usage: tools/bench/shard_scaling.sh [OUT_DIR] [WIDTH]   defaults: target/shard-scaling 8640
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/shard-scaling}
width=${2:-8640}
height=$((width / 2))
mkdir -p "$out"
tools/deps.sh --bench --demo
cargo build --release --locked -q -p planet-bake
bake=$(realpath "${CARGO_TARGET_DIR:-target}/release/planet-bake")
if [[ ! -f $out/etopo5-180.tif ]]; then
    /usr/bin/python3 tools/bench/etopo5_180.py /usr/share/ferret-vis/data/etopo5.cdf "$out/etopo5-180.tif"
fi
raster=$out/earth-$width.tif
if [[ ! -f $raster ]]; then
    gdalwarp -q -overwrite -r bilinear -ts "$width" "$height" -te -180 -90 180 90 -t_srs EPSG:4326 \
        -co TILED=YES -ot Float32 "$out/etopo5-180.tif" "$raster"
fi
common=(--dem "$raster" --body earth --tier bench --memory 1G)

# cpu FILE: user + sys seconds from /usr/bin/time -f '%e %U %S %M'.
cpu() { awk '{printf "%.1f", $2 + $3}' "$1"; }
wall() { awk '{printf "%.1f", $1}' "$1"; }

rm -f "$out/single.planetpack"
/usr/bin/time -f '%e %U %S %M' -o "$out/single.time" "$bake" "${common[@]}" --jobs 2 \
    --out "$out/single.planetpack" 2>"$out/single.log"
printf '%-7s %12s %12s %12s %12s %12s %10s %10s %s\n' shards "shards wall" "shards CPU" "merge wall" "merge CPU" \
    "total wall" "merge CPU" "merge RSS" identical
printf '%-7s %12s %12s %12s %12s %12s %10s %10s %s\n' single "-" "-" "-" "-" "$(wall "$out/single.time") s" "-" \
    "-" "(CPU $(cpu "$out/single.time") s, peak RSS $(awk '{print int($4 / 1024)}' "$out/single.time") MiB)"
for n in 1 2 4; do
    dir=$out/n$n
    rm -rf "$dir"
    mkdir -p "$dir"
    start=$(date +%s.%N)
    seq 0 $((n - 1)) | xargs -P 2 -I{} /usr/bin/time -f '%e %U %S %M' -o "$dir/shard-{}.time" \
        "$bake" "${common[@]}" --jobs 1 --shard "{}/$n" --out "$dir/shard-{}.planetshard" 2>>"$dir/shards.log"
    shards_wall=$(echo "$(date +%s.%N) - $start" | bc)
    shards_cpu=$(cat "$dir"/shard-*.time | awk '{s += $2 + $3} END {printf "%.1f", s}')
    shards=()
    for ((i = 0; i < n; i++)); do shards+=("$dir/shard-$i.planetshard"); done
    /usr/bin/time -f '%e %U %S %M' -o "$dir/merge.time" "$bake" --merge "${shards[@]}" --jobs 2 \
        --out "$dir/merged.planetpack" 2>"$dir/merge.log"
    same=$(cmp -s "$out/single.planetpack" "$dir/merged.planetpack" && echo yes || echo NO)
    merge_cpu=$(cpu "$dir/merge.time")
    total_wall=$(echo "$shards_wall + $(wall "$dir/merge.time")" | bc)
    share=$(echo "scale=1; 100 * $merge_cpu / ($merge_cpu + $shards_cpu)" | bc)
    rss=$(awk '{print int($4 / 1024)}' "$dir/merge.time")
    printf '%-7s %10.1f s %10.1f s %10.1f s %10.1f s %10.1f s %9s%% %6s MiB %s\n' "$n" "$shards_wall" "$shards_cpu" \
        "$(wall "$dir/merge.time")" "$merge_cpu" "$total_wall" "$share" "$rss" "$same"
done
