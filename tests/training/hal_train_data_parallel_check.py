#!/usr/bin/python3
"""mpiexec -np 2 hal train --data-parallel on the CPU: the ranks train on
different batches (their loss curves differ), their gradients are averaged
before each AdamW step, and every rank ends with bitwise identical parameters
(hal train checks it with all_gather and exits 1 otherwise). The loss falls.
Usage: hal_train_data_parallel_check.py MPIEXEC HAL_BINARY WORK_DIR
"""
import json
import os
import subprocess
import sys

MPIEXEC, HAL, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)
TEXT = "/usr/share/common-licenses/GPL-3"
if not os.path.exists(TEXT):
    print(f"skipped: {TEXT} is absent")
    sys.exit(77)
out = os.path.join(WORK, "rank{rank}.json")
cmd = [MPIEXEC, "--oversubscribe", "--timeout", "120", "-np", "2", HAL, "train", "--data-parallel", "--device", "cpu",
       "--threads", "1", "--steps", "40", "--seed", "2", "--text", TEXT, "--json", out]
p = subprocess.run(cmd, capture_output=True, text=True)
print(p.stdout[-800:], p.stderr[-800:])
assert p.returncode == 0, f"exit {p.returncode}"
assert "2 ranks, gradients averaged each step; every rank's 21 parameters bitwise identical" in p.stdout, p.stdout
c0 = json.load(open(out.format(rank=0)))
c1 = json.load(open(out.format(rank=1)))
assert c0["ranks"] == "2" and c1["ranks"] == "2"
assert c0["loss"] != c1["loss"], "both ranks saw the same batches"
assert c0["loss"][-1] < c0["loss"][0] - 2.0, f"the loss did not fall: {c0['loss'][0]} -> {c0['loss'][-1]}"
print("data-parallel hal train: all checks passed")
