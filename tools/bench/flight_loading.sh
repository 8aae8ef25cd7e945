#!/usr/bin/env bash
# The demo's fly-through, headless, with detail off and on and with tiles
# produced on the frame or in the background, back to back in one run:
# host CPU and GPU time per frame (the figures in docs/PERFORMANCE.md,
# "Viewer: frame times along the scripted path").
#
#   tools/bench/flight_loading.sh [PACK...]    (default: the demo's stack)
#
# RUNS picks the runs, DETAIL:LOADING each (default: all four). With
# LATENCY_MS set, the packs are served over loopback HTTP by nginx behind
# tools/http/latency_proxy.py adding that many milliseconds per request
# (as tools/demo_http.sh does) and opened by URL, each run with a cold
# disk cache. The release build is the one in CARGO_TARGET_DIR (default
# target/). thr_* is the frame thread's own CPU time (thr_over4: frames
# over 4 ms of it), cpu_* the frame's wall-clock host time.
#
# Needs tools/demo.sh's packs and path, and a release build of planet-view.
set -euo pipefail
cd "$(dirname "$0")/../.."
packs=("$@")
[ ${#packs[@]} -gt 0 ] || packs=(packs/earth.planetpack packs/himalaya.planetpack)
bin=${CARGO_TARGET_DIR:-target}/release/planet-view
runs=${RUNS:-off:frame off:background on:frame on:background}
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
out=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$out"
}
trap cleanup EXIT
if [[ -n ${LATENCY_MS:-} ]]; then
    free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
    server_port=$(free_port)
    proxy_port=$(free_port)
    tools/http/serve.sh packs "$server_port" & pids+=($!)
    python3 tools/http/latency_proxy.py "$proxy_port" "$server_port" "$LATENCY_MS" & pids+=($!)
    for port in "$server_port" "$proxy_port"; do
        for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
    done
    urls=()
    for pack in "${packs[@]}"; do urls+=("http://127.0.0.1:$proxy_port/${pack#packs/}"); done
    packs=("${urls[@]}")
    echo "over HTTP, $LATENCY_MS ms added per request: ${packs[*]}"
fi
printf '%-7s %-11s %6s %9s %9s %9s %9s %9s %9s %9s %9s %13s %9s %6s\n' detail loading frames cpu_med cpu_p99 \
    thr_med thr_p99 thr_max thr_over4 gpu_med gpu_p99 pending_frames lowest_m holes
for run in $runs; do
    detail=${run%%:*}
    loading=${run##*:}
    stats="$out/$detail-$loading.json"
    cache=()
    [[ -n ${LATENCY_MS:-} ]] && cache=(--cache "$out/cache-$detail-$loading")
    "$bin" "${packs[@]}" "${cache[@]}" --headless --path packs/flythrough.json --fps 8 \
        --size 1920x1080 --detail "$detail" --loading "$loading" --stats "$stats" 2>/dev/null
    [[ -n ${KEEP_STATS:-} ]] && cp "$stats" "$KEEP_STATS-$detail-$loading.json"
    python3 - "$stats" "$detail" "$loading" <<'PY'
import json, sys
frames = json.load(open(sys.argv[1]))["frames"]
def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]
cpu = [f["cpu_ms"] for f in frames]
thread = [f["thread_cpu_ms"] for f in frames]
gpu = [f["gpu_ms"] for f in frames if f.get("gpu_ms") is not None]
pending = sum(1 for f in frames if f["pending_requests"] > 0)
lowest = min(f["above_ground_m"] for f in frames)
holes = sum(f["hole_pixels"] for f in frames)
print(f"{sys.argv[2]:<7} {sys.argv[3]:<11} {len(frames):6d} {pct(cpu, .5):9.2f} {pct(cpu, .99):9.2f} "
      f"{pct(thread, .5):9.2f} {pct(thread, .99):9.2f} {max(thread):9.2f} {sum(1 for t in thread if t > 4):9d} "
      f"{pct(gpu, .5):9.1f} {pct(gpu, .99):9.1f} {pending:13d} {lowest:9.2f} {holes:6d}")
PY
done
