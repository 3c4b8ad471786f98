#!/usr/bin/env bash
# Installs what hal needs to build and test on Debian 12 (all Debian packages).
#   HAL_WITH_HIP=0    skips the HIP toolchain (hipcc, clang-15), needed only to build the AMD backend.
#   HAL_WITH_CLANG=0  skips Clang 16 and its sanitizer runtimes (the test script's Clang
#                     ASan+UBSan stage and the libFuzzer targets).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
PKGS="cmake ninja-build g++ libtbb-dev libfmt-dev libgtest-dev python3"
# The model tests' independent reference (tests/model/make_checkpoints.py).
PKGS="$PKGS python3-torch python3-numpy"
# The CPU bench's vendor baseline (hal bench loads it at run time).
PKGS="$PKGS libopenblas0"
# The Python module and its tests (python/).
PKGS="$PKGS python3-dev pybind11-dev python3-pytest"
PKGS="$PKGS libopenmpi-dev openmpi-bin"  # collectives on cpu tensors (comm/mpi/) and their mpiexec tests
if [ "${HAL_WITH_CLANG:-1}" != 0 ]; then PKGS="$PKGS clang-16 libclang-rt-16-dev"; fi
if [ "${HAL_WITH_HIP:-1}" != 0 ]; then PKGS="$PKGS hipcc libamdhip64-dev"; fi
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
