#!/usr/bin/env python3
"""Per-kernel build report of the CUDA kernels (python3 stdlib only).

Write:  cuda_kernel_report.py --out report.json --kernel-file NAME PTXAS_LOG PTX_DIR ...
Check:  cuda_kernel_report.py --check-spills report.json
        exits 1 if any kernel whose name contains "gemm", "attention" or
        "embedding_backward", the general softmax or a 16-bit packed row /
        elementwise kernel (NO_SPILL_*) spills (spill stores or loads > 0) on
        any architecture, or if one of the named row / elementwise kernels or
        a kernel of REQUIRED_KERNELS is missing on an architecture the report
        holds.
        cuda_kernel_report.py --check-fp8-isa report.json
        exits 1 unless every hal_gemm_fp8_sm90a_* kernel has wgmma, TMA
        (cp.async.bulk.tensor) and setmaxnreg in its sm_90a PTX and
        hal_gemm_fp8_sm80 has mma.sync in its sm_80 PTX.
        cuda_kernel_report.py --check-attention-sm90a report.json
        exits 1 unless each of the four hal_attention_sm90a_<f16|bf16>_d<64|128>
        forward kernels, their eight schedule variants
        hal_attention_sm90a_<f16|bf16>_d<64|128>_<overlap|pingpong>, and the
        eight backward kernels
        hal_attention_bwd_<dkdv|dq>_sm90a_<f16|bf16>_d<64|128> is in the
        report for sm_90a with wgmma, TMA and setmaxnreg in its PTX, no spills
        and no stack frame, and exactly 168 registers (the count their
        setmaxnreg 24/240 split redistributes: with fewer, the consumers'
        setmaxnreg.inc would wait forever).
        cuda_kernel_report.py --check-decode-isa report.json
        exits 1 unless every decode GEMM pass-1 kernel
        (hal_gemm_decode_<f16|bf16>_m<8|16|32|64>) and hal_gemm_decode_reduce
        is built for sm_80 and sm_90a, and each pass-1 kernel has mma.sync and
        16-byte global loads (ld.global...v4) in its PTX; the same for every
        fp8 decode GEMM pass-1 kernel (hal_gemm_fp8_decode_<a>_<b>_m*, a, b =
        e4m3 / e5m2), whose sm_90a PTX must also have the fp8 mma.sync
        (m16n8k32 .e4m3/.e5m2: family "mma.fp8").
        cuda_kernel_report.py --check-attention-kernels report.json
        exits 1 unless every attention kernel the launchers name
        (ATTENTION_KERNELS: the forward with and without lse, the backward's
        delta, general, mma.sync and sm_90a kernels) is in the report for sm_80 and
        sm_90a, and the tensor-core ones (flash, *_mma_*) have mma.sync,
        ldmatrix and cp.async in their PTX on both.

Registers, spills, shared memory and stack come from the `ptxas -v` log.
Instruction families are counted in the PTX nvcc generated for each arch
(PTX_DIR/<name>.compute_XX.ptx, kept by cmake/cuda_run_nvcc.py), per .entry:
mma (mma.sync), mma.fp8 (its fp8 m16n8k32 form), wgmma (wgmma.mma_async), cp.async (not bulk),
cp.async.bulk.tensor (TMA), ldmatrix, stmatrix, setmaxnreg, ld.global.v4
(16-byte global loads). PTX counts are
static instruction counts before ptxas, and robust without cuobjdump.
"""
import glob
import json
import os
import re
import sys

FAMILIES = {
    "mma": r"^\s*mma\.sync\b",
    # mma.sync with fp8 operands (m16n8k32 .e4m3 / .e5m2, sm_89+).
    "mma.fp8": r"^\s*mma\.sync\S*\.m16n8k32\S*\.e[45]m[23]\b",
    "wgmma": r"^\s*wgmma\.mma_async\b",
    "cp.async": r"^\s*cp\.async\.(ca|cg)\b",
    "cp.async.bulk.tensor": r"^\s*cp\.async\.bulk\.tensor\b",
    "ldmatrix": r"^\s*ldmatrix\b",
    "stmatrix": r"^\s*stmatrix\b",
    "setmaxnreg": r"^\s*setmaxnreg\b",
    # 16-byte global loads (any cache qualifiers), predicated or not.
    "ld.global.v4": r"^\s*(@!?%p\d+\s+)?ld\.global\S*\.v4\.(u32|b32|f32|s32)\b",
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


# Row and elementwise kernels that must not spill either (issue 24): the
# general softmax (it spilled 4 / 16 bytes at 40 registers in the reports of
# aa36394 and aef8be6) and the 16-bit packed variants, by exact name or prefix.
NO_SPILL_NAMES = ("hal_softmax_rows",)
NO_SPILL_PREFIXES = ("hal_softmax_rows_reg16_", "hal_norm_rows_reg16_", "unary_packed_", "binary_packed_",
                     "swiglu_packed_")
# Each prefix must match this many kernels on every arch (dtype x row group x mask).
NO_SPILL_EXPECTED = {"hal_softmax_rows_reg16_": 12, "hal_norm_rows_reg16_": 6, "unary_packed_": 2,
                     "binary_packed_": 2, "swiglu_packed_": 2}
# Kernels held to the no-spill rule by a part of their name.
NO_SPILL_SUBSTRINGS = ("gemm", "attention", "embedding_backward")
# Kernels that must be in the report for every architecture it holds
# (embedding_backward's, never run on a GPU: their build facts are all that checks them).
REQUIRED_KERNELS = tuple("hal_embedding_backward_" + n for n in (
    "check", "keys", "sort_local", "sort_step", "sort_merge", "segments_count", "segments_scan", "segments_write",
    "accumulate"))


def must_not_spill(name):
    return (any(n in name for n in NO_SPILL_SUBSTRINGS) or name in NO_SPILL_NAMES
            or any(name.startswith(p) for p in NO_SPILL_PREFIXES))


def check_spills(path):
    report = json.load(open(path, encoding="utf-8"))
    kernels = report["kernels"]
    bad = [k for k in kernels if must_not_spill(k["kernel"]) and (k["spill_stores"] or k["spill_loads"])]
    for k in bad:
        print(f"SPILL: {k['kernel']} ({k['arch']}, {k['file']}.cu): {k['spill_stores']} bytes spill stores, "
              f"{k['spill_loads']} bytes spill loads, {k['registers']} registers")
    # The named kernels must be in the report (a renamed kernel would pass unchecked).
    missing = []
    archs = sorted({k["arch"] for k in kernels})
    for arch in archs:
        names = {k["kernel"] for k in kernels if k["arch"] == arch}
        for n in NO_SPILL_NAMES + REQUIRED_KERNELS:
            if n not in names:
                missing.append(f"{n} ({arch})")
        for prefix, count in NO_SPILL_EXPECTED.items():
            got = sum(1 for n in names if n.startswith(prefix))
            if got != count:
                missing.append(f"{prefix}* ({arch}): {got} kernels, expected {count}")
    for m in missing:
        print("MISSING:", m)
    print(f"{len(kernels)} kernel/arch entries checked, {len(bad)} hot kernels spill, {len(missing)} missing")
    return 1 if bad or missing else 0


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


# The sm_90a attention kernels (ptx/kernels/attention_sm90a.cu, the forward;
# ptx/kernels/attention_sm90a_backward.cu, the backward's dK/dV and dQ) and
# the register count their launch must have (AttentionSm90aTile and
# AttentionSm90aRegisters::kLaunchRegisters).
ATTENTION_SM90A_BACKWARD = tuple(f"hal_attention_bwd_{k}_sm90a_{t}_d{d}" for k in ("dkdv", "dq")
                                 for t in ("f16", "bf16") for d in (64, 128))
# The forward's overlap / pingpong schedule variants (AttentionSm90aSchedule,
# built since HAL_ATTENTION_SM90A_OVERLAP_SCHEDULES = 1): required like the rest.
ATTENTION_SM90A_VARIANTS = tuple(f"hal_attention_sm90a_{t}_d{d}{v}" for t in ("f16", "bf16") for d in (64, 128)
                                 for v in ("_overlap", "_pingpong"))
ATTENTION_SM90A = (tuple(f"hal_attention_sm90a_{t}_d{d}" for t in ("f16", "bf16") for d in (64, 128))
                   + ATTENTION_SM90A_VARIANTS + ATTENTION_SM90A_BACKWARD)
ATTENTION_SM90A_REGISTERS = 168


def check_attention_sm90a(path):
    report = json.load(open(path, encoding="utf-8"))
    problems = []
    for name in ATTENTION_SM90A:
        entries = [k for k in report["kernels"] if k["kernel"] == name and k["arch"] == "sm_90a"]
        if not entries:
            problems.append(f"{name}: not in the report for sm_90a")
        for k in entries:
            for fam in ("wgmma", "cp.async.bulk.tensor", "setmaxnreg"):
                if not (k.get("instructions") or {}).get(fam):
                    problems.append(f"{name} (sm_90a): no {fam} instruction in its PTX")
            if k["spill_stores"] or k["spill_loads"] or k["stack_frame"]:
                problems.append(f"{name} (sm_90a): {k['spill_stores']} / {k['spill_loads']} bytes spill stores / "
                                f"loads, {k['stack_frame']} bytes stack frame")
            if k["registers"] != ATTENTION_SM90A_REGISTERS:
                problems.append(f"{name} (sm_90a): {k['registers']} registers, the setmaxnreg split needs "
                                f"{ATTENTION_SM90A_REGISTERS}")
    for p in problems:
        print("FAIL:", p)
    print(f"sm_90a attention check: {len(problems)} problems")
    return 1 if problems else 0


DECODE_KERNELS = tuple(f"hal_gemm_decode_{t}_m{m}" for t in ("f16", "bf16") for m in (8, 16, 32, 64))
# The fp8 decode GEMM (ptx/kernels/gemm_fp8_decode.cu): per arch, the families
# its pass-1 kernels must have (sm_80: mma.sync f16 after the exact conversion).
FP8_DECODE_KERNELS = tuple(f"hal_gemm_fp8_decode_{a}_{b}_m{m}" for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")
                           for m in (8, 16, 32, 64))
FP8_DECODE_FAMILIES = {"sm_80": ("mma", "ld.global.v4"), "sm_90a": ("mma", "mma.fp8", "ld.global.v4")}


def check_decode_isa(path):
    report = json.load(open(path, encoding="utf-8"))
    by_key = {(k["kernel"], k["arch"]): k for k in report["kernels"]}
    problems = []
    for arch in ("sm_80", "sm_90a"):
        if ("hal_gemm_decode_reduce", arch) not in by_key:
            problems.append(f"hal_gemm_decode_reduce: not built for {arch}")
        for name in DECODE_KERNELS:
            k = by_key.get((name, arch))
            if k is None:
                problems.append(f"{name}: not built for {arch}")
                continue
            for fam in ("mma", "ld.global.v4"):
                if not (k.get("instructions") or {}).get(fam):
                    problems.append(f"{name} ({arch}): no {fam} instruction in its PTX")
        for name in FP8_DECODE_KERNELS:
            k = by_key.get((name, arch))
            if k is None:
                problems.append(f"{name}: not built for {arch}")
                continue
            for fam in FP8_DECODE_FAMILIES[arch]:
                if not (k.get("instructions") or {}).get(fam):
                    problems.append(f"{name} ({arch}): no {fam} instruction in its PTX")
    for p in problems:
        print("FAIL:", p)
    print(f"decode GEMM ISA check: {len(problems)} problems")
    return 1 if problems else 0


# Every attention kernel name the CUDA launchers use (backends/cuda/cuda_attention.cpp,
# backends/gpu/attention_backward_plan.cpp).
ATTENTION_KERNELS = (
    ["hal_attention_general", "hal_attention_general_lse"]
    + [f"hal_attention_flash_{t}_d{d}{lse}" for t in ("f16", "bf16") for d in (64, 128) for lse in ("", "_lse")]
    + [f"hal_attention_bwd_{k}_{t}" for k in ("delta", "dkdv_general", "dq_general") for t in ("f32", "f16", "bf16")]
    + [f"hal_attention_bwd_{k}_mma_{t}_d{d}" for k in ("dkdv", "dq") for t in ("f16", "bf16") for d in (64, 128)]
    # sm_90a-only kernels, built as empty stubs for sm_80 (the launcher names them).
    + list(ATTENTION_SM90A_BACKWARD))
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
    if len(a) == 2 and a[0] == "--check-decode-isa":
        return check_decode_isa(a[1])
    if len(a) == 2 and a[0] == "--check-spills":
        return check_spills(a[1])
    if len(a) == 2 and a[0] == "--check-fp8-isa":
        return check_fp8_isa(a[1])
    if len(a) == 2 and a[0] == "--check-attention-sm90a":
        return check_attention_sm90a(a[1])
    return write(a)


if __name__ == "__main__":
    sys.exit(main())
