#!/usr/bin/env bash
# Makes a relocatable bundle of a CUDA build: the binaries and the non-system
# shared libraries they need (oneTBB, fmt), so that a build made here runs on a
# GPU machine without development packages. Also writes OUT_DIR.tar.xz: every
# binary embeds all device code, ~45 MB each, so only the compressed bundle
# (~6 MB a binary) fits the device tool's 64 MiB carry. On the GPU machine:
#   mkdir -p /tmp/b && tar xJf build/bundle.tar.xz -C /tmp/b --strip-components=1 &&
#   bash /tmp/b/run_on_gpu.sh /tmp/b "$OUT" smoke uvtests uvconformance   (then, a second call: uvbench)
#   scripts/make-bundle.sh BUILD_DIR OUT_DIR
set -euo pipefail
BUILD="${1:?build dir}"
OUT="${2:?output dir}"
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib"
for b in tools/hal tests/cuda/hal_cuda_tests tests/conformance/hal_conformance_tests tests/hal_unit_tests; do
  if [ -x "$BUILD/$b" ]; then cp "$BUILD/$b" "$OUT/bin/"; fi
done
strip --strip-debug "$OUT"/bin/* 2>/dev/null || true
# Copy every library the binaries resolve outside the C runtime and the GPU driver.
for b in "$OUT"/bin/*; do
  ldd "$b" | awk '/=> \//{print $3}' ; done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*|libcuda.so*) ;;
    *) cp -L "$lib" "$OUT/lib/" ;;
  esac
done
# libstdc++ from this toolchain, used only if the target's is older (see run script).
cp -L "$(g++ -print-file-name=libstdc++.so.6)" "$OUT/lib/fallback-libstdc++.so.6"
cp "$(dirname "$0")/../bench/gpu/run_on_gpu.sh" "$OUT/"
if [ -f "$BUILD/cuda_kernel_report.json" ]; then cp "$BUILD/cuda_kernel_report.json" "$OUT/"; fi
du -sh "$OUT"
tar cf - -C "$(dirname "$OUT")" "$(basename "$OUT")" | xz -T2 -6 > "$OUT.tar.xz"
du -sh "$OUT.tar.xz"
