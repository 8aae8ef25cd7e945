#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: system packages, formatting,
# lints as errors, unused dependencies, documentation with warnings as errors, the doc tests, a
# time-boxed fuzz run of the pack reader, then every test in the workspace
# (per-test time limits in .config/nextest.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# Dependencies a crate declares and never names (cargo-machete reads the sources).
cargo machete
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
cargo test --workspace --locked --doc
# The pack reader under coverage-guided fuzzing, seeded with a tiny pack of
# each codec; any crash fails the suite (FUZZ_SECONDS=0 skips it locally).
if [[ ${FUZZ_SECONDS:-30} -gt 0 ]]; then
    tools/fuzz.sh "${FUZZ_SECONDS:-30}" "$(mktemp -d)"
fi
# The end-to-end tests run the workspace's binaries: build them first.
# The binaries the system tests run, with the terrain core's test fixtures
# on as the test build has them: one compile of the workspace, not two (a
# production build, `cargo build --release`, leaves them out).
cargo build --workspace --bins --locked --features planet-terrain/testing
# nextest runs every other test binary, one process per test (window tests
# need that), and closes with a summary line of what ran.
cargo nextest run --workspace --locked --no-fail-fast
