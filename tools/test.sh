#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: system packages, formatting,
# lints as errors, then every test in the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# The fuzz target links libFuzzer; clippy only checks it, so build it.
cargo build --locked -p planet-fuzz
cargo test --workspace --locked --doc
# nextest runs every other test binary, one process per test (window tests
# need that), and closes with a summary line of what ran.
cargo nextest run --workspace --locked --no-fail-fast
