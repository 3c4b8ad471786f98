// fill_random: Philox4x32-10 from hal/philox.h, the same header the host
// reference uses, so every backend produces the same bits. philox.h keeps
// the HIP compiler from contracting its float math (#pragma clang fp
// contract(off)); this file must never be built with -ffast-math.
//
// One thread per Philox block of 4 consecutive logical elements: the block is
// computed once and its lanes are constant indices after unrolling. (With one
// element per thread, philox_bits' v[index % 4] is a dynamic index into a
// private array, which the compiler placed in scratch and LDS.)
#include <hip/hip_runtime.h>

#include "hal/philox.h"
#include "hip/element.h"
#include "kernel_params/random.h"

using namespace hal::hip;
using namespace hal::kernel_params;

extern "C" __global__ __launch_bounds__(256) void hal_fill_random(FillRandomParams p) {
  const int64_t blocks = (p.n + 3) / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks; blk += stride) {
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t i = 4 * blk + lane;
      if (i >= p.n) break;
      const uint64_t idx = static_cast<uint64_t>(i);
      const float v =
          p.normal ? hal::philox_normal(p.seed, idx, p.a, p.b) : hal::philox_uniform(p.seed, idx, p.a, p.b);
      store_f32(p.y, p.y_type, p.contiguous ? i : strided_offset(p.shape, p.y_strides, i), v);
    }
  }
}
