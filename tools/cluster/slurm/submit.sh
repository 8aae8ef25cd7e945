#!/usr/bin/env bash
# Submits a sharded bake to Slurm: an array of N shard tasks, then a merge
# job that waits for all of them (afterok). Prints "ARRAY_JOB_ID MERGE_JOB_ID".
#
# usage: submit.sh N SHARD_DIR OUT DEM [BAKE FLAGS...]
#   e.g. submit.sh 64 /shared/shards /shared/earth.planetpack /shared/srtm.vrt --body earth --depth 11
# With PLANET_INPUTS_DIGEST=PATH set, a first job reads the inputs once and writes
# their digest manifest there (unless it exists), and the shards only sample them.
# Extra sbatch options go in SBATCH_ARGS (e.g. "--partition=bake --cpus-per-task=8 --mem=16G");
# the merge's in MERGE_SBATCH_ARGS. See docs/CLUSTER.md.
set -euo pipefail
if (($# < 4)); then
    sed -n '2,10p' "$0" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
export PLANET_SHARDS=$1 PLANET_SHARD_DIR=$2 PLANET_OUT=$3 PLANET_DEM=$4
shift 4
export PLANET_BAKE_ARGS="$*"
mkdir -p "$PLANET_SHARD_DIR"
read -r -a sbatch_args <<< "${SBATCH_ARGS:-}"
read -r -a merge_args <<< "${MERGE_SBATCH_ARGS:-}"
after=()
if [[ -n ${PLANET_INPUTS_DIGEST:-} && ! -f $PLANET_INPUTS_DIGEST ]]; then
    digest=$(sbatch --parsable --export=ALL --job-name=planet-digest "${merge_args[@]}" \
        --wrap "exec \"\${PLANET_BAKE:-planet-bake}\" --dem \"\$PLANET_DEM\" \$PLANET_BAKE_ARGS --digest-inputs --out \"\$PLANET_INPUTS_DIGEST\"")
    after=(--dependency="afterok:${digest%%;*}")
fi
array=$(sbatch --parsable --export=ALL --array="0-$((PLANET_SHARDS - 1))" "${after[@]}" "${sbatch_args[@]}" \
    "$here/bake-shard.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --export=ALL --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    "${merge_args[@]}" "$here/merge.sbatch")
echo "${array} ${merge%%;*}"
