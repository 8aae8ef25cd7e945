#!/usr/bin/env bash
# The demo Earth over HTTP: the packs tools/demo.sh baked, served by nginx
# on loopback behind a proxy that adds LATENCY_MS (default 20) to every
# request, opened by URL and flown. It prints what the first complete
# frame cost (requests, bytes, seconds) cold and then from the disk cache,
# and ends in the viewer: a window where there is a display, otherwise the
# headless fly-through of tools/demo.sh, every frame to packs/flythrough-http/.
#
#   tools/demo.sh        # first: bakes packs/earth.planetpack and packs/himalaya.planetpack
#   tools/demo_http.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
for pack in packs/earth.planetpack packs/himalaya.planetpack packs/flythrough.json; do
    [[ -f $pack ]] || { echo "demo_http: $pack is missing: run tools/demo.sh first" >&2; exit 1; }
done
cargo build --release --locked -q -p planet-pack -p planet-view
bin=target/release
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
latency=${LATENCY_MS:-20}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
server_port=$(free_port)
proxy_port=$(free_port)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
tools/http/serve.sh packs "$server_port" & pids+=($!)
python3 tools/http/latency_proxy.py "$proxy_port" "$server_port" "$latency" & pids+=($!)
for port in "$server_port" "$proxy_port"; do
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
done
base="http://127.0.0.1:$proxy_port"
stack=("$base/earth.planetpack" "$base/himalaya.planetpack")
cache=packs/http-cache
rm -rf "$cache"
echo "Serving packs/ with nginx on 127.0.0.1:$server_port, through a proxy adding $latency ms per request: $base"
$bin/planet-pack info "${stack[0]}" --cache "$cache" | head -12
echo
shot() {
    local name=$1
    local start end
    start=$(date +%s.%N)
    $bin/planet-view "${stack[@]}" --cache "$cache" --lat 27.9 --lon 86.9 --alt 60000 --heading 40 --pitch -35 \
        --size 1280x720 --shot "packs/$name.png" --stats "packs/$name.json" >/dev/null
    end=$(date +%s.%N)
    python3 - "packs/$name.json" "$start" "$end" "$name" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
r = s["remote"]
print(f"{sys.argv[4]:<10} first complete frame in {float(sys.argv[3]) - float(sys.argv[2]):.2f} s wall "
      f"({s['frames_rendered']} frames): {r['requests']} requests, {r['bytes'] / 1e6:.2f} MB, {r['retries']} retries")
PY
}
shot http-cold
shot http-warm
echo
if [[ -n ${DISPLAY:-} ]]; then
    echo "Opening planet-view on the demo Earth over HTTP."
    $bin/planet-view "${stack[@]}" --cache "$cache" --lat 27.9 --lon 86.9 --alt 20000000 --pitch -90
else
    echo "No display: the demo fly-through over HTTP, headless, tiles loaded in the background; every frame goes"
    echo "to packs/flythrough-http/, the per-frame log to packs/flythrough-http.stats.json."
    rm -rf packs/flythrough-http
    $bin/planet-view "${stack[@]}" --cache "$cache" --path packs/flythrough.json --frames packs/flythrough-http \
        --fps 8 --size 960x540 --hud --loading background --stats packs/flythrough-http.stats.json
fi
