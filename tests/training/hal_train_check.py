#!/usr/bin/python3
"""hal train on the CPU, as a user runs it.

1. The loss falls below LOSS_TARGET within STEPS steps (the default model:
   2 layers, d_model 128, 4 query heads on 2 kv heads, byte vocabulary 256, on
   Debian's GPL-3 text), with 2 threads, and the run takes under a minute.
   "Below" is the mean over the last 10 steps (a batch of 512 bytes makes one
   step's loss noisy). A model without working attention (a bigram model)
   stays near 2.5 on this text; with it, about 1.9-2.0 at step 150.
2. The same seed with 1 thread gives the same loss curve bit for bit.
3. --record then --compare on the CPU passes (bit for bit); a recording with
   one step's loss changed by 5% fails naming that step; a recording of
   another seed is refused as not comparable (30-step runs).
Usage: hal_train_check.py HAL_BINARY WORK_DIR
"""
import json
import os
import struct
import subprocess
import sys
import time

HAL, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
STEPS = 150
LOSS_TARGET = 2.2  # nats per byte; ln(256) = 5.55 at the start, the text's unigram entropy is about 3.0
TEXT = "/usr/share/common-licenses/GPL-3"
if not os.path.exists(TEXT):
    print(f"skipped: {TEXT} is absent (Debian's base-files ships it)")
    sys.exit(77)


def train(name, *extra, expect=0, steps=STEPS):
    cmd = [HAL, "train", "--device", "cpu", "--steps", str(steps), "--text", TEXT, *extra]
    if "--seed" not in extra:
        cmd += ["--seed", "5"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.monotonic() - t0
    print(f"{name}: exit {p.returncode} in {secs:.1f} s")
    sys.stdout.write(p.stdout[-600:])
    assert p.returncode == expect, f"{name}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}"
    return p, secs


rec = os.path.join(WORK, "cpu.safetensors")
j2, j1 = os.path.join(WORK, "t2.json"), os.path.join(WORK, "t1.json")
p, secs = train("2 threads", "--threads", "2", "--json", j2)
assert secs < 60, f"{STEPS} steps took {secs:.1f} s, the test allows 60"
assert "tokens/s" in p.stdout and "loss" in p.stdout, "no progress line"
curve2 = json.load(open(j2))["loss"]
assert len(curve2) == STEPS
first_below = next((i + 1 for i, l in enumerate(curve2) if l < LOSS_TARGET), None)
print(f"loss {curve2[0]:.4f} -> {curve2[-1]:.4f}; first below {LOSS_TARGET} at step {first_below}")
assert curve2[0] > 5.0, f"the first step's loss {curve2[0]} is not that of an untrained model"
last10 = sum(curve2[-10:]) / 10
print(f"mean of the last 10 steps {last10:.4f} (must be below {LOSS_TARGET})")
assert last10 < LOSS_TARGET, f"the loss did not fall below {LOSS_TARGET} in {STEPS} steps: last 10 steps' mean {last10:.4f}"

train("1 thread", "--threads", "1", "--json", j1, "--quiet")
curve1 = json.load(open(j1))["loss"]
# JSON numbers are printed with 17 significant digits: equal doubles print equal.
assert curve1 == curve2, "1 and 2 threads give different loss curves: " + str(
    next(i + 1 for i, (a, b) in enumerate(zip(curve1, curve2)) if a != b))

# Record and compare on a shorter run (the same code path, a quarter of the time).
SHORT = 30
train("record", "--record", rec, "--quiet", steps=SHORT)
p, _ = train("compare", "--compare", rec, "--quiet", steps=SHORT)
assert "bit for bit identical" in p.stdout, p.stdout

# A tampered recording: step 20's loss 5% higher.
data = bytearray(open(rec, "rb").read())
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
begin = 8 + n + header["loss"]["data_offsets"][0] + 19 * 8
(v,) = struct.unpack("<d", data[begin:begin + 8])
data[begin:begin + 8] = struct.pack("<d", v * 1.05)
bad = os.path.join(WORK, "tampered.safetensors")
open(bad, "wb").write(data)
p, _ = train("tampered", "--compare", bad, "--quiet", expect=1, steps=SHORT)
assert "step 20" in p.stderr, p.stderr

p, _ = train("other seed", "--compare", rec, "--quiet", "--seed", "6", expect=1, steps=SHORT)
assert "seed" in p.stderr and "not comparable" in p.stderr, p.stderr
print("hal train: all checks passed")
