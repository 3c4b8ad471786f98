#!/usr/bin/env bash
# Builds and runs every test. First the unit tests under AddressSanitizer +
# UndefinedBehaviorSanitizer (CPU only), then the release build with every
# backend whose toolchain is installed (CUDA with nvcc, HIP with hipcc; their
# GPU tests skip without a GPU) and the whole ctest suite.
set -euo pipefail
source "$(dirname "$0")/common.sh"
bash "$HAL_ROOT/scripts/install-deps.sh"
cd "$HAL_ROOT"
PRESET="${HAL_PRESET:-$(pick_preset)}"

echo "== asan+ubsan build: unit tests"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j "$JOBS" --timeout 600

echo "== release build: preset $PRESET"
cmake --preset "$PRESET" >/dev/null
cmake --build --preset "$PRESET" -j "$JOBS"
ctest --preset "$PRESET" -j "$JOBS" --timeout 900
