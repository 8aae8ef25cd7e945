#!/usr/bin/env bash
# Every stage of a sharded bake between the shards and the pack, run on this
# machine: for the tests, and for users without a scheduler. Given the N
# shard files already baked in DIR (shard-I-of-N.planetshard, as
# slurm/bake-shard.sbatch names them), it runs every task of every wave of
# the levels above the shards (planet-bake wave-plan N; a wave's tasks in
# parallel, PLANET_PARALLEL at a time, default one per core), then the merge
# in stages: the layout, PLANET_COPY_TASKS copy tasks (default 4, in
# parallel as the waves' tasks) and the commit; PLANET_COPY_TASKS=0 merges
# in one process instead. Each stage runs the very scripts a Slurm job or a
# Kubernetes pod runs (slurm/bake-wave.sbatch, slurm/merge.sbatch), one
# process per task. Prints the CPU seconds (user + system) of each stage
# (and the wall time of the merge's single-node stages), then on its last
# line the total CPU seconds alone.
#
# usage: local-waves.sh PLANET_BAKE DIR N [OUT]   (OUT defaults to DIR/merged.planetpack)
# Environment: PLANET_JOBS worker threads per task (default 1), PLANET_PARALLEL,
# PLANET_COPY_TASKS.
set -euo pipefail
if (($# < 3)); then
    sed -n '2,17p' "$0" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
# A path, or a command on PATH.
bake=$(command -v "$1") || { echo "local-waves: $1: no such program" >&2; exit 1; }
bake=$(realpath "$bake")
dir=$(realpath "$2")
out=$(realpath -m "${4:-$2/merged.planetpack}")
export PLANET_BAKE=$bake PLANET_SHARDS=$3 PLANET_SHARD_DIR=$dir PLANET_OUT=$out PLANET_JOBS=${PLANET_JOBS:-1}
# The task index comes from JOB_COMPLETION_INDEX here, even inside a Slurm job.
unset SLURM_ARRAY_TASK_ID
command -v /usr/bin/time >/dev/null || { echo "local-waves: GNU time is missing; run tools/deps.sh" >&2; exit 1; }
plan=$("$bake" wave-plan "$PLANET_SHARDS")
read -r -a tasks <<< "$plan"
((${#tasks[@]})) || { echo "local-waves: planet-bake wave-plan $PLANET_SHARDS printed no waves" >&2; exit 1; }
times=$(mktemp -d)
trap 'rm -rf "$times"' EXIT
# sum FILE...: user + system seconds of GNU time's '%U %S' lines.
sum() { cat "$@" | awk '{s += $1 + $2} END {printf "%.2f", s}'; }
report=()
for w in "${!tasks[@]}"; do
    seq 0 $((tasks[w] - 1)) | PLANET_WAVE=$w xargs -P "${PLANET_PARALLEL:-$(nproc)}" -I{} \
        env JOB_COMPLETION_INDEX={} /usr/bin/time -f '%U %S' -o "$times/wave-$w-{}.time" "$here/slurm/bake-wave.sbatch"
    report+=("wave $w (${tasks[w]} tasks) $(sum "$times"/wave-"$w"-*.time) s")
done
# stage NAME: one merge stage in one process, timed.
stage() {
    PLANET_MERGE_STAGE=$1 /usr/bin/time -f '%U %S %e' -o "$times/$1.time" "$here/slurm/merge.sbatch"
    report+=("$1 $(sum "$times/$1.time") s (wall $(awk '{print $3}' "$times/$1.time") s)")
}
copies=${PLANET_COPY_TASKS:-4}
if ((copies > 0)); then
    PLANET_COPY_TASKS=$copies stage layout
    seq 0 $((copies - 1)) | PLANET_MERGE_STAGE=copy xargs -P "${PLANET_PARALLEL:-$(nproc)}" -I{} \
        env JOB_COMPLETION_INDEX={} /usr/bin/time -f '%U %S' -o "$times/copy-{}.time" "$here/slurm/merge.sbatch"
    report+=("copy ($copies tasks) $(sum "$times"/copy-*.time) s")
    stage commit
else
    stage whole
fi
echo "local-waves: CPU: $(IFS=,; echo "${report[*]}" | sed 's/,/, /g')"
sum "$times"/*.time
echo
