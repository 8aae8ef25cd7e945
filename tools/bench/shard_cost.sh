#!/usr/bin/env bash
# What the shards of a bake cost in all: the N shards of RASTER baked as
# separate `--jobs 1` processes, one at a time (this VM's two vCPUs share
# one core; two at once inflate each other's CPU), each timed by GNU time.
# Prints the shards' total CPU (user + sys) and the smallest and largest
# shard's, for comparing against the single process
# (tools/bench/shard_scaling.sh runs the whole chain) or two builds.
# FLAGS adds bake flags to every shard (FLAGS="--depth 5"). DIGEST=once
# hashes the inputs once (planet-bake digest) and hands the manifest to every
# shard (--inputs-digest), as tools/cluster's jobs do, instead of each shard
# hashing them again; the digest's CPU is then printed and counted in.
#
# usage: tools/bench/shard_cost.sh BAKE RASTER N [DIR]   (DIR default target/shard-cost)
#        tools/bench/shard_cost.sh target/release/planet-bake /usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif 8
set -euo pipefail
(($# >= 3)) || { sed -n '2,16p' "$0" >&2; exit 2; }
bake=$1 raster=$2 n=$3 dir=${4:-target/shard-cost}
[[ -x $bake ]] || { echo "shard_cost: $bake is not an executable planet-bake" >&2; exit 2; }
[[ -f $raster ]] || { echo "shard_cost: no raster at $raster" >&2; exit 2; }
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "shard_cost: N must be a positive count, not '$n'" >&2; exit 2; }
read -ra flags <<<"${FLAGS:-}"
mkdir -p "$dir"
rm -f "$dir"/shard-*-of-"$n".planetshard*
total=0 smallest= largest= digest_cpu=
if [[ ${DIGEST:-} == once ]]; then
    "/usr/bin/time" -f '%e %U %S %M' -o "$dir/digest.time" "$bake" digest --dem "$raster" --body earth --tier bench \
        --memory 1G "${flags[@]}" --out "$dir/inputs.digest.json" 2>"$dir/digest.log" >/dev/null ||
        { echo "shard_cost: the digest failed; see $dir/digest.log" >&2; exit 1; }
    digest_cpu=$(awk '{printf "%.2f", $2 + $3}' "$dir/digest.time")
    flags+=(--inputs-digest "$dir/inputs.digest.json")
fi
for ((i = 0; i < n; i++)); do
    "/usr/bin/time" -f '%e %U %S %M' -o "$dir/shard-$i.time" "$bake" shard "$i/$n" --dem "$raster" --body earth --tier bench \
        --memory 1G "${flags[@]}" --jobs 1 --out "$dir/shard-$i-of-$n.planetshard" \
        2>"$dir/shard-$i.log" >/dev/null || { echo "shard_cost: shard $i/$n failed; see $dir/shard-$i.log" >&2; exit 1; }
    cpu=$(awk '{printf "%.2f", $2 + $3}' "$dir/shard-$i.time")
    total=$(awk -v a="$total" -v b="$cpu" 'BEGIN {printf "%.2f", a + b}')
    smallest=$(awk -v a="${smallest:-$cpu}" -v b="$cpu" 'BEGIN {print (b < a ? b : a)}')
    largest=$(awk -v a="${largest:-$cpu}" -v b="$cpu" 'BEGIN {print (b > a ? b : a)}')
done
line="$(basename "$raster") N=$n: shards' CPU $total s in all, smallest shard $smallest s, largest $largest s"
if [[ -n $digest_cpu ]]; then
    line+="; the inputs' digest $digest_cpu s, with it $(awk -v a="$total" -v b="$digest_cpu" 'BEGIN {printf "%.2f", a + b}') s"
fi
echo "$line"
