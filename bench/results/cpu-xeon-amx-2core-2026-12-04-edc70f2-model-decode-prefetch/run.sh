#!/bin/bash
# A 1 GB synthetic bf16 Llama's prefill and decode on the AMX kernel and the AVX-512 BF16 pair
# kernel, alternating, three rounds each (commit edc70f2: both stream decode weights with B
# prefetched 32 rows ahead).
set -e
for r in 1 2 3; do
  for k in amx avx512bf16; do
    echo "== HAL_CPU_GEMM_KERNEL=$k, round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
    HAL_CPU_GEMM_KERNEL=$k ./build/cpu/tools/hal model bench --synthetic 1000 | tail -5
  done
done
