#!/bin/bash
# On the AMX Xeon at 4923c9c: (1) gemm_fp8 (e4m3, the CPU's vdpbf16ps block kernel) beside hal's
# bf16 GEMM (now AMX), timed in turn; (2) the 1 GB model's decode with bf16 forced onto the AVX2
# kernel (what an AVX2-only CPU runs) beside the default AMX kernel, alternating.
D=${D:-bench/results/cpu-xeon-amx-2core-2026-12-04-4923c9c-fp8-and-avx2-decode}; mkdir -p $D/json
set -e
for r in 1 2; do
  for s in 4096x4096x4096 2048x2048x2048 64x4096x4096; do
    ./build/cpu/tools/hal bench --op gemm_fp8 --dtype f8e4m3 --shape $s --json $D/json/r${r}-fp8-$s.json | tail -2
  done
done
for r in 1 2; do
  for k in amx avx2; do
    echo "== HAL_CPU_GEMM_KERNEL=$k, round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
    HAL_CPU_GEMM_KERNEL=$k ./build/cpu/tools/hal model bench --synthetic 1000 | tail -6
  done
done
