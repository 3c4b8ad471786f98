// fill_random: element i (row-major logical index) = philox_uniform/normal
// (seed, i, a, b) from hal/philox.h -- the very function the CPU uses, written
// with non-contractible IEEE operations so the bits match -- rounded once to
// y's dtype.
#include "hal/philox.h"
#include "ptx/element.cuh"
#include "kernel_params/random.h"

using namespace hal::ptx;
using namespace hal::kernel_params;

extern "C" __global__ void fill_random(const FillRandomParams p) {
  const auto t = static_cast<ElemType>(p.y_type);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const auto index = static_cast<uint64_t>(i);
    const float v = p.normal ? hal::philox_normal(p.seed, index, p.a, p.b) : hal::philox_uniform(p.seed, index, p.a, p.b);
    store_from_float(p.y, t, strided_offset(p.shape, p.y_strides, i), v);
  }
}
