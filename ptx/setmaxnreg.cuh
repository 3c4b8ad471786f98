#pragma once
// setmaxnreg (sm_90a): a warpgroup hands registers back (dec) or claims them
// (inc), e.g. a TMA producer warpgroup drops to 40 so consumer warpgroups can
// rise to 232. Executed by all 128 threads of a warpgroup together; the
// kernel's launch register count must allow the redistribution.
#include "ptx/arch_config.cuh"

namespace hal::ptx {

template <int Regs, int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(Regs >= 24 && Regs <= 256 && Regs % 8 == 0, "setmaxnreg: count must be a multiple of 8 in [24, 256]");
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "setmaxnreg_inc", "sm_90a (setmaxnreg)");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Regs));
}

template <int Regs, int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(Regs >= 24 && Regs <= 256 && Regs % 8 == 0, "setmaxnreg: count must be a multiple of 8 in [24, 256]");
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "setmaxnreg_dec", "sm_90a (setmaxnreg)");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Regs));
}

}  // namespace hal::ptx
