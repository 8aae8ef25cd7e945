#!/usr/bin/env bash
# The frame-time cost of a second view (#54 item 2): the demo's scripted
# flight (15 s from 20,000 km over India to 2 m near Everest) flown headless
# twice back to back, alone and with --view2 (a fixed camera 30 km up
# south of Everest looking north), each view --size, tiles on the frame so
# both runs upload the same tiles in the same frames. Prints one row per run:
# frames, host CPU and the frame thread's CPU (median and p99), the thread's
# selection, residency, records and render phases (medians), GPU time
# (median and p99: lavapipe's timestamps, both views' passes), and the hole
# pixels and second-view error over the flight.
# Usage: tools/bench/second_view.sh [SIZE] [planet-view binary]
# On a machine without a GPU, set VK_DRIVER_FILES to lavapipe's ICD.
set -euo pipefail
size=${1:-960x540}
view=${2:-target/release/planet-view}
path=packs/flythrough.json
[ -f "$path" ] || { echo "second_view.sh: $path missing: run tools/demo.sh first" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-8s %6s %8s %8s %8s %8s %7s %7s %7s %7s %8s %8s %6s %8s\n' views frames cpu_med cpu_p99 thr_med thr_p99 \
    select resid records render gpu_med gpu_p99 holes err2_max
for run in one two; do
    extra=()
    [ "$run" = two ] && extra=(--view2=27.7,86.9,30000,0,-12)
    "$view" packs/earth.planetpack --headless --path "$path" --fps 4 --size "$size" --loading frame \
        --stats "$out/$run.json" "${extra[@]}" >/dev/null 2>&1
    python3 - "$out/$run.json" "$run" <<'PY'
import json, statistics, sys
log = json.load(open(sys.argv[1]))
frames = log["frames"]
def q(values, p):
    values = sorted(v for v in values if v is not None)
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")
col = lambda key: [f[key] for f in frames]
phase = lambda key: statistics.median(f["thread_cpu_phases_ms"][key] for f in frames)
holes = sum(f["hole_pixels"] or 0 for f in frames)
err2 = max((f["view2"]["effective_screen_error_pixels"] for f in frames if f.get("view2")), default=float("nan"))
print(f"{sys.argv[2]:<8} {len(frames):>6} {q(col('cpu_ms'), .5):8.1f} {q(col('cpu_ms'), .99):8.1f} "
      f"{q(col('thread_cpu_ms'), .5):8.1f} {q(col('thread_cpu_ms'), .99):8.1f} {phase('selection'):7.2f} "
      f"{phase('residency'):7.2f} {phase('records'):7.2f} {phase('render'):7.2f} {q(col('gpu_ms'), .5):8.1f} "
      f"{q(col('gpu_ms'), .99):8.1f} {holes:>6} {err2:8.2f}")
PY
done
