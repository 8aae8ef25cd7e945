#!/usr/bin/env bash
# A sharded bake against the single-process bake of the same raster, on
# this machine, every stage a separate process as a scheduler runs it: the
# inputs' digest manifest (one process), the N shards, the waves above them
# and the merge in stages: layout, copy tasks, commit
# (tools/cluster/local-waves.sh, COPIES copy tasks, default 4; the
# one-process merge of the same parts is run and printed too), every process
# with --jobs 1 like the single-process bake it is compared with. They run
# PARALLEL at a time (default 1): this VM's two vCPUs share one core, and
# two processes at once inflate each other's CPU time by up to 30%
# (measured), which would be the machine's figure, not the bake's.
# Prints each stage's CPU (user + sys, from GNU time) and wall time,
# sharding's CPU over the single process's, the share of all CPU of the
# merge's single-node stages (layout and commit),
# and whether the merged pack is byte-identical to the single-process one
# (cmp). The raster is ETOPO5 resampled with GDAL to WIDTH x WIDTH/2 (8640:
# data depth 5, 8,190 tiles; 17280: depth 6, 32,766 tiles), or any DEM
# given as RASTER=PATH (WIDTH is then ignored). FLAGS adds bake flags to
# the single process and every shard (FLAGS="--depth 5": a bake coarser
# than the raster, which averages it as it reads).
#
# usage: tools/bench/shard_scaling.sh [OUT_DIR] [WIDTH] [N...]   defaults: target/shard-scaling 8640 4 8
#        RASTER=/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif tools/bench/shard_scaling.sh target/sierra 0 2 4
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/shard-scaling}
width=${2:-8640}
counts=("${@:3}")
((${#counts[@]})) || counts=(4 8)
height=$((width / 2))
mkdir -p "$out"
tools/deps.sh --bench --demo
cargo build --release --locked -q -p planet-bake
bake=$(realpath "${CARGO_TARGET_DIR:-target}/release/planet-bake")
if [[ ! -f $out/etopo5-180.tif ]]; then
    /usr/bin/python3 tools/bench/etopo5_180.py /usr/share/ferret-vis/data/etopo5.cdf "$out/etopo5-180.tif"
fi
raster=${RASTER:-$out/earth-$width.tif}
if [[ ! -f $raster ]]; then
    gdalwarp -q -overwrite -r bilinear -ts "$width" "$height" -te -180 -90 180 90 -t_srs EPSG:4326 \
        -co TILED=YES -ot Float32 "$out/etopo5-180.tif" "$raster"
fi
read -ra flags <<<"${FLAGS:-}"
common=(--dem "$raster" --body earth --tier bench --memory 1G "${flags[@]}")

# cpu FILE: user + sys seconds from /usr/bin/time -f '%e %U %S %M'.
cpu() { awk '{printf "%.1f", $2 + $3}' "$1"; }
wall() { awk '{printf "%.1f", $1}' "$1"; }

parallel=${PARALLEL:-1}
# The merge's copy tasks (the table reads the staged merge's lines).
copies=${COPIES:-4}
((copies > 0)) || { echo "shard_scaling: COPIES must be at least 1" >&2; exit 2; }
rm -f "$out/single.planetpack"
/usr/bin/time -f '%e %U %S %M' -o "$out/single.time" "$bake" "${common[@]}" --jobs 1 \
    --out "$out/single.planetpack" 2>"$out/single.log"
single_cpu=$(cpu "$out/single.time")
echo "single process (--jobs 1): wall $(wall "$out/single.time") s, CPU $single_cpu s, peak RSS $(awk '{print int($4 / 1024)}' "$out/single.time") MiB"
printf '%-4s %9s %16s %16s %9s %9s %9s %12s %10s %11s %s\n' N "digest" "shards wall/CPU" "waves wall/CPU" "layout+" "layout+" \
    "copies" "total CPU" "sharding" "serial" identical
printf '%-4s %9s %16s %16s %9s %9s %9s %12s %10s %11s %s\n' "" CPU "" "" "commit wall" "commit CPU" CPU "" "over one" "merge share" ""
for n in "${counts[@]}"; do
    dir=$out/n$n
    rm -rf "$dir"
    mkdir -p "$dir"
    /usr/bin/time -f '%e %U %S %M' -o "$dir/digest.time" "$bake" digest "${common[@]}" \
        --out "$dir/inputs.digest.json" 2>"$dir/digest.log"
    start=$(date +%s.%N)
    seq 0 $((n - 1)) | xargs -P "$parallel" -I{} /usr/bin/time -f '%e %U %S %M' -o "$dir/shard-{}.time" \
        "$bake" shard "{}/$n" "${common[@]}" --jobs 1 --inputs-digest "$dir/inputs.digest.json" \
        --out "$dir/shard-{}-of-$n.planetshard" 2>>"$dir/shards.log"
    shards_wall=$(echo "$(date +%s.%N) - $start" | bc)
    shards_cpu=$(cat "$dir"/shard-*.time | awk '{s += $2 + $3} END {printf "%.1f", s}')
    start=$(date +%s.%N)
    PLANET_PARALLEL=$parallel PLANET_JOBS=1 PLANET_COPY_TASKS=$copies tools/cluster/local-waves.sh "$bake" "$dir" "$n" >"$dir/waves.out" 2>"$dir/waves.log"
    after_wall=$(echo "$(date +%s.%N) - $start" | bc)
    after_cpu=$(tail -1 "$dir/waves.out")
    # The merge's single-node stages (layout, commit) and its copy tasks.
    stage_cpu() { grep -o "$1 [0-9.]* s" "$dir/waves.out" | awk '{s += $2} END {printf "%.2f", s}'; }
    stage_wall() { grep -o "$1 [0-9.]* s (wall [0-9.]*" "$dir/waves.out" | awk '{s += $5} END {printf "%.2f", s}'; }
    merge_cpu=$(echo "$(stage_cpu layout) + $(stage_cpu commit)" | bc)
    merge_wall=$(echo "$(stage_wall layout) + $(stage_wall commit)" | bc)
    copy_cpu=$(grep -o 'tasks) [0-9.]* s' "$dir/waves.out" | tail -1 | awk '{print $2}')
    waves_cpu=$(echo "$after_cpu - $merge_cpu - $copy_cpu" | bc)
    waves_wall=$(echo "$after_wall - $merge_wall" | bc)
    digest_cpu=$(cpu "$dir/digest.time")
    total=$(echo "$digest_cpu + $shards_cpu + $after_cpu" | bc)
    over=$(printf '%.1f' "$(echo "100 * ($total - $single_cpu) / $single_cpu" | bc -l)")
    share=$(printf '%.1f' "$(echo "100 * $merge_cpu / $total" | bc -l)")
    same=$(cmp -s "$out/single.planetpack" "$dir/merged.planetpack" && echo yes || echo NO)
    printf '%-4s %7.1f s %7.1f/%5.1f s %7.1f/%5.1f s %7.2f s %7.2f s %7.2f s %10.1f s %9s%% %10s%% %s\n' "$n" "$digest_cpu" \
        "$shards_wall" "$shards_cpu" "$waves_wall" "$waves_cpu" "$merge_wall" "$merge_cpu" "$copy_cpu" "$total" "$over" \
        "$share" "$same"
    sed -n 1p "$dir/waves.out"
    # The same shards and waves merged in one process (it lays out and copies).
    /usr/bin/time -f '%e %U %S %M' -o "$dir/whole.time" "$bake" merge "$dir"/shard-*-of-"$n".planetshard \
        "$dir"/wave-*-of-"$n".planetwave --jobs 1 --out "$dir/merged-whole.planetpack" 2>"$dir/whole.log"
    whole_cpu=$(cpu "$dir/whole.time")
    echo "     merged in one process: $whole_cpu s CPU," \
        "$(printf '%.1f' "$(echo "100 * $whole_cpu / ($total - $merge_cpu - $copy_cpu + $whole_cpu)" | bc -l)")% of all CPU;" \
        "identical: $(cmp -s "$out/single.planetpack" "$dir/merged-whole.planetpack" && echo yes || echo NO)"
    # Before the waves: the same shards merged alone, the merge filtering
    # and auditing every level above them itself.
    /usr/bin/time -f '%e %U %S %M' -o "$dir/merge-alone.time" "$bake" merge "$dir"/shard-*-of-"$n".planetshard \
        --jobs 1 --out "$dir/merged-alone.planetpack" 2>"$dir/merge-alone.log"
    alone_cpu=$(cpu "$dir/merge-alone.time")
    alone_total=$(echo "$digest_cpu + $shards_cpu + $alone_cpu" | bc)
    echo "     without waves: the merge alone $(wall "$dir/merge-alone.time") s wall, $alone_cpu s CPU," \
        "$(printf '%.1f' "$(echo "100 * $alone_cpu / $alone_total" | bc -l)")% of all CPU;" \
        "identical: $(cmp -s "$out/single.planetpack" "$dir/merged-alone.planetpack" && echo yes || echo NO)"
done
