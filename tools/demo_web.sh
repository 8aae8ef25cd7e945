#!/usr/bin/env bash
# The web demo (issue #53): the demo's Earth with the High Sierra over it
# (tools/demo/packs.sh bakes them, or keeps them when nothing changed),
# exported as Cesium quantized-mesh tiles into packs/web/site/tiles, served
# on loopback beside CesiumJS (npm's `cesium`, tools/web) and a page that
# flies from orbit to the Palisades over them.
#
#   tools/demo_web.sh [--serve] [--port N]
#
# Where there is a display, or with --serve, it prints the page's URL and
# serves until interrupted. Where there is none it drives headless Chromium
# (npm's puppeteer-core, tools/web/cesium_view.mjs) through the page: a
# picture from orbit (packs/web/orbit.png) and one at the flight's end
# (packs/web/palisades.png), with the height CesiumJS draws at North
# Palisade there beside what `planet-pack sample` says.
set -euo pipefail
cd "$(dirname "$0")/.."
serve=0
port=
while (($#)); do
    case "$1" in
        --serve) serve=1; shift ;;
        --port) port=$2; shift 2 ;;
        *) echo "demo_web: unknown option '$1' (known: --serve, --port N)" >&2; exit 2 ;;
    esac
done
tools/deps.sh --demo
# Both packs, baked or kept (sets `bin` and `stack`).
# shellcheck source=tools/demo/packs.sh
source tools/demo/packs.sh

site=packs/web/site
mkdir -p "$site"
# Resumable: a killed export run again writes only the tiles it lacks. A
# directory exported from packs that have changed since (or by another
# planet-pack) is refused; start that one over.
if ! $bin/planet-pack export "${stack[@]}" --quantized-mesh "$site/tiles" 2>packs/web/export.log; then
    if grep -q "holds an export made from" packs/web/export.log; then
        echo "demo_web: the packs or planet-pack changed since the last export; exporting again"
        rm -rf "$site/tiles"
        $bin/planet-pack export "${stack[@]}" --quantized-mesh "$site/tiles"
    else
        cat packs/web/export.log >&2
        exit 1
    fi
else
    tail -n 1 packs/web/export.log
fi
ln -sfn "$PWD/tools/web/node_modules/cesium/Build/Cesium" "$site/Cesium"
cp tools/web/cesium_view.html "$site/index.html"

port=${port:-$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
/usr/bin/python3 -m http.server --bind 127.0.0.1 "$port" --directory "$site" >packs/web/server.log 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null' EXIT
for _ in $(seq 50); do
    /usr/bin/python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/tiles/layer.json')" \
        2>/dev/null && break
    sleep 0.1
done

# From 12,000 km over the Sierra down to 5.2 km above sea level south-east of
# North Palisade (4,291 m in the SRTM), looking north-west, a summer morning.
orbit="lat=37.1&lon=-118.5&alt=12000000&heading=0&pitch=-90&time=2026-06-21T15:30:00Z"
palisades="37.03,-118.43,5200,315,-10"
base="http://127.0.0.1:$port/index.html"
echo
echo "CesiumJS flying from orbit to the Palisades over the export:"
echo "  $base?$orbit&to=$palisades&seconds=20"
if ((serve)) || [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} ]]; then
    echo "Open it in a browser; serving $site until interrupted (Ctrl-C)."
    wait "$server"
    exit 0
fi
echo "No display: headless Chromium through the page instead."
north_palisade="37.0942,-118.5142"
node tools/web/cesium_view.mjs "$base?$orbit" packs/web/orbit.png
node tools/web/cesium_view.mjs "$base?$orbit&to=$palisades&seconds=20" packs/web/palisades.png "$north_palisade"
printf 'planet-pack sample at North Palisade: '
$bin/planet-pack sample "${stack[@]}" --lat 37.0942 --lon -118.5142 --detail off
echo "Pictures: packs/web/orbit.png, packs/web/palisades.png (the heights above: what CesiumJS draws there)."
