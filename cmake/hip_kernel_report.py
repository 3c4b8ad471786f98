#!/usr/bin/env python3
"""Per-kernel resource report of the HIP code objects, and the ISA checks.

  hip_kernel_report.py --out REPORT.json --bundler B --objdump O --readelf R
                       --archs gfx90a,gfx940 [--check] --bundle NAME FILE.hipfb ...

Each bundle is unbundled per target with clang-offload-bundler; the AMDGPU
metadata (llvm-readelf --notes, msgpack shown as YAML) gives per kernel its
VGPRs, SGPRs, AGPRs, LDS (group segment) and scratch (private segment) bytes
and spill counts; llvm-objdump -d counts the v_mfma instructions and the
16-byte global loads (global_load_dwordx4) per kernel.
Occupancy estimates, waves per SIMD: from the register budget (CDNA2/3 give
each SIMD 512 unified VGPRs per lane, allocated in granules of 8, at most 8
waves; on gfx90a/gfx94x the metadata's vgpr_count is already the unified
total, arch VGPRs + AGPRs), from LDS (64 KiB per CU shared by the workgroups
on it, 4 SIMDs per CU, waves per workgroup from max_flat_workgroup_size),
and the smaller of the two.

With --check the run fails (exit 1) when a kernel uses scratch or spills
VGPRs (SGPR spills land in VGPR lanes, not memory: reported, not failed),
when an MFMA kernel (gemm_mfma_*, attention_flash_*, gemm_fp8_mfma_*,
gemm_decode_*, hal_attention_bwd_*_mfma_*) lacks
v_mfma instructions on any target, when either family is missing, when a
FNUZ fp8 GEMM kernel (gemm_fp8_mfma_fnuz_*) lacks the fp8 MFMA
(v_mfma_*_fp8_* / *_bf8_*) on a gfx94x target or is missing there, when a
vectorised row kernel (hal_softmax, hal_norm, hal_reduce and the 16-bit
hal_softmax_vec16_2b, hal_norm_vec16_2b: the 16-byte row path), a 16-bit
packed elementwise kernel (hal_unary_packed_*, hal_swiglu_packed_*) or a
decode GEMM pass-1 kernel (gemm_decode_<f16|bf16>_m*, gemm_fp8_decode_[fnuz_]<a>_<b>_m*:
also MFMA kernels) lacks
global_load_dwordx4 on any target or is missing, when a kernel of
REQUIRED_KERNELS (embedding_backward's) or an attention kernel the launchers
name (ATTENTION_KERNELS: the forward with and without lse, the backward's
wave64 and MFMA kernels) is missing on a target, or when a
target is missing from a bundle.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

MFMA_REQUIRED = re.compile(r"^(gemm_mfma_|attention_flash_|gemm_fp8_mfma_|gemm_decode_(f16|bf16)_|gemm_fp8_decode_|"
                           r"hal_attention_bwd_\w+_mfma_)")
# The FNUZ fp8 GEMM kernels must use the fp8 MFMA on CDNA3 (gfx94x); on
# gfx90a, which has none, they take the f16 path (hip/kernels/gemm_fp8_mfma.hip).
FP8_MFMA_REQUIRED = re.compile(r"^gemm_fp8_mfma_fnuz_")
FP8_MFMA_TARGET = re.compile(r"^gfx94[0-9]")
FP8_MFMA_MNEMONIC = re.compile(r"v_mfma_f32_\w+_(fp8|bf8)_(fp8|bf8)")
MFMA_FAMILIES = ("gemm_mfma_", "attention_flash_", "gemm_fp8_mfma_", "gemm_decode_", "gemm_fp8_decode_",
                 "hal_attention_bwd_dkdv_mfma_",
                 "hal_attention_bwd_dq_mfma_")
# The decode GEMM's pass-1 kernels (hip/kernels/gemm_decode.hip) stream the
# weights in 16-byte loads and nothing else: each must have global_load_dwordx4;
# so must the fp8 decode GEMM's (hip/kernels/gemm_fp8_decode.hip), every one
# of which (FP8_DECODE_KERNELS) must be on every target.
DWORDX4_PATTERN_REQUIRED = re.compile(
    r"^(gemm_decode_(f16|bf16)|gemm_fp8_decode_(fnuz_)?(e4m3|e5m2)_(e4m3|e5m2))_m\d+$")
FP8_DECODE_KERNELS = tuple(f"gemm_fp8_decode_{f}{a}_{b}_m{m}" for f in ("", "fnuz_") for a in ("e4m3", "e5m2")
                           for b in ("e4m3", "e5m2") for m in (16, 32, 64))
# Row kernels with a 16-byte vector path (hip/kernels/rows_*.hip, x_vec16).
DWORDX4_REQUIRED = ("hal_softmax", "hal_norm", "hal_reduce", "hal_softmax_vec16_2b", "hal_norm_vec16_2b",
                    "hal_unary_packed_bf16", "hal_unary_packed_f16", "hal_swiglu_packed_bf16",
                    "hal_swiglu_packed_f16")
# Kernels that must exist on every target (never run on a GPU: the build
# facts -- present, no scratch, no spills -- are all that checks them).
REQUIRED_KERNELS = tuple("hal_embedding_backward_" + n for n in (
    "check", "keys", "sort_local", "sort_step", "sort_merge", "segments_count", "segments_scan", "segments_write",
    "accumulate"))
# Every attention kernel name the HIP launchers use (backends/hip/hip_attention.cpp,
# backends/gpu/attention_backward_plan.cpp); the flash ones are also MFMA_REQUIRED.
ATTENTION_KERNELS = (
    ["attention_general", "attention_general_lse"]
    + [f"attention_flash_{t}_d{d}{lse}" for t in ("f16", "bf16") for d in (64, 128) for lse in ("", "_lse")]
    + [f"hal_attention_bwd_{k}_{t}" for k in ("delta", "dkdv_general", "dq_general") for t in ("f32", "f16", "bf16")]
    + [f"hal_attention_bwd_{k}_mfma_{t}_d{d}" for k in ("dkdv", "dq") for t in ("f16", "bf16") for d in (64, 128)])
CU_LDS_BYTES = 65536
SIMDS_PER_CU = 4
SIMD_VGPRS = 512
VGPR_GRANULE = 8
MAX_WAVES_PER_SIMD = 8


def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True).stdout


def parse_metadata(notes):
    """Kernels from `llvm-readelf --notes`: {name: {key: value}} for the scalar keys."""
    kernels = {}
    lines = notes.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.strip().startswith("amdhsa.kernels:"))
    except StopIteration:
        return kernels
    item_indent = None
    current = None
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if item_indent is None and stripped.startswith("- "):
            item_indent = indent
        if item_indent is None:
            continue
        if indent < item_indent or (indent == item_indent and not stripped.startswith("- ")):
            break  # past the kernel list
        if indent == item_indent and stripped.startswith("- "):
            current = {}
            kernels.setdefault("__list__", []).append(current)
            stripped = stripped[2:]
            indent += 2
        if current is not None and indent == item_indent + 2:
            m = re.match(r"\.([\w.]+):\s*(.*)$", stripped)
            if m and m.group(2) != "":
                current[m.group(1)] = m.group(2).strip().strip("'")
    return {k["name"]: k for k in kernels.get("__list__", []) if "name" in k}


def instruction_counts(disasm, mnemonic):
    """{kernel: number of instructions containing `mnemonic`} from llvm-objdump -d."""
    counts = {}
    name = None
    for line in disasm.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            name = m.group(1)
            counts.setdefault(name, 0)
        elif name and mnemonic in line:
            counts[name] += 1
    return counts


def pattern_counts(disasm, pattern):
    """{kernel: number of instructions matching the regex `pattern`} from llvm-objdump -d."""
    counts = {}
    name = None
    for line in disasm.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            name = m.group(1)
            counts.setdefault(name, 0)
        elif name and pattern.search(line):
            counts[name] += 1
    return counts


def waves_per_simd(vgprs):
    granules = max(1, -(-vgprs // VGPR_GRANULE)) * VGPR_GRANULE
    return min(MAX_WAVES_PER_SIMD, SIMD_VGPRS // granules)


def waves_per_simd_by_lds(lds_bytes, workgroup_size):
    waves_per_group = max(1, -(-workgroup_size // 64))
    if lds_bytes <= 0:
        return MAX_WAVES_PER_SIMD
    groups_per_cu = CU_LDS_BYTES // lds_bytes
    return min(MAX_WAVES_PER_SIMD, groups_per_cu * waves_per_group // SIMDS_PER_CU)


def main():
    args = sys.argv[1:]
    out = bundler = objdump = readelf = None
    archs = []
    check = False
    bundles = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--out": out = args[i + 1]; i += 2
        elif a == "--bundler": bundler = args[i + 1]; i += 2
        elif a == "--objdump": objdump = args[i + 1]; i += 2
        elif a == "--readelf": readelf = args[i + 1]; i += 2
        elif a == "--archs": archs = [x for x in re.split(r"[;,]", args[i + 1]) if x]; i += 2
        elif a == "--check": check = True; i += 1
        elif a == "--bundle": bundles.append((args[i + 1], args[i + 2])); i += 3
        else:
            print(__doc__, file=sys.stderr)
            return 2
    problems = []
    report = {"targets": archs, "simd_vgprs": SIMD_VGPRS, "kernels": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in bundles:
            listed = run([bundler, "--list", "--type=o", f"--input={path}"]).split()
            for arch in archs:
                target = next((t for t in listed if t.endswith("--" + arch)), None)
                if target is None:
                    problems.append(f"{name}: no code object for {arch} (bundle holds {listed})")
                    continue
                obj = os.path.join(tmp, f"{name}.{arch}.o")
                run([bundler, "--unbundle", "--type=o", f"--input={path}", f"--targets={target}", f"--output={obj}"])
                meta = parse_metadata(run([readelf, "--notes", obj]))
                disasm = run([objdump, "-d", obj])
                mfma = instruction_counts(disasm, "v_mfma")
                fp8_mfma = pattern_counts(disasm, FP8_MFMA_MNEMONIC)
                dwordx4 = instruction_counts(disasm, "global_load_dwordx4")
                for kname, k in sorted(meta.items()):
                    vgpr = int(k.get("vgpr_count", 0))
                    entry = {
                        "kernel": kname, "file": name, "target": arch,
                        "vgprs": vgpr, "sgprs": int(k.get("sgpr_count", 0)), "agprs": int(k.get("agpr_count", 0)),
                        "lds_bytes": int(k.get("group_segment_fixed_size", 0)),
                        "scratch_bytes": int(k.get("private_segment_fixed_size", 0)),
                        "vgpr_spills": int(k.get("vgpr_spill_count", 0)),
                        "sgpr_spills": int(k.get("sgpr_spill_count", 0)),
                        "mfma_instructions": mfma.get(kname, 0),
                        "fp8_mfma_instructions": fp8_mfma.get(kname, 0),
                        "global_load_dwordx4": dwordx4.get(kname, 0),
                        "waves_per_simd_by_vgprs": waves_per_simd(vgpr),
                        "workgroup_size": int(k.get("max_flat_workgroup_size", 0)),
                    }
                    entry["waves_per_simd_by_lds"] = waves_per_simd_by_lds(entry["lds_bytes"], entry["workgroup_size"])
                    entry["occupancy_waves_per_simd"] = min(entry["waves_per_simd_by_vgprs"],
                                                            entry["waves_per_simd_by_lds"])
                    report["kernels"].append(entry)
                    # SGPR spills go to VGPR lanes (v_writelane), not memory:
                    # reported, not failed. Scratch and VGPR spills are memory.
                    if entry["scratch_bytes"] or entry["vgpr_spills"]:
                        problems.append(f"{kname} ({arch}): scratch {entry['scratch_bytes']} bytes, "
                                        f"{entry['vgpr_spills']} VGPR spills")
                    if MFMA_REQUIRED.match(kname) and entry["mfma_instructions"] == 0:
                        problems.append(f"{kname} ({arch}): no v_mfma instruction")
                    if (FP8_MFMA_REQUIRED.match(kname) and FP8_MFMA_TARGET.match(arch)
                            and entry["fp8_mfma_instructions"] == 0):
                        problems.append(f"{kname} ({arch}): no fp8 v_mfma instruction (v_mfma_*_fp8/bf8_*)")
                    if ((kname in DWORDX4_REQUIRED or DWORDX4_PATTERN_REQUIRED.match(kname))
                            and entry["global_load_dwordx4"] == 0):
                        problems.append(f"{kname} ({arch}): no global_load_dwordx4 (16-byte row path)")
                if not meta:
                    problems.append(f"{name} ({arch}): no kernel metadata found")
    report["problems"] = problems
    with open(out, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    if check:
        mfma_kernels = [k for k in report["kernels"] if MFMA_REQUIRED.match(k["kernel"])]
        for family in MFMA_FAMILIES:
            if not any(k["kernel"].startswith(family) for k in mfma_kernels):
                problems.append(f"no {family}* kernel in any bundle")
        for arch in archs:
            if FP8_MFMA_TARGET.match(arch) and not any(
                    FP8_MFMA_REQUIRED.match(k["kernel"]) and k["target"] == arch for k in report["kernels"]):
                problems.append(f"no gemm_fp8_mfma_fnuz_* kernel for {arch}")
        for arch in archs:
            if not any(DWORDX4_PATTERN_REQUIRED.match(k["kernel"]) and k["target"] == arch for k in report["kernels"]):
                problems.append(f"no gemm_decode_* kernel for {arch}")
        for kname in DWORDX4_REQUIRED + REQUIRED_KERNELS + tuple(ATTENTION_KERNELS) + FP8_DECODE_KERNELS:
            for arch in archs:
                if not any(k["kernel"] == kname and k["target"] == arch for k in report["kernels"]):
                    problems.append(f"{kname} ({arch}): kernel missing from every bundle")
        for p in problems:
            print("FAIL:", p, file=sys.stderr)
        print(f"{len(report['kernels'])} kernel/target entries checked; {len(mfma_kernels)} MFMA entries "
              f"(GEMM and flash attention)")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
