#!/usr/bin/env bash
# Alternating rounds: the packed fp8 path (default) and the earlier block-dot
# path (HAL_CPU_FP8_KERNEL=dots), each `hal bench --op gemm_fp8` run timing
# hal's bf16 GEMM on the same shape in the same run (samples alternate).
# Usage: run.sh OUTDIR (from the repository root, after the cpu preset build).
set -euo pipefail
out="$1"; mkdir -p "$out"
hal=build/cpu/tools/hal
for r in 1 2 3; do
  for path in packed dots; do
    env_=(); [ "$path" = dots ] && env_=(HAL_CPU_FP8_KERNEL=dots)
    env "${env_[@]}" $hal bench --op gemm_fp8 --json "$out/m64-$path-r$r.json" > "$out/m64-$path-r$r.txt" 2>&1
  done
done
for r in 1 2; do
  for path in packed dots; do
    env_=(); [ "$path" = dots ] && env_=(HAL_CPU_FP8_KERNEL=dots)
    for shape in 128x2112x7168 128x24576x1536 128x32768x512 128x7168x16384 128x4096x7168 128x7168x2048 \
                 4096x2112x7168 4096x7168x2048; do
      env "${env_[@]}" $hal bench --op gemm_fp8 --dtype f8e4m3 --shape $shape --quick \
        --json "$out/m$shape-$path-r$r.json" > "$out/m$shape-$path-r$r.txt" 2>&1
    done
  done
done
