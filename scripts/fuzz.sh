#!/usr/bin/env bash
# Builds the libFuzzer targets (preset clang: Clang 16 + ASan + UBSan) and
# runs each for HAL_FUZZ_SECONDS seconds (default 60), starting from the
# committed seeds (tests/fuzz/seeds/<target>); what it discovers goes to
# build/clang/fuzz/<target>/corpus, a crashing input to .../artifacts. Exits
# non-zero when any target found something: reproduce with
#   build/clang/tests/fuzz/<target>_fuzzer <artifact>
# HAL_FUZZ_NO_BUILD=1 skips the build (test.sh has built them).
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$HAL_ROOT"
seconds="${HAL_FUZZ_SECONDS:-60}"
if [ "${HAL_FUZZ_NO_BUILD:-0}" != 1 ]; then
  cmake --preset clang >/dev/null
  cmake --build build/clang --target hal_fuzzers -j "$JOBS"
fi
# The op fuzzer's runs allocate lazily built state (kernel tables, packing
# buffers) on first use, which libFuzzer's per-input leak check would take
# for leaks and re-run; LeakSanitizer still checks the whole run at exit.
extra_flags() { if [ "$1" = op ]; then echo -detect_leaks=0; fi; }
# Reports with file and line (the clang-16 runtime looks for a symbolizer
# that Debian names llvm-symbolizer-16 only when that package is installed).
symbolizer="$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)"
sym="${symbolizer:+:external_symbolizer_path=$symbolizer}"
failed=()
for target in npy safetensors op; do
  work="build/clang/fuzz/$target"
  mkdir -p "$work/corpus" "$work/artifacts"
  echo "== fuzz $target: ${seconds} s"
  if ! ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1$sym}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1$sym}" \
      "build/clang/tests/fuzz/${target}_fuzzer" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
      -max_len=4096 -print_final_stats=1 -artifact_prefix="$work/artifacts/" $(extra_flags "$target") \
      "$work/corpus" "tests/fuzz/seeds/$target" > "$work/log.txt" 2>&1; then
    failed+=("$target")
    tail -n 60 "$work/log.txt"
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov:" "$work/log.txt" | tail -n 3
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs under build/clang/fuzz/<target>/artifacts)" >&2
  exit 1
fi
