#!/usr/bin/env bash
# Coverage-guided fuzzing of the pack reader on the stable toolchain: the
# sanitizer-coverage passes cargo-fuzz would enable, without a nightly
# compiler. Seeds an empty corpus with one tiny pack per codec (0, 1, 2).
# CI runs it time-boxed (tools/test.sh); a crash fails the run and leaves
# the input under target/fuzz-artifacts/.
#
# usage: tools/fuzz.sh [SECONDS] [CORPUS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
corpus=${2:-target/fuzz-corpus}
tools/deps.sh
mkdir -p "$corpus"
if [[ -z $(ls -A "$corpus") ]]; then
    # One tiny pack per codec (0, 1, 2), made by the real writer, built
    # without the coverage flags below.
    cargo run -q --locked -p planet-terrain --example fuzz_seeds -- "$corpus"
fi
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
  -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit target keeps the flags off build scripts.
target=$(rustc -vV | sed -n 's/^host: //p')
CARGO_TARGET_DIR=target/fuzz cargo build --locked --release --target "$target" -p planet-fuzz
mkdir -p target/fuzz-artifacts
"target/fuzz/$target/release/adopt_pack" -max_len=8192 -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix=target/fuzz-artifacts/ "$corpus"
