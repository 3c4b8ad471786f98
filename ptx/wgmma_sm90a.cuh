#pragma once
// wgmma (sm_90a): warpgroup-wide asynchronous MMA. 128 threads (4 warps)
// issue it together; operands come from shared memory through 64-bit matrix
// descriptors, the accumulator lives in registers.
//
//   wgmma_fence();            // before the first wgmma touching new registers
//   Wgmma...::fma(d, da, db, scale_d);  ... wgmma_commit();  wgmma_wait<N>();
//
// Accumulator layout of m64nNk16 (PTX ISA, "wgmma register fragments"):
// warp w of the warpgroup owns rows 16w..16w+15; in each 8-column slice j,
// lane t holds d[4j + 0..1] = D[16w + t/4][8j + 2(t%4) + 0..1] and
// d[4j + 2..3] = D[16w + t/4 + 8][8j + 2(t%4) + 0..1].
#include <stdint.h>

#include "ptx/arch_config.cuh"
#include "ptx/cp_async.cuh"  // smem_u32

namespace hal::ptx {

// Shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format").
// Addresses and offsets are stored in units of 16 bytes (>> 4).
union WgmmaSmemDescriptor {
  uint64_t desc = 0;
  struct {
    uint64_t start_address : 14;        // bits [0, 14):  smem address >> 4
    uint64_t reserved0 : 2;             // bits [14, 16)
    uint64_t leading_byte_offset : 14;  // bits [16, 30): LBO >> 4 (between core matrices along K / unused with swizzle K-major)
    uint64_t reserved1 : 2;             // bits [30, 32)
    uint64_t stride_byte_offset : 14;   // bits [32, 46): SBO >> 4 (between 8-row groups)
    uint64_t reserved2 : 3;             // bits [46, 49)
    uint64_t base_offset : 3;           // bits [49, 52): swizzle pattern phase when the tile is not 1024B-aligned
    uint64_t reserved3 : 10;            // bits [52, 62)
    uint64_t layout_type : 2;           // bits [62, 64): 0 interleave (no swizzle), 1 128B, 2 64B, 3 32B swizzle
  } bits;
};
static_assert(sizeof(WgmmaSmemDescriptor) == 8, "wgmma descriptor is 64 bits");

enum class WgmmaSwizzle : uint32_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

__device__ __forceinline__ uint64_t make_wgmma_desc(const void* smem, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                                    WgmmaSwizzle swizzle) {
  WgmmaSmemDescriptor d;
  d.bits.start_address = (smem_u32(smem) & 0x3FFFF) >> 4;
  d.bits.leading_byte_offset = lbo_bytes >> 4;
  d.bits.stride_byte_offset = sbo_bytes >> 4;
  d.bits.base_offset = 0;
  d.bits.layout_type = static_cast<uint32_t>(swizzle);
  return d.desc;
}

template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void wgmma_fence() {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "wgmma_fence", "sm_90a (wgmma)");
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void wgmma_commit() {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "wgmma_commit", "sm_90a (wgmma)");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most N committed wgmma groups are pending.
template <int N, int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void wgmma_wait() {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "wgmma_wait", "sm_90a (wgmma)");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// The 16-bit SS forms, D[64xN] (+)= A[64x16] B[16xN], bf16 or f16 in, f32
// accumulate, A and B in shared memory: N = 32 (S = Q K^T of the 32-key
// tile of the sm_90a attention forward's bf16 d = 128 overlap / ping-pong
// schedules, whose 3-part P and 64 O registers leave room for no more), 64 (the sm_90a attention
// backward's S^T = K Q^T, dP^T = V dY^T and S = Q K^T, dP = dY V^T: 64-row
// tiles), 128 (the GEMM and the attention forward), 256 (the wide GEMM
// tile). N / 2 accumulators per thread, column groups j = 0..N/8-1 of the
// layout above. TransA/TransB: 0 = K-major, 1 = MN-major (16-bit types
// only). scale_d = 0 overwrites D. One macro writes every shape; the operand
// lists (accumulators, then desc_a, desc_b, scale_d, TransA, TransB) are
// spelled out per N.
#define HAL_WGMMA_N32_ACC "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define HAL_WGMMA_N32_OUTS(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define HAL_WGMMA_N64_ACC "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define HAL_WGMMA_N64_OUTS(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define HAL_WGMMA_N128_ACC "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define HAL_WGMMA_N128_OUTS(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define HAL_WGMMA_N256_ACC "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define HAL_WGMMA_N256_OUTS(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define HAL_WGMMA_SS16_STRUCT(Name, shape, ab, regs, ACC, OUTS, scale_op, operands)                             \
  template <int TransA, int TransB>                                                                             \
  struct Name {                                                                                                 \
    using CRegs = float[regs];                                                                                  \
    template <int Arch = HAL_PTX_ARCH>                                                                          \
    static __device__ __forceinline__ void fma(CRegs& d, uint64_t desc_a, uint64_t desc_b, int scale_d) {       \
      HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, #Name, "sm_90a (wgmma)");                                            \
      asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, " scale_op ", 0;\n"                                      \
                   "wgmma.mma_async.sync.aligned." shape ".f32." ab "." ab " " ACC operands ";\n}\n"            \
                   : OUTS(d)                                                                                    \
                   : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TransA), "n"(TransB));                         \
    }                                                                                                           \
  };
#define HAL_WGMMA_N32_SS(Name, ab)                                                                              \
  HAL_WGMMA_SS16_STRUCT(Name, "m64n32k16", ab, 16, HAL_WGMMA_N32_ACC, HAL_WGMMA_N32_OUTS, "%18",                \
                        ", %16, %17, p, 1, 1, %19, %20")
#define HAL_WGMMA_N64_SS(Name, ab)                                                                              \
  HAL_WGMMA_SS16_STRUCT(Name, "m64n64k16", ab, 32, HAL_WGMMA_N64_ACC, HAL_WGMMA_N64_OUTS, "%34",                \
                        ", %32, %33, p, 1, 1, %35, %36")
#define HAL_WGMMA_N128_SS(Name, ab)                                                                             \
  HAL_WGMMA_SS16_STRUCT(Name, "m64n128k16", ab, 64, HAL_WGMMA_N128_ACC, HAL_WGMMA_N128_OUTS, "%66",             \
                        ", %64, %65, p, 1, 1, %67, %68")
#define HAL_WGMMA_N256_SS(Name, ab)                                                                             \
  HAL_WGMMA_SS16_STRUCT(Name, "m64n256k16", ab, 128, HAL_WGMMA_N256_ACC, HAL_WGMMA_N256_OUTS, "%130",           \
                        ", %128, %129, p, 1, 1, %131, %132")
HAL_WGMMA_N32_SS(WgmmaM64N32K16F32Bf16SS, "bf16")
HAL_WGMMA_N32_SS(WgmmaM64N32K16F32F16SS, "f16")
HAL_WGMMA_N64_SS(WgmmaM64N64K16F32Bf16SS, "bf16")
HAL_WGMMA_N64_SS(WgmmaM64N64K16F32F16SS, "f16")
HAL_WGMMA_N128_SS(WgmmaM64N128K16F32Bf16SS, "bf16")
HAL_WGMMA_N128_SS(WgmmaM64N128K16F32F16SS, "f16")
HAL_WGMMA_N256_SS(WgmmaM64N256K16F32Bf16SS, "bf16")
HAL_WGMMA_N256_SS(WgmmaM64N256K16F32F16SS, "f16")
#undef HAL_WGMMA_N256_SS
#undef HAL_WGMMA_N128_SS
#undef HAL_WGMMA_N64_SS
#undef HAL_WGMMA_N32_SS
#undef HAL_WGMMA_SS16_STRUCT

// D[64x128] (+)= A[64x32] B[32x128] with fp8 operands (PTX ISA: .e4m3 /
// .e5m2, dense shape m64nNk32). FP8 wgmma has no transpose immediates: A
// and B are both K-major (B stored [N, K]), each row of a 128B-swizzled tile
// holds 128 K values, and the k-th k32 slice starts 32k bytes into it (the
// same byte offsets as the 16-bit k16 slices). Same accumulator layout (and
// operand list) as m64n128k16 above. The accumulator keeps far less than
// fp32 precision (about 14 bits, DeepSeek-V3 report section 3.3.2): callers
// promote into fp32 registers every 128 of K (ptx/kernels/gemm_fp8_sm90a.cu).
// scale_d = 0 makes the instruction overwrite D (the accumulator is then
// written only by wgmma, which ptxas needs to keep the pipeline: C7514).
#define HAL_WGMMA_FP8_STRUCT(Name, ta, tb)                                                                      \
  struct Name {                                                                                                 \
    using CRegs = float[64];                                                                                    \
    static constexpr int K = 32;                                                                                \
    template <int Arch = HAL_PTX_ARCH>                                                                          \
    static __device__ __forceinline__ void fma(CRegs& d, uint64_t desc_a, uint64_t desc_b, int scale_d) {       \
      HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, #Name, "sm_90a (wgmma)");                                             \
      asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"                                              \
                   "wgmma.mma_async.sync.aligned.m64n128k32.f32." ta "." tb " " HAL_WGMMA_N128_ACC              \
                   ", %64, %65, p, 1, 1;\n}\n"                                                                   \
                   : HAL_WGMMA_N128_OUTS(d)                                                                     \
                   : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                                   \
    }                                                                                                           \
  };
HAL_WGMMA_FP8_STRUCT(WgmmaM64N128K32F32E4m3E4m3SS, "e4m3", "e4m3")
HAL_WGMMA_FP8_STRUCT(WgmmaM64N128K32F32E4m3E5m2SS, "e4m3", "e5m2")
HAL_WGMMA_FP8_STRUCT(WgmmaM64N128K32F32E5m2E4m3SS, "e5m2", "e4m3")
HAL_WGMMA_FP8_STRUCT(WgmmaM64N128K32F32E5m2E5m2SS, "e5m2", "e5m2")
#undef HAL_WGMMA_FP8_STRUCT
#undef HAL_WGMMA_N256_OUTS
#undef HAL_WGMMA_N256_ACC
#undef HAL_WGMMA_N128_OUTS
#undef HAL_WGMMA_N128_ACC
#undef HAL_WGMMA_N64_OUTS
#undef HAL_WGMMA_N64_ACC
#undef HAL_WGMMA_N32_OUTS
#undef HAL_WGMMA_N32_ACC


// D[64xN] (+)= A[64x16] B[16xN] with A from REGISTERS (the "RS" form): the
// attention kernel's O += P V takes P straight from the S accumulators.
// A fragment (PTX ISA "register fragments, matrix A", 16-bit types): warp w
// holds rows 16w..16w+15; lane t's a[0] = A[16w + t/4][2(t%4) + 0..1],
// a[1] = the same columns of row + 8, a[2] / a[3] = columns + 8: the
// accumulator layout above restricted to 16 columns, so accumulator column
// groups 2k, 2k+1 packed in pairs are the A fragment of k16 slice k.
// TransB: 0 = B K-major, 1 = B MN-major (rows of N contiguous, 16-bit only).
// The A registers are read asynchronously: they must keep their values
// until a wgmma_wait covering this instruction (wgmma_fence_operand on them
// after the wait keeps the compiler from reusing them earlier).
template <int TransB>
struct WgmmaM64N64K16F32Bf16RS {
  using CRegs = float[32];
  using ARegs = uint32_t[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void fma(CRegs& d, const ARegs& a, uint64_t desc_b, int scale_d) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "WgmmaM64N64K16F32Bf16RS", "sm_90a (wgmma)");
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TransB));
  }
};
template <int TransB>
struct WgmmaM64N64K16F32F16RS {
  using CRegs = float[32];
  using ARegs = uint32_t[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void fma(CRegs& d, const ARegs& a, uint64_t desc_b, int scale_d) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "WgmmaM64N64K16F32F16RS", "sm_90a (wgmma)");
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TransB));
  }
};
template <int TransB>
struct WgmmaM64N128K16F32Bf16RS {
  using CRegs = float[64];
  using ARegs = uint32_t[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void fma(CRegs& d, const ARegs& a, uint64_t desc_b, int scale_d) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "WgmmaM64N128K16F32Bf16RS", "sm_90a (wgmma)");
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TransB));
  }
};
template <int TransB>
struct WgmmaM64N128K16F32F16RS {
  using CRegs = float[64];
  using ARegs = uint32_t[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void fma(CRegs& d, const ARegs& a, uint64_t desc_b, int scale_d) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "WgmmaM64N128K16F32F16RS", "sm_90a (wgmma)");
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TransB));
  }
};

// Register-operand counterpart of wgmma_fence_operand (the RS form's A).
__device__ __forceinline__ void wgmma_fence_operand(uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

// Keeps the compiler from moving accumulator reads/writes across the
// asynchronous wgmma window (CUTLASS's warpgroup_fence_operand).
__device__ __forceinline__ void wgmma_fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

}  // namespace hal::ptx
