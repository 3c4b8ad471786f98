"""`hal collective` under mpiexec: results against numpy in float64, and a
missing input on one rank reported by every rank (exit 1, no hang).

usage: cli_collective_test.py MPIEXEC HAL WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

mpiexec, hal, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
P = 2
base = [mpiexec, "--oversubscribe", "--timeout", "60", "-np", str(P), hal, "collective"]
rng = np.random.default_rng(7)
xs = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(P)]
for r, x in enumerate(xs):
    np.save(os.path.join(work, f"x{r}.npy"), x)
failures = 0


def run(*args, expect_rc=0):
    p = subprocess.run(base + list(args), cwd=work, capture_output=True, text=True, timeout=90)
    if p.returncode != expect_rc:
        print(f"FAIL: {args}: exit {p.returncode}, expected {expect_rc}\n{p.stdout}{p.stderr}")
        return None
    return p


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL:", what)


exact = sum(x.astype(np.float64) for x in xs)
if run("all_reduce", "--in", "x=x{rank}.npy", "--out", "y=y{rank}.npy", "op=sum"):
    for r in range(P):
        y = np.load(os.path.join(work, f"y{r}.npy"))
        # Two f32 terms: one rounding of the exact sum.
        check(np.array_equal(y, exact.astype(np.float32)), f"all_reduce sum on rank {r}")
if run("all_reduce", "--in", "x=x{rank}.npy", "--out", "y=m.npy", "op=max"):
    check(np.array_equal(np.load(os.path.join(work, "m.npy")), np.maximum(xs[0], xs[1])), "all_reduce max")
if run("all_gather", "--in", "x=x{rank}.npy", "--out", "y=g{rank}.npy"):
    check(np.array_equal(np.load(os.path.join(work, "g1.npy")), np.concatenate(xs)), "all_gather")
p = subprocess.run(
    [mpiexec, "--oversubscribe", "--timeout", "60", "-np", "1", hal, "collective", "all_to_all", "--in",
     "x=x0.npy", "--out", "y=t.npy", "send_counts=4", "recv_counts=4"], cwd=work, capture_output=True, text=True,
    timeout=90)
check(p.returncode == 0 and np.array_equal(np.load(os.path.join(work, "t.npy")), xs[0]), "all_to_all on one rank")
p = run("all_reduce", "--in", "x=missing{rank}.npy", "--out", "y=z.npy", expect_rc=1)
check(p is not None and p.stderr.count("missing0.npy") >= 2, "a missing input reported on every rank")
check(not os.path.exists(os.path.join(work, "z.npy")), "no output after an error")
p = run("all_reduce", "--in", "x=x{rank}.npy", "--out", "y=z.npy", "op=median", expect_rc=2)
check(p is not None and "op: expected sum, avg, max or min" in p.stderr, "a bad op= is a usage error")
print("cli_collective_test:", "FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
