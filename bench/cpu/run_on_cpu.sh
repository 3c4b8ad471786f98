#!/usr/bin/env bash
# Records the CPU backend's benchmarks beside OpenBLAS on this machine: the
# machine description, the default `hal bench` suite (JSON, CSV, table) and the
# roofline picture, in one results folder.
#   bench/cpu/run_on_cpu.sh BUILD_DIR OUT_DIR [hal bench options...]
# Nothing else should run on the machine meanwhile: the ratios to OpenBLAS
# are measured in the same run, but the copy ceiling and each op are timed
# at different moments.
set -eu
BUILD="$(cd "${1:?build dir}" && pwd)"
OUT="${2:?output dir}"
shift 2
mkdir -p "$OUT"
HAL="$BUILD/tools/hal"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$(dirname "$0")/../.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|L1d|L2|L3|Flags)' | sed 's/^Flags:.*\(avx[^ ]*\).*/&/' | cut -c1-200
  grep -m1 MemTotal /proc/meminfo
  echo "openblas: $(dpkg-query -W -f='${Package} ${Version}\n' 'libopenblas0*' 2>/dev/null | head -2 | tr '\n' ' ')"
  "$HAL" devices | sed -n '1,20p'
} > "$OUT/machine.txt"
"$HAL" bench --device cpu --json "$OUT/bench.json" --csv "$OUT/bench.csv" "$@" | tee "$OUT/bench.log"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  /usr/bin/python3 "$(dirname "$0")/../plot_roofline.py" "$OUT/bench.json" "$OUT/roofline.png"
fi
