#!/usr/bin/env bash
# A sharded bake on a real Slurm cluster: starts a single-node cluster on
# loopback (munged, slurmctld, slurmd with their own config in a temporary
# directory, no systemd), submits the project's own scripts (slurm/submit.sh:
# a job digesting the inputs, an array of 4 shard tasks, one dependent array per wave of the
# levels above them and the merge in stages: a layout job, an array of 3 copy
# tasks and a commit job), and `cmp`s the pack
# with a single-process bake of the same inputs. Then it cancels one shard
# task mid-run (scancel), checks that nothing that looks like a shard was
# left, re-submits that one task, and checks the shard and the re-merged
# pack are the same bytes. It stops exactly the daemons it started, by PID,
# then anything still holding files in its directory, by PID.
#
# Then the same for one task of the first wave above the shards: cancelled
# mid-run, re-submitted alone, its wave file and the re-merged pack the same
# bytes. Then the same for one copy task of the merge: cancelled mid-run,
# the commit refusing while its range is not done, re-submitted alone, and
# the committed pack the same bytes.
#
# usage: slurm_test.sh PLANET_BAKE DEM WORKDIR [BAKE FLAGS...]
# Needs root and Debian's slurm-wlm and munge (tools/deps.sh installs them).
set -euo pipefail
if (($# < 3)); then
    sed -n '2,22p' "$0" >&2
    exit 2
fi
bake=$(realpath "$1")
dem=$(realpath "$2")
work=$(realpath -m "$3")
shift 3
flags=("$@")
here=$(cd "$(dirname "$0")" && pwd)
for tool in munged mungekey slurmctld slurmd sbatch scontrol scancel; do
    command -v "$tool" >/dev/null || { echo "slurm_test: $tool is missing; run tools/deps.sh" >&2; exit 1; }
done
[[ $(id -u) -eq 0 ]] || { echo "slurm_test: run as root (slurmd runs jobs as their user)" >&2; exit 1; }

mkdir -p "$work"
cluster=$(mktemp -d "$work/cluster.XXXXXX")
chmod 755 "$cluster"
started=()

stop_cluster() {
    local pid
    for pid in "${started[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${started[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    # Job steps (slurmstepd) and their children detach from the daemons:
    # whatever still has its working directory or a file in ours goes too.
    local proc link target
    for proc in /proc/[0-9]*; do
        pid=${proc#/proc/}
        [[ $pid == "$$" ]] && continue
        for link in "$proc/cwd" "$proc"/fd/*; do
            target=$(readlink "$link" 2>/dev/null) || continue
            if [[ $target == "$cluster" || $target == "$cluster/"* ]]; then
                kill -9 "$pid" 2>/dev/null || true
                break
            fi
        done
    done
    # The munge key and the daemons' state go with the cluster.
    rm -rf "$cluster"
}
trap stop_cluster EXIT

# A port nothing listens on, other than $1.
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        [[ $port == "${1:-}" ]] && continue
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
    done
}

# --- munge ---------------------------------------------------------------
mungekey --create --keyfile="$cluster/munge.key" 2>"$cluster/mungekey.log"
chmod 400 "$cluster/munge.key"
munged -F --force --socket="$cluster/munge.sock" --key-file="$cluster/munge.key" \
    --pid-file="$cluster/munged.pid" --seed-file="$cluster/munge.seed" \
    --log-file="$cluster/munged.log" 2>>"$cluster/munged.log" &
started+=($!)
for _ in $(seq 100); do [[ -S $cluster/munge.sock ]] && break; sleep 0.1; done
[[ -S $cluster/munge.sock ]] || { echo "slurm_test: munged did not start:" >&2; cat "$cluster/munged.log" >&2; exit 1; }

# --- slurm ---------------------------------------------------------------
mkdir -p "$cluster/state" "$cluster/spool" "$cluster/jobs"
topology=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
ctld_port=$(free_port)
cat >"$cluster/slurm.conf" <<CONF
ClusterName=planettest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$(free_port "$ctld_port")
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster/munge.sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SlurmUser=root
SlurmdUser=root
MailProg=/bin/true
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/slurmctld.log
SlurmdLogFile=$cluster/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=localhost $topology State=UNKNOWN
PartitionName=bake Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$cluster/slurm.conf
slurmctld -D -c -f "$SLURM_CONF" >>"$cluster/slurmctld.out" 2>&1 &
started+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >>"$cluster/slurmd.out" 2>&1 &
started+=($!)
for _ in $(seq 150); do
    sinfo -h -o %t 2>/dev/null | grep -qx idle && break
    sleep 0.2
done
sinfo -h -o %t | grep -qx idle || { echo "slurm_test: the node never became idle" >&2; tail "$cluster"/*.log >&2; exit 1; }

# Waits for every task of job $1 to end; fails unless all COMPLETED with 0.
wait_job() {
    local job=$1 lines
    for _ in $(seq 1200); do
        lines=$(scontrol -o show job "$job" 2>/dev/null || true)
        if [[ -n $lines ]] && ! grep -qE 'JobState=(PENDING|RUNNING|CONFIGURING|COMPLETING)' <<<"$lines"; then
            if grep -vE 'JobState=COMPLETED .*ExitCode=0:0' <<<"$lines" | grep -q .; then
                echo "slurm_test: job $job did not complete:" >&2
                grep -oE 'JobId=[0-9]+|ArrayTaskId=[0-9]+|JobState=[A-Z_]+|ExitCode=[0-9:]+' <<<"$lines" | paste -sd' ' >&2
                cat "$cluster"/jobs/*.log >&2 || true
                return 1
            fi
            return 0
        fi
        sleep 0.25
    done
    echo "slurm_test: job $job still running after 5 minutes" >&2
    return 1
}

# Cancels job $1 once its journal $2 has passed $3 bytes, then checks that
# it was cancelled, left no file $4 and left its journal to resume ($5 says
# which task, for the messages).
cancel_mid_run() {
    local job=$1 partial=$2 bytes=$3 file=$4 what=$5
    for _ in $(seq 600); do
        [[ -f $partial ]] && (($(stat -c %s "$partial") > bytes)) && break
        sleep 0.1
    done
    scancel "$job"
    for _ in $(seq 200); do
        scontrol -o show job "$job" | grep -qE 'JobState=(CANCELLED|FAILED|COMPLETED)' && break
        sleep 0.1
    done
    scontrol -o show job "$job" | grep -q 'JobState=CANCELLED' ||
        { echo "slurm_test: the $what was not cancelled mid-run" >&2; exit 1; }
    [[ ! -e $file ]] || { echo "slurm_test: a cancelled $what left its file $file" >&2; exit 1; }
    [[ -s $partial ]] || { echo "slurm_test: the cancelled $what left no journal to resume" >&2; exit 1; }
}

# --- 1. the single-process bake, then the array and the merge ---------------
"$bake" --dem "$dem" "${flags[@]}" --out "$work/single.planetpack" 2>"$work/single.log" ||
    { echo "slurm_test: the single-process bake failed:" >&2; cat "$work/single.log" >&2; exit 1; }
shards=$work/shards
rm -rf "$shards" "$work/merged.planetpack"
export SBATCH_ARGS="--chdir=$cluster/jobs --cpus-per-task=1" MERGE_SBATCH_ARGS="--chdir=$cluster/jobs"
export PLANET_BAKE=$bake
# The inputs are read whole once, by a first job; the shards sample them.
export PLANET_INPUTS_DIGEST=$work/inputs.digest.json
rm -f "$PLANET_INPUTS_DIGEST"
export PLANET_COPY_TASKS=3
read -r -a jobs < <("$here/slurm/submit.sh" 4 "$shards" "$work/merged.planetpack" "$dem" "${flags[@]}")
wave_count=$("$bake" wave-plan 4 | wc -w)
array=${jobs[0]} merge=${jobs[-1]} waves=("${jobs[@]:1:wave_count}") merges=("${jobs[@]:1+wave_count}")
echo "slurm_test: array job $array (4 shards), wave jobs ${waves[*]}, merge jobs ${merges[*]} (layout, copy, commit)"
((${#jobs[@]} == 1 + wave_count + 3)) || { echo "slurm_test: not one array per wave and three merge stages: ${jobs[*]}" >&2; exit 1; }
for job in "${jobs[@]}"; do wait_job "$job"; done
for task in 0 1 2; do
    grep -q "done: copy task $task of" "$cluster/jobs/planet-copy-${merges[1]}_$task.log" ||
        { echo "slurm_test: copy task $task did not report its range:" >&2; cat "$cluster"/jobs/planet-copy-*.log >&2; exit 1; }
done
# The waves baked every level above the shards: the merge filtered none.
grep -q ", 0 filtered here); verified" "$cluster/jobs/planet-merge-$merge.log" ||
    { echo "slurm_test: the merge filtered tiles itself:" >&2; cat "$cluster/jobs/planet-merge-$merge.log" >&2; exit 1; }
[[ -s $PLANET_INPUTS_DIGEST ]] || { echo "slurm_test: the digest job wrote no manifest" >&2; exit 1; }
cmp "$work/single.planetpack" "$work/merged.planetpack"
echo "slurm_test: the merged pack is byte-identical to the single-process bake"

# --- 2. cancel shard 2 mid-run, re-submit it alone --------------------------
mv "$shards/shard-2-of-4.planetshard" "$work/shard-2.first"
rm -f "$work/merged.planetpack"
export PLANET_SHARDS=4 PLANET_SHARD_DIR=$shards PLANET_DEM=$dem PLANET_BAKE_ARGS="${flags[*]}" PLANET_OUT=$work/merged.planetpack
slow=$(PLANET_DELAY_PER_TILE_MS=150 sbatch --parsable --export=ALL --array=2 --chdir="$cluster/jobs" \
    "$here/slurm/bake-shard.sbatch")
partial=$shards/shard-2-of-4.planetshard.partial
# A few tiles staged: surely mid-run.
cancel_mid_run "$slow" "$partial" 20000 "$shards/shard-2-of-4.planetshard" "shard task"
echo "slurm_test: shard 2 cancelled mid-run ($(stat -c %s "$partial") bytes staged); re-submitting it"
again=$(sbatch --parsable --export=ALL --array=2 --chdir="$cluster/jobs" "$here/slurm/bake-shard.sbatch")
wait_job "$again"
grep -h "resuming" "$cluster"/jobs/planet-shard-"${again%%;*}"_2.log
cmp "$work/shard-2.first" "$shards/shard-2-of-4.planetshard"
merge=$(sbatch --parsable --export=ALL --chdir="$cluster/jobs" "$here/slurm/merge.sbatch")
wait_job "$merge"
cmp "$work/single.planetpack" "$work/merged.planetpack"
echo "slurm_test: the re-submitted shard and the re-merged pack are byte-identical"

# --- 3. cancel task 1 of wave 0 mid-run, re-submit it alone -----------------
wave_file=$shards/wave-0-1-of-4.planetwave
[[ -s $wave_file ]] || { echo "slurm_test: wave 0 task 1 wrote no file" >&2; exit 1; }
mv "$wave_file" "$work/wave-0-1.first"
rm -f "$work/merged.planetpack"
slow=$(PLANET_WAVE=0 PLANET_DELAY_PER_TILE_MS=1000 sbatch --parsable --export=ALL --array=1 \
    --chdir="$cluster/jobs" "$here/slurm/bake-wave.sbatch")
partial=$wave_file.partial
# A tile staged: surely mid-run.
cancel_mid_run "$slow" "$partial" 2000 "$wave_file" "wave task"
echo "slurm_test: wave 0 task 1 cancelled mid-run ($(stat -c %s "$partial") bytes staged); re-submitting it"
again=$(PLANET_WAVE=0 sbatch --parsable --export=ALL --array=1 --chdir="$cluster/jobs" "$here/slurm/bake-wave.sbatch")
wait_job "$again"
grep -h "resuming\|resumed" "$cluster"/jobs/planet-wave-"${again%%;*}"_1.log | head -1
cmp "$work/wave-0-1.first" "$wave_file"
merge=$(sbatch --parsable --export=ALL --chdir="$cluster/jobs" "$here/slurm/merge.sbatch")
wait_job "$merge"
cmp "$work/single.planetpack" "$work/merged.planetpack"
echo "slurm_test: the re-submitted wave task and the re-merged pack are byte-identical"

# --- 4. cancel copy task 1 of a merge in stages mid-run, re-submit it alone ---
rm -f "$work/merged.planetpack"
# stage_job STAGE [SBATCH OPTIONS...]: submits one merge stage, prints its job id.
stage_job() {
    local stage=$1
    shift
    local job
    job=$(PLANET_MERGE_STAGE=$stage sbatch --parsable --export=ALL --chdir="$cluster/jobs" "$@" "$here/slurm/merge.sbatch")
    echo "${job%%;*}"
}
layout=$(stage_job layout --output=planet-layout-%j.log)
wait_job "$layout"
copies=$(stage_job copy --array=0,2 --output=planet-copy-%A_%a.log)
wait_job "$copies"
slow=$(PLANET_DELAY_PER_TILE_MS=100 stage_job copy --array=1 --output=planet-copy-%A_%a.log)
# Its first chunk written: surely mid-run (the hook then sleeps 0.1 s a tile).
for _ in $(seq 600); do
    grep -qs "copying range 1 of" "$cluster/jobs/planet-copy-${slow}_1.log" && break
    sleep 0.1
done
sleep 1
scancel "$slow"
for _ in $(seq 200); do
    scontrol -o show job "$slow" | grep -qE 'JobState=(CANCELLED|FAILED|COMPLETED)' && break
    sleep 0.1
done
scontrol -o show job "$slow" | grep -q 'JobState=CANCELLED' || { echo "slurm_test: the copy task was not cancelled mid-run" >&2; exit 1; }
[[ ! -e $work/merged.planetpack.copy-1 ]] || { echo "slurm_test: a cancelled copy task marked its range done" >&2; exit 1; }
echo "slurm_test: copy task 1 cancelled mid-run; a commit now must refuse"
refused=$(stage_job commit)
for _ in $(seq 600); do
    scontrol -o show job "$refused" | grep -qE 'JobState=(PENDING|RUNNING|CONFIGURING|COMPLETING)' || break
    sleep 0.1
done
scontrol -o show job "$refused" | grep -q 'JobState=FAILED' || { echo "slurm_test: the commit did not refuse a missing copy" >&2; exit 1; }
grep -q "copy tasks 1 of 3 have not finished" "$cluster/jobs/planet-merge-$refused.log" ||
    { echo "slurm_test: the commit's refusal does not name task 1:" >&2; cat "$cluster/jobs/planet-merge-$refused.log" >&2; exit 1; }
[[ ! -e $work/merged.planetpack ]] || { echo "slurm_test: a refused commit put a pack in place" >&2; exit 1; }
again=$(stage_job copy --array=1 --output=planet-copy-%A_%a.log)
wait_job "$again"
commit=$(stage_job commit)
wait_job "$commit"
cmp "$work/single.planetpack" "$work/merged.planetpack"
echo "slurm_test: the re-submitted copy task and the committed pack are byte-identical"
