#!/bin/bash
D=${D:-bench/results/cpu-xeon-amx-2core-2026-12-04-f7d5e88-gemm-bf16}; mkdir -p $D/json
# rounds x (f32 4096, bf16 4096, f32 2048, bf16 2048), each hal bench run alternating hal with its vendor.
set -e
for r in ${ROUNDS:-1 2}; do
  for s in 4096 2048; do
    for dt in f32 bf16; do
      ./build/cpu/tools/hal bench --op gemm --dtype $dt --shape ${s}x${s}x${s} --json $D/json/r${r}-${dt}-${s}.json | tail -1
    done
  done
done
