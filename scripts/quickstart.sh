#!/usr/bin/env bash
# The main job on the CPU: build, list the devices, run the conformance suite.
set -euo pipefail
source "$(dirname "$0")/common.sh"
bash "$HAL_ROOT/scripts/install-deps.sh"
cmake --preset "$HAL_PRESET" -S "$HAL_ROOT" >/dev/null
cmake --build --preset "$HAL_PRESET" -j "$JOBS" --target hal_cli
HAL="$HAL_ROOT/build/$HAL_PRESET/tools/hal"
"$HAL" devices
"$HAL" conformance --device cpu
