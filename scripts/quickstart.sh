#!/usr/bin/env bash
# The main job on the CPU: build the CPU-only tool, list the devices, run the
# conformance suite on the CPU.
set -euo pipefail
source "$(dirname "$0")/common.sh"
HAL_WITH_HIP=0 HAL_WITH_CLANG=0 bash "$HAL_ROOT/scripts/install-deps.sh"
cd "$HAL_ROOT"
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j "$JOBS" --target hal_cli
build/cpu/tools/hal devices
build/cpu/tools/hal conformance --device cpu
