#!/usr/bin/env bash
# The reliability probes of issue #31, each a command that once did harm
# with exit 0 (or hung, or panicked), run against the release binaries;
# prints one table row per probe: what was run, the exit status, whether
# every input was left byte for byte as it was, and the last line said
# (the error chain's root cause).
#
#   tools/probes.sh            (needs release builds: cargo build --release --bins)
#
# A probe passes when the command refuses (status 1, or 2 for a flag clap
# refuses; never 101, a panic), names the
# rule, and leaves its inputs untouched; a "job goes on" probe passes when
# the job succeeds with its stderr closed.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=target/release
dem=/usr/local/share/planet/dems/olinda-utm25s-90m.tif
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$dem" "$work/dem.tif"
"$bin/planet-bake" --dem "$work/dem.tif" --body earth --out "$work/o.planetpack" >/dev/null 2>&1
ln -s o.planetpack "$work/link.planetpack"
mkfifo "$work/pack.fifo"
mkdir "$work/dir"
sums() { sha256sum "$work/dem.tif" "$work/o.planetpack" | cut -c1-16 | tr '\n' ' '; }
before=$(sums)
printf '| probe | status | inputs intact | said |\n|---|---:|---|---|\n'
probe() {
    local name=$1; shift
    (cd "$work" && timeout 20 "$@" >/dev/null 2>"$work/said")
    local status=$?
    local said
    said=$(grep -v -e "^\[" -e "^For more information" -e "^$" "$work/said" | tail -1)
    local intact=yes
    [[ $(sums) == "$before" ]] || intact=NO
    printf '| %s | %s | %s | %s |\n' "$name" "$status" "$intact" "${said:0:110}"
}
B=$PWD/$bin
probe "bake --out over --dem" "$B/planet-bake" --dem dem.tif --body earth --out dem.tif
probe "bake --report over --out" "$B/planet-bake" --dem dem.tif --body earth --out x.planetpack --report ./x.planetpack
probe "bake --report over --dem" "$B/planet-bake" --dem dem.tif --body earth --out x.planetpack --report dem.tif
probe "bake digest --out over --dem" "$B/planet-bake" digest --dem dem.tif --body earth --out dem.tif
probe "bake --report where nothing can be written" "$B/planet-bake" --dem dem.tif --body earth --out x.planetpack --report /proc/self/r.json
probe "pack map P --png P" "$B/planet-pack" map o.planetpack --png o.planetpack
probe "pack tile --png through a link to P" "$B/planet-pack" tile o.planetpack 0/0/0/0 --png link.planetpack
probe "pack tile --png X --heights X" "$B/planet-pack" tile o.planetpack 0/0/0/0 --png t.png --heights ./t.png
probe "pack upgrade --out a link to P" "$B/planet-pack" upgrade o.planetpack --out link.planetpack
probe "pack upgrade --out DIR" "$B/planet-pack" upgrade o.planetpack --out dir
probe "pack info on a FIFO" "$B/planet-pack" info pack.fifo
probe "pack repair of nothing" "$B/planet-pack" repair typo.planetpack
probe "view --shot P" "$B/planet-view" o.planetpack --shot o.planetpack --size 32x24
probe "view --shot X --stats X" "$B/planet-view" o.planetpack --shot s.png --stats ./s.png --size 32x24
probe "view --agl -100" "$B/planet-view" o.planetpack --agl -100 --shot s.png --size 32x24
probe "bake --landmark the raster contradicts" "$B/planet-bake" --dem dem.tif --body earth --out y.planetpack --landmark=-8.0,-34.9,5000,6000
# The job goes on with its stderr closed (a log reader that left).
closed() {
    local name=$1; shift
    local status
    status=$(cd "$work" && python3 -c '
import os, subprocess, sys
r, w = os.pipe(); os.close(r)
print(subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=w).returncode)' "$@")
    printf '| %s | %s | %s | %s |\n' "$name" "$status" "$([[ $(sums) == "$before" ]] && echo yes || echo NO)" "(its stderr a pipe nobody reads)"
}
closed "bake with stderr closed" "$B/planet-bake" --dem dem.tif --body earth --out z.planetpack
closed "pack verify with stderr closed" "$B/planet-pack" verify o.planetpack
