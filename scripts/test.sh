#!/usr/bin/env bash
# Builds and runs every test: the release build (with the CUDA backend when
# nvcc is installed; GPU tests skip without a GPU), then the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
source "$(dirname "$0")/common.sh"
bash "$HAL_ROOT/scripts/install-deps.sh"
cd "$HAL_ROOT"

echo "== asan+ubsan build: unit tests"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j "$JOBS" --timeout 600

echo "== release build ($HAL_PRESET)"
cmake --preset "$HAL_PRESET" >/dev/null
cmake --build --preset "$HAL_PRESET" -j "$JOBS"
ctest --preset "$HAL_PRESET" -j "$JOBS" --timeout 900
