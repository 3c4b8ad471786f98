# Shared by the scripts: picks the preset from the toolchains installed
# (CUDA when nvcc is there, HIP when hipcc is there, both -> "all").
HAL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NVCC="${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
pick_preset() {
  local cuda=0 hip=0
  [ -x "$NVCC" ] && cuda=1
  command -v hipcc >/dev/null 2>&1 && hip=1
  if [ $cuda = 1 ] && [ $hip = 1 ]; then echo all
  elif [ $cuda = 1 ]; then echo cuda
  elif [ $hip = 1 ]; then echo hip
  else echo cpu; fi
}
if [ -x "$NVCC" ]; then export CUDACXX="$NVCC"; fi
JOBS="${JOBS:-$(nproc)}"
