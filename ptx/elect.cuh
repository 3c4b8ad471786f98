#pragma once
// elect.sync (sm_90+): elects one leader lane among the lanes in `mask`
// (all of them must execute it); true in exactly that lane.
#include <stdint.h>

#include "ptx/arch_config.cuh"

namespace hal::ptx {

template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ bool elect_one_sync(uint32_t mask = 0xffffffffu) {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "elect_one_sync", "sm_90 (elect.sync)");
  uint32_t is_leader;
  asm volatile(
      "{\n .reg .b32 leader;\n .reg .pred p;\n elect.sync leader|p, %1;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(is_leader)
      : "r"(mask));
  return is_leader != 0;
}

}  // namespace hal::ptx
