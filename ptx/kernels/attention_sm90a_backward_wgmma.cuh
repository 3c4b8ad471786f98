#pragma once
// wgmma m64n64k16 with both operands in shared memory (the "SS" form), f16 /
// bf16 in, fp32 accumulate: S^T = K Q^T and dP^T = V dY^T of the sm_90a
// attention backward's dK/dV kernel (64 queries a tile) and S = Q K^T,
// dP = dY V^T of its dQ kernel (64 keys a tile). ptx/wgmma_sm90a.cuh has the
// n128 SS and the n64 / n128 RS forms; this n64 SS form lives here (the
// attention backward's own file) until the coordinator moves it there.
// Accumulator layout as in ptx/wgmma_sm90a.cuh (8 column groups of 4).
#include <stdint.h>

#include "ptx/arch_config.cuh"

namespace hal::ptx {

#define HAL_WGMMA_N64_SS_STRUCT(Name, ab)                                                                        \
  template <int TransA, int TransB>                                                                             \
  struct Name {                                                                                                 \
    using CRegs = float[32];                                                                                    \
    template <int Arch = HAL_PTX_ARCH>                                                                          \
    static __device__ __forceinline__ void fma(CRegs& d, uint64_t desc_a, uint64_t desc_b, int scale_d) {       \
      HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, #Name, "sm_90a (wgmma)");                                             \
      asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"                                               \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." ab "." ab " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}" \
                   ", %32, %33, p, 1, 1, %35, %36;\n}\n"                                                       \
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
                   : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TransA), "n"(TransB));                         \
    }                                                                                                           \
  };
HAL_WGMMA_N64_SS_STRUCT(WgmmaM64N64K16F32Bf16SS, "bf16")
HAL_WGMMA_N64_SS_STRUCT(WgmmaM64N64K16F32F16SS, "f16")
#undef HAL_WGMMA_N64_SS_STRUCT

}  // namespace hal::ptx
