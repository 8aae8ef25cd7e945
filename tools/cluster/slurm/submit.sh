#!/usr/bin/env bash
# Submits a sharded bake to Slurm: an array of N shard tasks, then one array
# per wave of the levels above the shards (planet-bake wave-plan N gives
# their task counts), each waiting for the one before (afterok), then the
# merge in stages: a layout job, an array of PLANET_COPY_TASKS copy tasks
# (default 8) and a commit job, each after the one before. With
# PLANET_COPY_TASKS=0 the merge is one job instead.
# Prints "ARRAY_JOB_ID WAVE_JOB_ID... MERGE_JOB_ID..." (layout, copy, commit;
# or the one merge job). It runs
# `planet-bake wave-plan N` ($PLANET_BAKE) here first, so planet-bake must run on this host.
#
# usage: submit.sh N SHARD_DIR OUT DEM [BAKE FLAGS...]
#   e.g. submit.sh 64 /shared/shards /shared/earth.planetpack /shared/srtm.vrt --body earth --depth 11
# With PLANET_INPUTS_DIGEST=PATH set, a first job reads the inputs once and writes
# their digest manifest there (made afresh on every submission: a manifest of an
# earlier run could vouch for inputs changed since), and the shards only sample them.
# PLANET_BAKE_ARGS is split at spaces: give paths without spaces (or a symlink).
# Paths are made absolute here, so --chdir in SBATCH_ARGS does not move them.
# Extra sbatch options go in SBATCH_ARGS (e.g. "--partition=bake --cpus-per-task=8 --mem=16G");
# the merge's in MERGE_SBATCH_ARGS. See docs/CLUSTER.md.
set -Eeuo pipefail
if (($# < 4)); then
    sed -n '2,13p' "$0" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$2"
export PLANET_SHARDS=$1 PLANET_SHARD_DIR=$(realpath "$2") PLANET_OUT=$(realpath -m "$3")
case $4 in
    /vsi*) export PLANET_DEM=$4 ;;
    *) export PLANET_DEM=$(realpath "$4") ;;
esac
[[ -z ${PLANET_INPUTS_DIGEST:-} ]] || export PLANET_INPUTS_DIGEST=$(realpath -m "$PLANET_INPUTS_DIGEST")
shift 4
export PLANET_BAKE_ARGS="$*"
# Checked before anything is submitted: a bad count found later would leave the bake's jobs queued.
export PLANET_COPY_TASKS=${PLANET_COPY_TASKS:-8}
[[ $PLANET_COPY_TASKS =~ ^[0-9]+$ ]] || { echo "submit: PLANET_COPY_TASKS must be a whole number, not $PLANET_COPY_TASKS" >&2; exit 2; }
# The waves' task counts, before anything is submitted (planet-bake must run here).
plan=$("${PLANET_BAKE:-planet-bake}" wave-plan "$PLANET_SHARDS")
read -r -a wave_tasks <<< "$plan"
((${#wave_tasks[@]})) || { echo "submit: planet-bake wave-plan $PLANET_SHARDS printed no waves" >&2; exit 1; }
read -r -a sbatch_args <<< "${SBATCH_ARGS:-}"
read -r -a merge_args <<< "${MERGE_SBATCH_ARGS:-}"
# ${a[@]+"${a[@]}"}: an empty array under `set -u` on bash older than 4.4 too.
after=()
submitted=()
# Whatever fails after a job went in takes the jobs already in with it (set -E:
# inside functions too).
trap '[[ $BASHPID == "$$" ]] && ((${#submitted[@]})) && scancel "${submitted[@]}"' ERR
if [[ -n ${PLANET_INPUTS_DIGEST:-} ]]; then
    rm -f "$PLANET_INPUTS_DIGEST"
    digest=$(sbatch --parsable --export=ALL --job-name=planet-digest ${merge_args[@]+"${merge_args[@]}"} \
        --wrap 'set -f; exec "${PLANET_BAKE:-planet-bake}" digest --dem "$PLANET_DEM" $PLANET_BAKE_ARGS --out "$PLANET_INPUTS_DIGEST"')
    submitted+=("${digest%%;*}")
    after=(--dependency="afterok:${digest%%;*}" --kill-on-invalid-dep=yes)
fi
array=$(sbatch --parsable --export=ALL --array="0-$((PLANET_SHARDS - 1))" ${after[@]+"${after[@]}"} \
    ${sbatch_args[@]+"${sbatch_args[@]}"} "$here/bake-shard.sbatch")
array=${array%%;*}
submitted+=("$array")
previous=$array
waves=()
for w in "${!wave_tasks[@]}"; do
    wave=$(PLANET_WAVE=$w sbatch --parsable --export=ALL --array="0-$((wave_tasks[w] - 1))" \
        --dependency="afterok:$previous" --kill-on-invalid-dep=yes ${sbatch_args[@]+"${sbatch_args[@]}"} \
        "$here/bake-wave.sbatch")
    previous=${wave%%;*}
    submitted+=("$previous")
    waves+=("$previous")
done
# merge_job STAGE [SBATCH OPTIONS...]: one stage of the merge, after the job before.
merge_job() {
    local stage=$1
    shift
    local job
    job=$(PLANET_MERGE_STAGE=$stage sbatch --parsable --export=ALL --dependency="afterok:$previous" \
        --kill-on-invalid-dep=yes ${merge_args[@]+"${merge_args[@]}"} "$@" "$here/merge.sbatch")
    previous=${job%%;*}
    submitted+=("$previous")
    merges+=("$previous")
}
merges=()
if ((PLANET_COPY_TASKS > 0)); then
    merge_job layout --job-name=planet-layout --output=planet-layout-%j.log
    merge_job copy --job-name=planet-copy --array="0-$((PLANET_COPY_TASKS - 1))" --output=planet-copy-%A_%a.log
    merge_job commit
else
    merge_job whole
fi
echo "${array} ${waves[*]} ${merges[*]}"
