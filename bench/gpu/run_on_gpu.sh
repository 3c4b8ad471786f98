#!/usr/bin/env bash
# Runs the NVIDIA checks on a GPU machine from a bundle (scripts/make-bundle.sh):
# start-up smoke test, CUDA device tests, the conformance suite on cuda:0,
# compute-sanitizer (memcheck, racecheck) on a subset, and the benchmarks.
# Opt-in steps for the fp8 kernels that never ran (HAL_GPU_UNVERIFIED=1):
# fp8conformance (the four fp8 ops' cases), fp8bench (gemm_fp8 and
# gemm_fp8_grouped beside cuBLASLt FP8 and hal bf16), fp8memcheck.
# Opt-in steps for issue 24's kernels (all unverified, docs/performance.md):
# uvtests (their device tests, one suite per step: a crash or hang costs one
# step), uvconformance (the whole suite with HAL_GPU_UNVERIFIED=1, so every
# new fast path answers), uvbench (each case twice in turn: the verified
# kernels, then HAL_GPU_UNVERIFIED=1; attention, its backward, decode GEMMs,
# 16-bit row ops, the model: 56 steps, a few to 15 s each). The first GPU
# session runs two calls, each under the device tool's 600 s per command
# (the steps' timeouts cap the worst case; what a killed call left in OUT
# still comes back):
#   run_on_gpu.sh BUNDLE OUT smoke uvtests uvconformance    (about 4 min)
#   run_on_gpu.sh BUNDLE OUT uvbench                         (about 7 min)
# Every step runs under a timeout; results land as JSON/logs in OUT.
#   run_on_gpu.sh BUNDLE_DIR OUT_DIR [STEPS...]   (default: all steps)
set -u
B="$(cd "${1:?bundle dir}" && pwd)"
OUT="${2:?output dir}"
shift 2
STEPS="${*:-smoke tests conformance bench memcheck racecheck}"
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
# If the machine's libstdc++ is older than the build's, use the bundled one.
if ! "$B/bin/hal" --help >/dev/null 2>&1; then
  mkdir -p "$B/lib/stdcxx" && cp "$B/lib/fallback-libstdc++.so.6" "$B/lib/stdcxx/libstdc++.so.6"
  export LD_LIBRARY_PATH="$B/lib/stdcxx:$LD_LIBRARY_PATH"
fi
# cuBLAS for the vendor baseline: the toolkit's, else the one PyTorch ships.
if [ -z "${HAL_CUBLAS_PATH:-}" ]; then
  for c in /usr/local/cuda/lib64/libcublas.so.13 /usr/local/cuda/lib64/libcublas.so.12 \
           $(find / -xdev -name 'libcublas.so.1[23]' 2>/dev/null | head -3); do
    if [ -e "$c" ]; then export HAL_CUBLAS_PATH="$c"; break; fi
  done
fi
export HAL_CUBLAS_PATH="${HAL_CUBLAS_PATH:-}"
# cuBLASLt for the FP8 baseline (bench/suite/vendor_fp8.cpp), found the same way.
if [ -z "${HAL_CUBLASLT_PATH:-}" ]; then
  for c in /usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda/lib64/libcublasLt.so.12 \
           $(find / -xdev -name 'libcublasLt.so.1[23]' 2>/dev/null | head -3); do
    if [ -e "$c" ]; then export HAL_CUBLASLT_PATH="$c"; break; fi
  done
fi
export HAL_CUBLASLT_PATH="${HAL_CUBLASLT_PATH:-}"
export HAL_CUDA_SYNC="${HAL_CUDA_SYNC:-0}"

step() {  # step NAME SECONDS CMD...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s.%N)
  timeout -k 5 "$secs" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  printf '%-12s rc=%-3s %6.1fs\n' "$name" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" | tee -a "$OUT/steps.txt"
  tail -n 5 "$OUT/$name.log"
}

# ab NAME SECONDS BENCH-ARGS...: one bench case on the verified kernels, then
# on the unverified ones (HAL_GPU_UNVERIFIED=1), JSON beside each log.
ab() {
  local name=$1 secs=$2; shift 2
  step "$name-verified" "$secs" "$B/bin/hal" bench --device cuda:0 "$@" --json "$OUT/$name-verified.json"
  step "$name-new" "$secs" env HAL_GPU_UNVERIFIED=1 "$B/bin/hal" bench --device cuda:0 "$@" --json "$OUT/$name-new.json"
}

{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
  echo "cublas: ${HAL_CUBLAS_PATH:-none}"
  compute-sanitizer --version 2>/dev/null | tail -1
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

for s in $STEPS; do
  case $s in
    smoke) step smoke 30 "$B/bin/hal" devices --json ;;
    tests) step tests 120 "$B/bin/hal_cuda_tests" --gtest_output=json:"$OUT/cuda_tests.json" ;;
    conformance) step conformance 120 "$B/bin/hal" conformance --device cuda:0 --json "$OUT/conformance.json" ;;
    bench) step bench "${HAL_BENCH_TIMEOUT:-200}" "$B/bin/hal" bench --device cuda:0 --json "$OUT/bench.json" --csv "$OUT/bench.csv" ;;
    memcheck) step memcheck 60 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/bin/hal_cuda_tests" \
        --gtest_filter="${HAL_MEMCHECK_FILTER:-CudaPtxWrappers.*:CudaGemm.OddShapes*:CudaRows.Softmax*:CudaEmbedding.*:CudaElementwise.Binary*:CudaCopy.*}" ;;
    racecheck) step racecheck 40 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/bin/hal_cuda_tests" \
        --gtest_filter="${HAL_RACECHECK_FILTER:-CudaGemm.OddShapes*:CudaRows.SoftmaxMatchesCpu}" ;;
    fp8conformance)
      for op in quantize_fp8 dequantize_fp8 gemm_fp8 gemm_fp8_grouped; do
        step "conf-$op" 120 env HAL_GPU_UNVERIFIED=1 "$B/bin/hal" conformance --device cuda:0 --op "$op" \
            --json "$OUT/conformance-$op.json"
      done ;;
    fp8bench)
      step bench-gemm_fp8 "${HAL_BENCH_TIMEOUT:-200}" env HAL_GPU_UNVERIFIED=1 "$B/bin/hal" bench --device cuda:0 \
          --op gemm_fp8 --json "$OUT/bench-gemm_fp8.json"
      step bench-gemm_fp8_grouped 120 env HAL_GPU_UNVERIFIED=1 "$B/bin/hal" bench --device cuda:0 \
          --op gemm_fp8_grouped --json "$OUT/bench-gemm_fp8_grouped.json" ;;
    fp8memcheck) step fp8memcheck 120 env HAL_GPU_UNVERIFIED=1 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$B/bin/hal" conformance --device cuda:0 --op gemm_fp8 ;;
    uvtests)
      for suite in CudaPtxWrappersSm90 CudaAttentionSm90a CudaAttentionSm90aBackward CudaGemmDecode \
                   CudaGemmFp8Decode CudaRows CudaElementwise; do
        step "uvtests-$suite" 45 "$B/bin/hal_cuda_tests" --gtest_filter="$suite.*" \
            --gtest_output=json:"$OUT/uvtests-$suite.json"
      done
      # The forward's other schedules (read once per process): the same tests again.
      for sched in overlap pingpong; do
        step "uvtests-CudaAttentionSm90a-$sched" 45 env HAL_ATTENTION_SM90A_SCHEDULE=$sched "$B/bin/hal_cuda_tests" \
            --gtest_filter="CudaAttentionSm90a.*" --gtest_output=json:"$OUT/uvtests-CudaAttentionSm90a-$sched.json"
      done ;;
    uvconformance) step uvconformance 150 env HAL_GPU_UNVERIFIED=1 "$B/bin/hal" conformance --device cuda:0 \
        --json "$OUT/uvconformance.json" ;;
    uvbench)
      # Attention at issue 24's shapes (seq >= 4096; d 128 and 64; bf16 and f16).
      for spec in "attention bf16 2x4096x16x128" "attention bf16 1x8192x16x128" "attention_causal bf16 2x4096x16x128" \
                  "attention_causal bf16 1x8192x16x128" "attention f16 2x4096x16x128" "attention_causal f16 2x4096x16x128" \
                  "attention bf16 2x4096x16x64" "attention_causal bf16 2x4096x16x64" \
                  "attention_backward bf16 2x4096x16x128" "attention_backward_causal bf16 2x4096x16x128"; do
        set -- $spec
        ab "$1-$2-$3" 40 --no-vendor --op "$1" --dtype "$2" --shape "$3"
      done
      # The forward's overlap and ping-pong schedules on the d = 128 cases.
      for spec in "attention bf16 2x4096x16x128" "attention_causal bf16 2x4096x16x128" "attention f16 2x4096x16x128"; do
        set -- $spec
        for sched in overlap pingpong; do
          step "$1-$2-$3-$sched" 40 env HAL_GPU_UNVERIFIED=1 HAL_ATTENTION_SM90A_SCHEDULE=$sched "$B/bin/hal" bench \
              --device cuda:0 --no-vendor --op "$1" --dtype "$2" --shape "$3" --json "$OUT/$1-$2-$3-$sched.json"
        done
      done
      # Decode GEMMs beside cuBLAS (weights [N, K]; M = 1, 16, 64).
      for spec in "bf16 1x4096x4096" "bf16 16x4096x4096" "bf16 64x4096x4096" "bf16 1x14336x4096" "bf16 16x4096x14336" \
                  "f16 1x4096x4096" "f8e4m3 1x4096x4096" "f8e4m3 16x4096x4096"; do
        set -- $spec
        ab "gemm_decode-$1-$2" 40 --op gemm_decode --dtype "$1" --shape "$2"
      done
      # 16-bit row ops on 1 GiB (65536 rows of 8192).
      for op in softmax rmsnorm layernorm gelu silu; do
        ab "$op-bf16" 40 --no-vendor --op "$op" --dtype bf16 --shape 65536x8192
      done
      step model-verified 90 "$B/bin/hal" model bench --synthetic 300 --device cuda:0 --keep "$OUT/m300" --rounds 3
      step model-new 90 env HAL_GPU_UNVERIFIED=1 "$B/bin/hal" model bench "$OUT/m300" --device cuda:0 --rounds 3
      rm -rf "$OUT/m300"
      # The porting proof on the GPU: every op scored, every layer against the CPU's fp64 run.
      step model-prep 60 "$B/bin/hal" model bench --synthetic 20 --device cpu --keep "$OUT/m20" --rounds 1 \
          --prompt-tokens 4 --decode-steps 1
      step model-compare 90 env HAL_GPU_UNVERIFIED=1 "$B/bin/hal" model compare "$OUT/m20" --device cuda:0 \
          --against cpu --tokens 1,2,3,4,5,6,7,8/9,10,11 --steps 4
      rm -rf "$OUT/m20" ;;
  esac
done
