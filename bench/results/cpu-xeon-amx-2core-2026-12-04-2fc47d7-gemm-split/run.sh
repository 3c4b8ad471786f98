#!/bin/bash
# The task split and epilogue change (2fc47d7) against its parent (1945fb8, built in a
# worktree: OLD=path/to/old/tools/hal), alternating old and new call by call: hal bench
# bf16 GEMM (PyTorch's bf16 matmul as the vendor column of each call) at 1024^3, 2048^3,
# 4096^3 and M = 16 decode, and f32 1024^3 (the split rule applies to every kernel).
# run-1024.log: CASES=bf16:1024x1024x1024 ROUNDS="4 5 6 7 8".
D=${D:-bench/results/cpu-xeon-amx-2core-2026-12-04-2fc47d7-gemm-split}; mkdir -p $D/json
OLD=${OLD:?the parent commit\'s hal}
NEW=./build/cpu/tools/hal
set -e
for r in ${ROUNDS:-1 2 3}; do
  for case in ${CASES:-bf16:1024x1024x1024 bf16:2048x2048x2048 bf16:4096x4096x4096 bf16:16x4096x4096 f32:1024x1024x1024}; do
    dt=${case%%:*}; s=${case#*:}
    for which in old new; do
      bin=$NEW; [ $which = old ] && bin=$OLD
      echo "$which $($bin bench --op gemm --dtype $dt --shape $s --json $D/json/r${r}-${which}-${dt}-${s}.json 2>/dev/null | tail -1)"
    done
  done
done
