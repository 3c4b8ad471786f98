#!/bin/bash
# More rounds of the bf16 cases alone (hal against PyTorch, alternating sample by sample).
D=${D:-bench/results/cpu-epyc-2core-2026-12-02-af99eb6-gemm-bf16}; mkdir -p $D/json2
set -e
for r in 1 2 3 4 5 6; do
  for s in 2048 4096; do
    ./build/cpu/tools/hal bench --op gemm --dtype bf16 --shape ${s}x${s}x${s} --json $D/json2/r${r}-bf16-${s}.json | tail -1
  done
done
