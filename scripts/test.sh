#!/usr/bin/env bash
# Builds and runs every test. First Clang 16 under AddressSanitizer +
# UndefinedBehaviorSanitizer: the unit tests, the CPU conformance suite and each
# fuzzer over its committed seeds; then each libFuzzer target for
# HAL_FUZZ_SECONDS (default 60); then the concurrency tests under
# ThreadSanitizer (GCC); last the GCC release build with every backend whose
# toolchain is installed (CUDA with nvcc, HIP with hipcc; their GPU tests skip
# without a GPU) and the whole ctest suite. So both compilers build and run the
# unit tests. HAL_TEST_GCC_ASAN=1 adds the same sanitizer stage built with GCC
# (one sanitizer build is what CI's time budget holds on 2 cores); without
# clang++-16 (HAL_WITH_CLANG=0) that GCC stage replaces the Clang ones.
# docs/reliability.md says what each stage covers. Each stage prints the
# seconds it took.
set -euo pipefail
source "$(dirname "$0")/common.sh"
bash "$HAL_ROOT/scripts/install-deps.sh"
cd "$HAL_ROOT"
PRESET="${HAL_PRESET:-$(pick_preset)}"
stage_start=$SECONDS
stage_done() { echo "== $1: $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }

gcc_asan="${HAL_TEST_GCC_ASAN:-0}"
if command -v clang++-16 >/dev/null; then
  echo "== clang 16 + asan + ubsan: unit tests, the CPU conformance suite, the fuzzers' seeds"
  cmake --preset clang >/dev/null
  cmake --build --preset clang -j "$JOBS"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset clang -j "$JOBS" --timeout 900
  stage_done clang
  HAL_FUZZ_NO_BUILD=1 bash scripts/fuzz.sh
  stage_done fuzz
else
  # HAL_WITH_CLANG=0 installed no Clang: the same tests under GCC's sanitizers.
  echo "== clang++-16 not installed: the clang and fuzz stages are skipped; GCC runs the sanitizer stage"
  gcc_asan=1
fi

if [ "$gcc_asan" = 1 ]; then
  echo "== gcc asan+ubsan build: unit tests and the CPU conformance suite"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$JOBS"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j "$JOBS" --timeout 900
  stage_done asan
fi

echo "== tsan build: the concurrency tests"
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$JOBS"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --preset tsan -j "$JOBS" --timeout 600
stage_done tsan

echo "== release build: preset $PRESET"
cmake --preset "$PRESET" >/dev/null
cmake --build --preset "$PRESET" -j "$JOBS"
ctest --preset "$PRESET" -j "$JOBS" --timeout 900
stage_done release
