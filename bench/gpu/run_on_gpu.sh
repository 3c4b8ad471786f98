#!/usr/bin/env bash
# Runs the NVIDIA checks on a GPU machine from a bundle (scripts/make-bundle.sh):
# start-up smoke test, CUDA device tests, the conformance suite on cuda:0,
# compute-sanitizer (memcheck, racecheck) on a subset, and the benchmarks.
# Opt-in steps for the fp8 kernels that never ran (HAL_GPU_UNVERIFIED=1):
# fp8conformance (the four fp8 ops' cases), fp8bench (gemm_fp8 and
# gemm_fp8_grouped beside cuBLASLt FP8 and hal bf16), fp8memcheck.
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
  esac
done
