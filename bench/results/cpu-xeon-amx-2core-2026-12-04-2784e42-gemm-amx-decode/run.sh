#!/bin/bash
# Decode-shaped bf16 GEMMs (M x 4096 x 4096 and the 1 GB model's M x 1024 x 3072 shape class)
# with the AMX kernel's stream path against PyTorch's bf16 matmul, two rounds.
D=${D:-bench/results/cpu-xeon-amx-2core-2026-12-04-2784e42-gemm-amx-decode}; mkdir -p $D/json
set -e
for r in 1 2; do
  for m in 1 2 4 8 16 24; do
    ./build/cpu/tools/hal bench --op gemm --dtype bf16 --shape ${m}x4096x4096 --json $D/json/r${r}-bf16-${m}x4096x4096.json | tail -1
  done
done
