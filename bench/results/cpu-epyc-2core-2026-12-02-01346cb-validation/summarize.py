# Medians of the alternating HAL_VALIDATE=1 / =0 `hal bench` runs in a folder.
# Usage: /usr/bin/python3 summarize.py six-cases
import collections, glob, json, statistics, sys

runs = collections.defaultdict(lambda: {0: [], 1: []})
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    on = int(f.rsplit("_v", 1)[1][0])
    for r in json.load(open(f))["results"]:
        runs[r["case"]][on].append(r["hal"]["median_ms"] * 1000)
for case, x in runs.items():
    a, b = statistics.median(x[1]), statistics.median(x[0])
    print(f"{case:18s} on {a:5.2f} us [{min(x[1]):.2f}, {max(x[1]):.2f}]  off {b:5.2f} us [{min(x[0]):.2f}, {max(x[0]):.2f}]"
          f"  on - off {a - b:+.2f} us")
