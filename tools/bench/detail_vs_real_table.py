#!/usr/bin/python3
"""The JSON lines of detail_vs_real.py as one Markdown table: per DEM, the
real ground's figures, then each synthesized ground's with its ratio to the
real (the difference for the 99.9th percentile slope), and the misses."""

import json
import sys

COLUMNS = ("peaks+pits /km²", "slope median °", "slope p99.9 °", "std 4x4 m", "std 8x8 m", "std 16x16 m")
LABELS = {"real": "real", "detail-off": "detail off", "before-detail-on": "before", "detail-on": "this build"}


def cells(figures, real):
    values = cells_values(figures)
    if real is None:
        return [f"{v:g}" for v in values]
    reals = cells_values(real)
    out = []
    for k, (v, r) in enumerate(zip(values, reals)):
        out.append(f"{v:g} ({v - r:+.1f})" if k == 2 else f"{v:g} ({v / r:.2f}x)" if r else f"{v:g}")
    return out


def cells_values(figures):
    return [figures["extrema_per_km2"], figures["slope_median_deg"], figures["slope_p999_deg"],
            *(figures["window_std_m"][w] for w in ("4", "8", "16"))]


def main():
    print("| DEM | ground | " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---:|" * len(COLUMNS))
    for line in open(sys.argv[1]):
        report = json.loads(line)
        for key, label in LABELS.items():
            if key in report:
                real = None if key == "real" else report["real"]
                print(f"| {report['dem']} | {label} | " + " | ".join(cells(report[key], real)) + " |")
        verdict = "; ".join(report["misses"]) or "within every bound"
        print(f"| {report['dem']} | **this build** | {verdict} |" + " |" * (len(COLUMNS) - 1))


if __name__ == "__main__":
    main()
