#pragma once
// Planning of the fp8 decode GEMM (kernel_params/gemm_fp8_decode.h,
// ptx/kernels/gemm_fp8_decode.cu): whether a gemm_fp8 call qualifies, how
// many K splits (of whole 128-blocks: a scale block never straddles two
// splits), the grids and the workspace. Pure host code, no vendor call;
// tested on the CPU with a host emulation of the kernel
// (tests/unit/gpu_gemm_fp8_decode_plan_test.cpp). The split reasoning and
// the reproducibility it gives (bitwise run to run on one device model) are
// the 16-bit decode GEMM's (gemm_decode_plan.h).
#include <cstdint>
#include <string>
#include <vector>

#include "backends/gpu/gemm_decode_plan.h"
#include "kernel_params/fp8.h"
#include "kernel_params/gemm_decode.h"
#include "kernel_params/gemm_fp8_decode.h"

namespace hal::gpu {

// The fp8 decode GEMM's defaults: 16 resident units per SM, >= 4 x 128
// K-values (8 KiB of weights per unit) per split.
inline constexpr DecodeGemmTuning kFp8DecodeTuning{16, 4};

// The 16-bit decode GEMM's plan (plan_decode_splits makes both): m_tiles of
// tile_m rows (CUDA 1, 2, 4, 8; HIP 1, 2, 4), splits of whole 128-blocks;
// pass 2 is hal_gemm_decode_reduce.
using Fp8DecodePlan = DecodeGemmPlan;

// `p`: gemm_fp8's parameters (backends/gpu/kernel_args.h gemm_fp8_params);
// compute_units: SMs of the stream's partition. Takes plain gemm_fp8 (not
// grouped) with M <= 64, OCP e4m3 / e5m2 operands contiguous along K,
// 16-byte aligned bases and rows, K % 16 == 0.
// tile_m: rows of M per matrix instruction, kDecodeCudaTileM (8, CUDA) or
// kDecodeHipTileM (16, HIP); the variants have 1, 2, 4 (and on CUDA 8) tiles.
// accept_fnuz: FNUZ e4m3 / e5m2 operands too, both of that family (the HIP
// kernel has FNUZ variants; CUDA's has none).
Fp8DecodePlan plan_fp8_decode_gemm(const kernel_params::GemmFp8Params& p, int compute_units,
                                   const DecodeGemmTuning& tuning = kFp8DecodeTuning,
                                   int tile_m = kernel_params::kDecodeCudaTileM, bool accept_fnuz = false);

// Pass 1's parameters for an accepted plan (partial left null: the
// launcher's workspace), and pass 1's kernel name.
kernel_params::GemmFp8DecodeParams fp8_decode_params(const kernel_params::GemmFp8Params& p, const Fp8DecodePlan& plan);
// hip: hip/kernels/gemm_fp8_decode.hip's names (gemm_fp8_decode_<a>_<b>_m<16|32|64>,
// FNUZ operands gemm_fp8_decode_fnuz_<a>_<b>_m<16|32|64>),
// else ptx/kernels/gemm_fp8_decode.cu's (hal_gemm_fp8_decode_<a>_<b>_m<8|16|32|64>).
const char* fp8_decode_kernel_name(const kernel_params::GemmFp8Params& p, const Fp8DecodePlan& plan,
                                   bool hip = false);

// Host emulation of both passes on row-major fp8 bytes A [m, k], B [n, k]
// and dense scales sa [m][kb], sb [ceil(n/128)][kb] (kb = ceil(k/128)):
// the kernel's unit decomposition, lane -> (row, K range) map, chunk-word ->
// K-slot assignment of the instruction form (fp8_mma: the sm_89+ m16n8k32
// form on the fp8 bytes; otherwise the sm_80 form, on the bits
// fp8_decode_to_f16_pair makes, decoded as f16) and accumulator -> output
// map, each instruction replaced by fp32 fmas in K-slot order from its
// incoming accumulator; the promotion total = fma(sa * sb, S_kb * unscale,
// total) per block in order; pass 2's split order. Returns acc [m][n] (no
// epilogue). With inputs whose sums are exact it must equal the exact
// result whatever order the hardware adds in.
std::vector<float> emulate_fp8_decode_gemm(const Fp8DecodePlan& plan, bool fp8_mma, std::int64_t m, std::int64_t n,
                                           std::int64_t k, std::int32_t a_type, std::int32_t b_type,
                                           const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                                           const std::vector<float>& sa, const std::vector<float>& sb);

// The same for hip/kernels/gemm_fp8_decode.hip (a plan made with tile_m
// 16): wave64, lane l loads K-values 16 (l/16) .. +15 of weight row l % 16
// and activation row l % 16 of each 16-row M tile; instruction i (0..3) of a
// 64-K step is v_mfma_f32_16x16x16f16 on word i of each chunk converted to
// 4 halves (A[l%16][4(l/16) + e], B[4(l/16) + e][l%16]; FNUZ operands by
// fp8_fnuz_decode_to_f16_pair); accumulator r is output
// (n0 + 4 (l/16) + r, m0 + l % 16).
std::vector<float> emulate_fp8_decode_gemm_hip(const Fp8DecodePlan& plan, std::int64_t m, std::int64_t n,
                                               std::int64_t k, std::int32_t a_type, std::int32_t b_type,
                                               const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                                               const std::vector<float>& sa, const std::vector<float>& sb);

}  // namespace hal::gpu
