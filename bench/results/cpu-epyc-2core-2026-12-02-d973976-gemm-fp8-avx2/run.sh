#!/usr/bin/env bash
# Alternating rounds of the packed fp8 path and the earlier block dots
# (HAL_CPU_FP8_KERNEL=dots), twice: with both GEMMs forced onto their AVX2
# kernels (HAL_CPU_GEMM_KERNEL=avx2: what a CPU without AVX-512 BF16 runs),
# and on the kernels this machine picks (AVX-512 BF16). Each `hal bench --op
# gemm_fp8` run times hal's bf16 GEMM on the same shape in the same run.
# Usage: run.sh OUTDIR (from the repository root, after the cpu preset build).
set -euo pipefail
out="$1"; mkdir -p "$out"
hal=build/cpu/tools/hal
for r in 1 2; do
  for isa in avx2 default; do
    for path in packed dots; do
      env_=(); [ "$isa" = avx2 ] && env_+=(HAL_CPU_GEMM_KERNEL=avx2); [ "$path" = dots ] && env_+=(HAL_CPU_FP8_KERNEL=dots)
      env "${env_[@]}" $hal bench --op gemm_fp8 --json "$out/$isa/m64-$path-r$r.json" > "$out/m64-$isa-$path-r$r.txt" 2>&1 || true
    done
  done
done
