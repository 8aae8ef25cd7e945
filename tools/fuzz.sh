#!/usr/bin/env bash
# Coverage-guided fuzzing of the pack reader on the stable toolchain: the
# sanitizer-coverage passes cargo-fuzz would enable, without a nightly
# compiler. Seeds the corpus with the spec's tiny pack if it is empty.
#
# usage: tools/fuzz.sh [SECONDS] [CORPUS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
corpus=${2:-target/fuzz-corpus}
tools/deps.sh
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
  -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit target keeps the flags off build scripts.
target=$(rustc -vV | sed -n 's/^host: //p')
CARGO_TARGET_DIR=target/fuzz cargo build --locked --release --target "$target" -p planet-fuzz
mkdir -p "$corpus"
if [[ -z $(ls -A "$corpus") ]]; then
    # The spec's tiny pack: header and entry from the document, payload from zstd.
    python3 - "$corpus/tiny.planetpack" <<'PY'
import re, struct, subprocess, sys, zlib
doc = open("docs/planetpack.md").read()
block = doc[doc.index("<!-- test-vector:begin -->"):doc.index("<!-- test-vector:end -->")]
head = bytearray(b"".join(bytes.fromhex(l.split(":", 1)[1].replace(" ", "")) for l in block.splitlines() if re.match(r"^[0-9a-f]{4}:", l)))
payload = subprocess.run(["zstd", "-3", "-q", "-c", "--no-check"], input=bytes(34322), capture_output=True, check=True).stdout
struct.pack_into("<I", head, 272, len(payload)); struct.pack_into("<I", head, 276, zlib.crc32(payload))
struct.pack_into("<Q", head, 136, len(head) + len(payload))
struct.pack_into("<I", head, 208, zlib.crc32(bytes(head[256:296]))); struct.pack_into("<I", head, 252, zlib.crc32(bytes(head[:252])))
open(sys.argv[1], "wb").write(bytes(head) + payload)
PY
fi
"target/fuzz/$target/release/adopt_pack" -max_len=8192 -max_total_time="$seconds" -print_final_stats=1 "$corpus"
