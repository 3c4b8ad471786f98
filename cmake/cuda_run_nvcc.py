#!/usr/bin/env python3
"""Runs nvcc, writing its combined output (the ptxas -v report) to a log file.

usage: cuda_run_nvcc.py --log FILE [--keep-ptx DIR] -- nvcc args...
On failure the output is also printed, so the build shows the error.
With --keep-ptx, nvcc keeps its intermediates in DIR and everything but the
per-arch PTX (<name>.compute_XX.ptx, read by cuda_kernel_report.py) is removed."""
import glob
import os
import subprocess
import sys


def main() -> int:
    args = sys.argv[1:]
    keep = None
    if len(args) >= 4 and args[2] == "--keep-ptx":
        keep = args[3]
        args = args[:2] + args[4:]
    if len(args) < 4 or args[0] != "--log" or args[2] != "--":
        print("usage: cuda_run_nvcc.py --log FILE [--keep-ptx DIR] -- nvcc args...", file=sys.stderr)
        return 2
    log, cmd = args[1], args[3:]
    if keep:
        os.makedirs(keep, exist_ok=True)
        for old in glob.glob(os.path.join(keep, "*")):
            os.remove(old)
        cmd = cmd[:1] + ["--keep", "--keep-dir", keep] + cmd[1:]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(log, "w", encoding="utf-8") as f:
        f.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout)
    if keep:
        for f in glob.glob(os.path.join(keep, "*")):
            if not f.endswith(".ptx"):
                os.remove(f)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
