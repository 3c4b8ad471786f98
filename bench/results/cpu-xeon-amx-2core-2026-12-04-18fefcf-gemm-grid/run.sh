#!/bin/bash
# The AMX GEMM's software-pipelined grid entry (run_grid, 18fefcf): first with and without it in
# one process, samples interleaved (bench/probes/gemm_amx_grid_ab.cpp), then hal bench
# against PyTorch's bf16 matmul (the vendor column, alternating sample by sample).
D=${D:-bench/results/cpu-xeon-amx-2core-2026-12-04-18fefcf-gemm-grid}; mkdir -p $D/json
set -e
g++ -O2 -std=c++20 -I. bench/probes/gemm_amx_grid_ab.cpp build/cpu/libhal.a -ltbb -lfmt -o /tmp/gemm_amx_grid_ab
for r in ${ROUNDS:-1 2 3}; do
  REPS=60 /tmp/gemm_amx_grid_ab 1024 1024 1024 2 g:144:1024:256:1024 t:144:1024:256:1024
  REPS=20 /tmp/gemm_amx_grid_ab 512 4096 1024 2 g:144:1024:256:1024 t:144:1024:256:1024
  REPS=15 /tmp/gemm_amx_grid_ab 2048 2048 2048 2 g:144:1024:256:1024 t:144:1024:256:1024
  REPS=5 /tmp/gemm_amx_grid_ab 4096 4096 4096 2 g:144:1024:256:1024 t:144:1024:256:1024
done
for r in ${ROUNDS:-1 2 3}; do
  for s in 1024 2048 4096; do
    ./build/cpu/tools/hal bench --op gemm --dtype bf16 --shape ${s}x${s}x${s} --json $D/json/r${r}-bf16-${s}.json 2>/dev/null | tail -1
  done
done
