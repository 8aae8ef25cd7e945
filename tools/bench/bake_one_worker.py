#!/usr/bin/env python3
"""One-worker bake, audit and process CPU seconds of several planet-bake builds, runs
interleaved, best of ROUNDS: a change a tenth of the bake's time is lost in
whole runs on a shared machine, where one round of either build can take
1.5x its best; with one worker and many interleaved rounds it shows.
Also checks that every build wrote the same pack bytes.

usage: tools/bench/bake_one_worker.py ROUNDS OUT_DIR RASTER BAKE_BINARY...
"""
import filecmp
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    rounds, out, raster, builds = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
    out.mkdir(parents=True, exist_ok=True)
    best = {b: {} for b in builds}
    for _ in range(rounds):
        for k, build in enumerate(builds):
            pack, report = out / f"one-worker-{k}.planetpack", out / f"one-worker-{k}.json"
            start = time.monotonic()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            run = subprocess.run([build, "--jobs", "1", "--dem", raster, "--body", "earth", "--out", str(pack),
                                  "--report", str(report)], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"{build}: {run.stderr.strip()}", file=sys.stderr)
                return 1
            wall = time.monotonic() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            t = json.loads(report.read_text())["timings_s"]
            for key, value in (("bake", t["bake"]), ("audit", t["audit"]), ("total", t["total"]), ("wall", wall), ("cpu", cpu)):
                best[build][key] = min(best[build].get(key, float("inf")), value)
    print(f"{Path(raster).name}, best of {rounds}, seconds")
    for build in builds:
        print(f"{build}: " + ", ".join(f"{k} {v:.3f}" for k, v in best[build].items()))
    packs = [out / f"one-worker-{k}.planetpack" for k in range(len(builds))]
    same = all(filecmp.cmp(packs[0], p, shallow=False) for p in packs[1:])
    print("packs byte-identical" if same else "PACKS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
