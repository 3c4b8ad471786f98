# Shared by the scripts: picks the preset (CUDA when nvcc is installed).
HAL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NVCC="${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
if [ -z "${HAL_PRESET:-}" ]; then
  if [ -x "$NVCC" ]; then HAL_PRESET=cuda; else HAL_PRESET=cpu; fi
fi
if [ "$HAL_PRESET" = cuda ] || [ "$HAL_PRESET" = all ]; then export CUDACXX="$NVCC"; fi
JOBS="${JOBS:-$(nproc)}"
