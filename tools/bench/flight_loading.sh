#!/usr/bin/env bash
# The demo's fly-through, headless, with detail off and on and with tiles
# produced on the frame or in the background, back to back in one run:
# host CPU and GPU time per frame (the figures in docs/PERFORMANCE.md,
# "Viewer: frame times along the scripted path").
#
#   tools/bench/flight_loading.sh [PACK...]    (default: the demo's stack)
#
# Needs tools/demo.sh's packs and path, and a release build of planet-view.
set -euo pipefail
cd "$(dirname "$0")/../.."
packs=("$@")
[ ${#packs[@]} -gt 0 ] || packs=(packs/earth.planetpack packs/himalaya.planetpack)
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-7s %-11s %6s %9s %9s %9s %9s %9s %9s %13s %9s %6s\n' detail loading frames cpu_med cpu_p99 thr_med thr_p99 gpu_med gpu_p99 pending_frames lowest_m holes
for detail in off on; do
    for loading in frame background; do
        stats="$out/$detail-$loading.json"
        target/release/planet-view "${packs[@]}" --headless --path packs/flythrough.json --fps 8 \
            --size 1920x1080 --detail "$detail" --loading "$loading" --stats "$stats" 2>/dev/null
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
      f"{pct(thread, .5):9.2f} {pct(thread, .99):9.2f} "
      f"{pct(gpu, .5):9.1f} {pct(gpu, .99):9.1f} {pending:13d} {lowest:9.2f} {holes:6d}")
PY
    done
done
