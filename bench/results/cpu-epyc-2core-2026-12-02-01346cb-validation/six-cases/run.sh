#!/bin/bash
# Alternates HAL_VALIDATE=1 and HAL_VALIDATE=0 over small ops, ROUNDS rounds.
HAL=$1; OUT=$2; ROUNDS=${3:-3}
mkdir -p $OUT
for r in $(seq 1 $ROUNDS); do
  for c in "add f32 1x64" "silu f32 1x64" "softmax f32 1x64" "rmsnorm f32 1x64" "copy f32 1x64" "gemm f32 8x8x8"; do
    set -- $c
    for v in 1 0; do
      HAL_VALIDATE=$v OPENBLAS_NUM_THREADS=1 $HAL bench --no-vendor --op $1 --dtype $2 --shape $3 --json $OUT/r${r}_$1_$2_$3_v$v.json > /dev/null 2>&1 || echo "fail $c $v"
    done
  done
done
