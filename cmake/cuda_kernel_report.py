#!/usr/bin/env python3
"""Per-kernel build report of the CUDA kernels (python3 stdlib only).

Write:  cuda_kernel_report.py --out report.json --kernel-file NAME PTXAS_LOG PTX_DIR ...
Check:  cuda_kernel_report.py --check-spills report.json
        exits 1 if any kernel whose name contains "gemm" or "attention"
        spills (spill stores or loads > 0) on any architecture.
        cuda_kernel_report.py --check-fp8-isa report.json
        exits 1 unless every hal_gemm_fp8_sm90a_* kernel has wgmma, TMA
        (cp.async.bulk.tensor) and setmaxnreg in its sm_90a PTX and
        hal_gemm_fp8_sm80 has mma.sync in its sm_80 PTX.
        cuda_kernel_report.py --check-attention-kernels report.json
        exits 1 unless every attention kernel the launchers name
        (ATTENTION_KERNELS: the forward with and without lse, the backward's
        delta, general and mma.sync kernels) is in the report for sm_80 and
        sm_90a, and the tensor-core ones (flash, *_mma_*) have mma.sync,
        ldmatrix and cp.async in their PTX on both.

Registers, spills, shared memory and stack come from the `ptxas -v` log.
Instruction families are counted in the PTX nvcc generated for each arch
(PTX_DIR/<name>.compute_XX.ptx, kept by cmake/cuda_run_nvcc.py), per .entry:
mma (mma.sync), wgmma (wgmma.mma_async), cp.async (not bulk),
cp.async.bulk.tensor (TMA), ldmatrix, stmatrix, setmaxnreg. PTX counts are
static instruction counts before ptxas, and robust without cuobjdump.
"""
import glob
import json
import os
import re
import sys

FAMILIES = {
    "mma": r"^\s*mma\.sync\b",
    "wgmma": r"^\s*wgmma\.mma_async\b",
    "cp.async": r"^\s*cp\.async\.(ca|cg)\b",
    "cp.async.bulk.tensor": r"^\s*cp\.async\.bulk\.tensor\b",
    "ldmatrix": r"^\s*ldmatrix\b",
    "stmatrix": r"^\s*stmatrix\b",
    "setmaxnreg": r"^\s*setmaxnreg\b",
}


def parse_ptxas(text):
    """{(kernel, arch): stats} from a ptxas -v log (several archs per log)."""
    out = {}
    kernel = arch = None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for '(sm_\w+)'", line)
        if m:
            kernel, arch = m.group(1), m.group(2)
            out[(kernel, arch)] = {"registers": 0, "spill_stores": 0, "spill_loads": 0,
                                   "shared_bytes": 0, "stack_frame": 0}
            continue
        if kernel is None:
            continue
        s = out[(kernel, arch)]
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            s["stack_frame"], s["spill_stores"], s["spill_loads"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            s["registers"] = int(m.group(1))
            m2 = re.search(r"(\d+) bytes smem", line)
            if m2:
                s["shared_bytes"] = int(m2.group(1))
    return out


def ptx_counts(ptx_dir):
    """{(kernel, "sm_XX"): {family: count}} from the kept per-arch PTX files."""
    out = {}
    for path in glob.glob(os.path.join(ptx_dir, "*.compute_*.ptx")):
        arch = "sm_" + re.search(r"\.compute_(\w+)\.ptx$", path).group(1)
        key = None
        for line in open(path, encoding="utf-8", errors="replace"):
            m = re.search(r"\.entry\s+(\w+)", line)
            if m:
                key = (m.group(1), arch)
                out[key] = {f: 0 for f in FAMILIES}
                continue
            if key is not None:
                for fam, pat in FAMILIES.items():
                    if re.search(pat, line):
                        out[key][fam] += 1
    return out


def write(args):
    out_path, files = None, []
    i = 0
    while i < len(args):
        if args[i] == "--out":
            out_path = args[i + 1]; i += 2
        elif args[i] == "--kernel-file":
            files.append(tuple(args[i + 1:i + 4])); i += 4
        else:
            print(f"unknown argument {args[i]}", file=sys.stderr)
            return 2
    kernels = []
    for name, log, ptx_dir in files:
        stats = parse_ptxas(open(log, encoding="utf-8", errors="replace").read())
        counts = ptx_counts(ptx_dir)
        for (kernel, arch), s in sorted(stats.items()):
            entry = {"file": name, "kernel": kernel, "arch": arch, **s}
            entry["instructions"] = counts.get((kernel, arch), {f: None for f in FAMILIES})
            kernels.append(entry)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"kernels": kernels, "instruction_counts_from": "ptx"}, f, indent=1)
    return 0


def check_spills(path):
    report = json.load(open(path, encoding="utf-8"))
    bad = [k for k in report["kernels"]
           if ("gemm" in k["kernel"] or "attention" in k["kernel"]) and (k["spill_stores"] or k["spill_loads"])]
    for k in bad:
        print(f"SPILL: {k['kernel']} ({k['arch']}, {k['file']}.cu): {k['spill_stores']} bytes spill stores, "
              f"{k['spill_loads']} bytes spill loads, {k['registers']} registers")
    print(f"{len(report['kernels'])} kernel/arch entries checked, {len(bad)} hot kernels spill")
    return 1 if bad else 0


# The fp8 GEMMs' instruction families per (kernel prefix, arch).
FP8_ISA = (("hal_gemm_fp8_sm90a_", "sm_90a", ("wgmma", "cp.async.bulk.tensor", "setmaxnreg")),
           ("hal_gemm_fp8_sm80", "sm_80", ("mma",)))


def check_fp8_isa(path):
    report = json.load(open(path, encoding="utf-8"))
    problems = []
    for prefix, arch, families in FP8_ISA:
        entries = [k for k in report["kernels"] if k["kernel"].startswith(prefix) and k["arch"] == arch]
        if not entries:
            problems.append(f"no {prefix}* kernel for {arch}")
        for k in entries:
            for fam in families:
                if not (k.get("instructions") or {}).get(fam):
                    problems.append(f"{k['kernel']} ({arch}): no {fam} instruction in its PTX")
    for p in problems:
        print("FAIL:", p)
    print(f"fp8 GEMM ISA check: {len(problems)} problems")
    return 1 if problems else 0


# Every attention kernel name the CUDA launchers use (backends/cuda/cuda_attention.cpp,
# backends/gpu/attention_backward_plan.cpp).
ATTENTION_KERNELS = (
    ["hal_attention_general", "hal_attention_general_lse"]
    + [f"hal_attention_flash_{t}_d{d}{lse}" for t in ("f16", "bf16") for d in (64, 128) for lse in ("", "_lse")]
    + [f"hal_attention_bwd_{k}_{t}" for k in ("delta", "dkdv_general", "dq_general") for t in ("f32", "f16", "bf16")]
    + [f"hal_attention_bwd_{k}_mma_{t}_d{d}" for k in ("dkdv", "dq") for t in ("f16", "bf16") for d in (64, 128)])
TENSOR_CORE_FAMILIES = ("mma", "ldmatrix", "cp.async")


def check_attention_kernels(path):
    report = json.load(open(path, encoding="utf-8"))
    by_key = {(k["kernel"], k["arch"]): k for k in report["kernels"]}
    problems = []
    for name in ATTENTION_KERNELS:
        for arch in ("sm_80", "sm_90a"):
            k = by_key.get((name, arch))
            if k is None:
                problems.append(f"{name}: not built for {arch}")
                continue
            if "_flash_" in name or "_mma_" in name:
                for fam in TENSOR_CORE_FAMILIES:
                    if not (k.get("instructions") or {}).get(fam):
                        problems.append(f"{name} ({arch}): no {fam} instruction in its PTX")
    for p in problems:
        print("FAIL:", p)
    print(f"attention kernels: {len(ATTENTION_KERNELS)} names x 2 archs, {len(problems)} problems")
    return 1 if problems else 0


def main():
    a = sys.argv[1:]
    if len(a) == 2 and a[0] == "--check-attention-kernels":
        return check_attention_kernels(a[1])
    if len(a) == 2 and a[0] == "--check-spills":
        return check_spills(a[1])
    if len(a) == 2 and a[0] == "--check-fp8-isa":
        return check_fp8_isa(a[1])
    return write(a)


if __name__ == "__main__":
    sys.exit(main())
