#!/usr/bin/env bash
# Nsight Compute profile of hal's kernels for a few bench cases, on a GPU
# machine, from a bundle (scripts/make-bundle.sh): one launch of each matching
# kernel per case, clocks left alone. Text reports land in OUT.
#   profile_on_gpu.sh BUNDLE_DIR OUT_DIR "op dtype shape" ...
set -u
B="$(cd "${1:?bundle dir}" && pwd)"
OUT="${2:?output dir}"
shift 2
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
[ -n "$NCU" ] || { echo "no ncu on this machine"; exit 1; }
for spec in "$@"; do
  set -- $spec
  name="$1-$2-$3"
  # Skip the bench's warm-up launches; hal kernels only (not the copy ceiling's memcpy).
  timeout -k 5 90 "$NCU" --clock-control none --launch-skip 3 --launch-count 1 \
      -k 'regex:^(hal_|unary_|binary_|cast_|swiglu_)' \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
      --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats \
      "$B/bin/hal" bench --device cuda:0 --quick --no-vendor --op "$1" --dtype "$2" --shape "$3" \
      > "$OUT/ncu-$name.txt" 2>&1
  echo "$name rc=$?"
done
