#!/usr/bin/env bash
# Installs, idempotently, every system package Planet's build, tests and demo
# need on Debian 12 (run as root; a no-op when everything is present).
#
# Why a list per purpose: each later part (GDAL for the bake, Vulkan and
# lavapipe for the renderer, the demo data) adds its packages here, and the
# script stays the one place a fresh machine learns what Planet needs.
set -euo pipefail

BUILD=(pkg-config gcc g++ libgdal-dev) # zstd-sys builds C, libfuzzer-sys C++; planet-bake links GDAL
BENCH=(gdal-bin python3-gdal python3-numpy)  # peers in tools/bench (GDAL's COG)

PACKAGES=("${BUILD[@]}")
for arg in "$@"; do
    case "$arg" in
        --bench) PACKAGES+=("${BENCH[@]}") ;;
        *) echo "deps: unknown option '$arg' (known: --bench)" >&2; exit 2 ;;
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

for tool in cargo rustc cargo-fmt cargo-clippy cargo-nextest; do
    if ! command -v "$tool" >/dev/null; then
        echo "deps: '$tool' is not on PATH; Planet needs the machine's Rust toolchain (1.95) with rustfmt, clippy and cargo-nextest" >&2
        exit 1
    fi
done
