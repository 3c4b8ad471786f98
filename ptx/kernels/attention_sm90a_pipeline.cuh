#pragma once
// The block scaffolding the sm_90a attention kernels (the forward,
// attention_sm90a.cu; the backward's dK/dV and dQ kernels,
// attention_sm90a_backward.cu) share: the 1024-aligned shared memory, the
// producer / consumer warpgroup split with its setmaxnreg, the position in
// an mbarrier ring and the TMA load of one tile as its 64-channel boxes.
// The .cu includes this after its HAL_PTX_MBARRIER_* settings.
#include <stdint.h>

#include "ptx/arch_config.cuh"
#include "ptx/cp_async.cuh"  // smem_u32
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/tma.cuh"

namespace hal::ptx::attention_sm90a_pipeline {

#if HAL_PTX_SM90A

// The bytes from p up to the next multiple of 1024: the 128B swizzle atom
// every TMA tile and wgmma operand starts on (the tiles' kSharedBytes hold
// the 1024 bytes of slack for it).
__device__ __forceinline__ uint32_t swizzle_atom_pad(const void* p) {
  const uint32_t raw = smem_u32(p);
  return ((raw + 1023u) & ~1023u) - raw;
}

// A ring position: stage index and the parity of its current pass. Producer
// and consumers walk the same sequence of tiles, so theirs agree.
struct RingPos {
  int stage = 0;
  uint32_t phase = 0;
  template <int kStages>
  __device__ __forceinline__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

// One tile of a 4-D (channel, row, head, batch) tensor map as kBoxes boxes
// of 64 channels (kBoxBytes apart in shared memory), completing on bar.
template <int kBoxes, int kBoxBytes>
__device__ __forceinline__ void load_tile(uint8_t* dst, const void* map, Mbarrier& bar, int32_t row, int32_t head,
                                          int32_t batch) {
#pragma unroll
  for (int box = 0; box < kBoxes; ++box) TmaLoad4D::copy(dst + box * kBoxBytes, map, bar, 64 * box, row, head, batch);
}

// Warpgroup 0 drops to Cfg::kProducerRegisters and its thread 0 runs
// producer(); the others rise to Cfg::kConsumerRegisters and run
// consumer(cw), cw = their index among the consumers.
template <class Cfg, class Producer, class Consumer>
__device__ __forceinline__ void split_roles(int wg, const Producer& producer, const Consumer& consumer) {
  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegisters>();
    if (threadIdx.x == 0) producer();
  } else {
    setmaxnreg_inc<Cfg::kConsumerRegisters>();
    consumer(wg - 1);
  }
}

#endif  // HAL_PTX_SM90A

}  // namespace hal::ptx::attention_sm90a_pipeline
