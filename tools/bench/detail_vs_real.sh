#!/usr/bin/env bash
# Synthesized ground against the real ground it stands in for (issue #49):
# each real DEM is averaged by 8 in each direction, baked, read back at its
# own spacing with detail off and on, and compared with itself away from
# its edges: peaks plus pits per km², slope median and 99.9th percentile,
# detrended standard deviation of 4x4 to 16x16-sample windows. Writes one
# JSON line per DEM, a Markdown table of them, and GDAL hillshades of the
# real and synthesized ground side by side.
#
#   tools/bench/detail_vs_real.sh [--before REV] [--out DIR] [DEM...]
#
#   --before REV   also bake and read with the build of git revision REV
#                  (today's detail, say), built in DIR/before (given this
#                  build's `planet-pack points` if it predates it)
#   --out DIR      where everything goes (default target/detail-vs-real)
#   DEM...         default: the real DEMs tools/deps.sh installs
#
# Exits 1 when a detail-on figure of this build misses the issue's bounds;
# each miss is named.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/detail-vs-real
before=
dems=()
while (($#)); do
    case "$1" in
        --before) before=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -*) echo "detail_vs_real: unknown option '$1'" >&2; exit 2 ;;
        *) dems+=("$1"); shift ;;
    esac
done
if ((${#dems[@]} == 0)); then
    dems=(/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif
        /usr/local/share/planet/dems/olinda-utm25s-90m.tif
        /usr/local/share/planet/dems/minnesota-lidar-1m-utm15n.tif)
fi
cargo build --release --locked -q -p planet-bake -p planet-pack
mkdir -p "$out"
before_args=()
if [[ -n $before ]]; then
    tree="$out/before/src"
    rm -rf "$tree"
    git worktree prune
    git worktree add -q --detach "$tree" "$before"
    # The detail is synthesized by the reader, so "before" is that build's
    # planet-pack; a build older than `planet-pack points` gets this
    # build's command-line layer over its own terrain core.
    if ! grep -q "Points {" "$tree/tools/planet-pack/src/main.rs"; then
        git diff "$before" HEAD -- tools/planet-pack/src/main.rs tools/cli/src/args.rs | git -C "$tree" apply
    fi
    CARGO_TARGET_DIR="$out/before/target" cargo build --release --locked -q \
        --manifest-path "$tree/Cargo.toml" -p planet-bake -p planet-pack
    git worktree remove --force "$tree"
    before_args=(--before "$out/before/target/release/planet-bake" "$out/before/target/release/planet-pack")
fi
status=0
: >"$out/results.jsonl"
for dem in "${dems[@]}"; do
    name=$(basename "$dem" .tif)
    tools/bench/detail_vs_real.py "$dem" --bake target/release/planet-bake \
        --pack-tool target/release/planet-pack ${before_args[@]+"${before_args[@]}"} --work "$out/$name" \
        --hillshades "$out/hillshades" --check >>"$out/results.jsonl" || status=1
done
tools/bench/detail_vs_real_table.py "$out/results.jsonl" | tee "$out/table.md"
exit $status
