#pragma once
// wgmma m64n32k16 with both operands in shared memory (the "SS" form), f16 /
// bf16 in, fp32 accumulate: S = Q K^T of a 32-key tile, the bf16 d = 128
// overlap / pingpong kernels of the sm_90a attention forward
// (attention_sm90a.cu; their 3-part P and the 64 O registers leave room for
// no more S than that). Accumulator layout as in ptx/wgmma_sm90a.cuh (4
// column groups of 4). Kept beside the kernel while it is unverified.
#include <stdint.h>

#include "ptx/arch_config.cuh"

namespace hal::ptx {

#define HAL_WGMMA_N32_SS_STRUCT(Name, ab)                                                                       \
  template <int TransA, int TransB>                                                                             \
  struct Name {                                                                                                 \
    using CRegs = float[16];                                                                                    \
    template <int Arch = HAL_PTX_ARCH>                                                                          \
    static __device__ __forceinline__ void fma(CRegs& d, uint64_t desc_a, uint64_t desc_b, int scale_d) {       \
      HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, #Name, "sm_90a (wgmma)");                                             \
      asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"                                               \
                   "wgmma.mma_async.sync.aligned.m64n32k16.f32." ab "." ab                                      \
                   " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"                    \
                   ", %16, %17, p, 1, 1, %19, %20;\n}\n"                                                       \
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),         \
                     "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),     \
                     "+f"(d[14]), "+f"(d[15])                                                                   \
                   : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TransA), "n"(TransB));                         \
    }                                                                                                           \
  };
HAL_WGMMA_N32_SS_STRUCT(WgmmaM64N32K16F32Bf16SS, "bf16")
HAL_WGMMA_N32_SS_STRUCT(WgmmaM64N32K16F32F16SS, "f16")
#undef HAL_WGMMA_N32_SS_STRUCT

}  // namespace hal::ptx
