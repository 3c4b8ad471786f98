#!/usr/bin/env python3
"""Draws a roofline picture from `hal bench --json` output.

usage: plot_roofline.py RESULTS.json OUT.png

Each case is placed at its arithmetic intensity (FLOP per byte that must move)
and achieved rate; memory-bound cases are drawn at their achieved bandwidth
times their intensity, so everything shares one TFLOP/s axis. The roofline is
min(peak, intensity * copy bandwidth), both measured in the same run (peak:
the best vendor GEMM rate; else the nominal bf16 peak). hal is drawn beside
the vendor library.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    with open(sys.argv[1]) as f:
        run = json.load(f)
    results = run["results"]
    bw = run["ceilings"]["copy_gbps"] * 1e9
    vendor_rates = [r["vendor"]["rate"] for r in results if "vendor" in r]
    peak = max(vendor_rates) * 1e12 if vendor_rates else run["ceilings"]["nominal_bf16_tflops"] * 1e12
    fig, ax = plt.subplots(figsize=(8, 5.5))
    xs = [10 ** (e / 10) for e in range(-20, 41)]
    ax.plot(xs, [min(peak, x * bw) / 1e12 for x in xs], "k-", lw=1.5, label="roofline (measured)")
    for r in results:
        if "hal" not in r or r["bytes"] <= 0:
            continue
        if r["flops"] > 0:
            intensity = r["flops"] / r["bytes"]
            ax.scatter(intensity, r["hal"]["rate"], c="tab:blue", marker="o", s=18)
            if "vendor" in r:
                ax.scatter(intensity, r["vendor"]["rate"], c="tab:red", marker="x", s=18)
        else:
            # Memory-bound: achieved GB/s at an intensity of 1 FLOP/byte, for scale.
            ax.scatter(0.25, r["hal"]["rate"] * 0.25 * 1e9 / 1e12, c="tab:green", marker="s", s=12)
    ax.scatter([], [], c="tab:blue", marker="o", label="hal (matrix ops)")
    ax.scatter([], [], c="tab:red", marker="x", label="vendor library")
    ax.scatter([], [], c="tab:green", marker="s", label="hal memory-bound ops (x 0.25 FLOP/B)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{run['model']} ({run['device']}), commit {run.get('commit', '')[:10]}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
