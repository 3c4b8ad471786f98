#!/usr/bin/env python3
"""Medians over the rounds in DIR (raw/*.json from run.sh): per shape and path,
gemm_fp8 and bf16 GEMM medians (ms), the per-run ratio fp8 rate / bf16 rate
(timed alternately in one run) and its median, and packed over dots."""
import glob, json, os, re, statistics, sys
from collections import defaultdict

rows = defaultdict(list)  # (shape, path) -> [(fp8 ms, bf16 ms, ratio)]
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    path = re.search(r"-(packed|dots)-r\d+\.json$", f).group(1)
    for r in json.load(open(f))["results"]:
        if "vendor" not in r:
            continue
        shape = "x".join(str(d) for d in r["dims"])
        rows[(shape, path)].append((r["hal"]["median_ms"], r["vendor"]["median_ms"], r["vendor"]["hal_over_vendor"]))

def key(shape):
    return [int(x) for x in shape.split("x")]

print("| M x N x K | path | runs | gemm_fp8 ms | bf16 GEMM ms | fp8/bf16 rate per run | median |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for shape in sorted({s for s, _ in rows}, key=key):
    for path in ("packed", "dots"):
        v = rows.get((shape, path))
        if not v:
            continue
        fp8 = statistics.median(x[0] for x in v)
        bf16 = statistics.median(x[1] for x in v)
        ratios = [x[2] for x in v]
        print(f"| {shape} | {path} | {len(v)} | {fp8:.2f} | {bf16:.2f} | {', '.join(f'{r:.2f}' for r in ratios)} | {statistics.median(ratios):.2f} |")
print()
print("| M x N x K | packed / dots, fp8/bf16 ratio medians |")
print("| --- | --- |")
for shape in sorted({s for s, _ in rows}, key=key):
    p, d = rows.get((shape, "packed")), rows.get((shape, "dots"))
    if p and d:
        print(f"| {shape} | {statistics.median(x[2] for x in p) / statistics.median(x[2] for x in d):.2f} |")
