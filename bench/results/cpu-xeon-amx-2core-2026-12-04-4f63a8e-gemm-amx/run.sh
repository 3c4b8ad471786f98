#!/bin/bash
# The AMX bf16 GEMM (4f63a8e) against hal's f32 GEMM, OpenBLAS f32 and PyTorch's bf16 matmul
# (hal bench alternates hal and the vendor sample by sample), square and decode shapes;
# then a 1 GB bf16 model's prefill and decode with the AMX kernel and with the AVX-512 BF16
# pair kernel (HAL_CPU_GEMM_KERNEL), alternating; then the TDPBF16PS model probe.
D=${D:-bench/results/cpu-xeon-amx-2core-2026-12-04-4f63a8e-gemm-amx}; mkdir -p $D/json
set -e
for r in ${ROUNDS:-1 2}; do
  for s in 4096 2048 1024; do
    for dt in f32 bf16; do
      ./build/cpu/tools/hal bench --op gemm --dtype $dt --shape ${s}x${s}x${s} --json $D/json/r${r}-${dt}-${s}.json | tail -1
    done
  done
  for m in 1 16; do
    ./build/cpu/tools/hal bench --op gemm --dtype bf16 --shape ${m}x4096x4096 --json $D/json/r${r}-bf16-${m}x4096x4096.json | tail -1
  done
done
for r in ${ROUNDS:-1 2}; do
  for k in amx avx512bf16; do
    echo "== model, HAL_CPU_GEMM_KERNEL=$k, round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
    HAL_CPU_GEMM_KERNEL=$k ./build/cpu/tools/hal model bench --synthetic 1000 | tail -5
  done
done
g++ -O2 -std=c++20 -mamx-tile -mamx-bf16 bench/probes/amx_tdpbf16ps_model.cpp -o /tmp/amx_tdpbf16ps_model
for range in 3 20 70; do /tmp/amx_tdpbf16ps_model $range; done
