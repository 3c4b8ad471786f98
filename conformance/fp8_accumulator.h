#pragma once
// The precision of the fp8 GEMMs' block sums (128 products of K) that each
// backend states, for the gemm_fp8 bound (docs/accuracy.md, "Scaled FP8",
// which derives both forms). Private to the suite.
#include <cmath>
#include <cstdint>
#include <string_view>

namespace hal::conformance {

struct Fp8BlockSumModel {
  double u;  // unit roundoff of one accumulation step
  // 0: a chain of fp32 additions (the CPU; CUDA's general kernel);
  // k > 0: a fused k-product adder that aligns its terms to the largest and
  // keeps about -log2(u) + 1 bits, truncating (FP8 wgmma: k = 32 per
  // m64nNk32 instruction), chained over the block's ceil(L / k) instructions.
  int products_per_step = 0;
  const char* source = "";  // where the precision comes from

  // Relative bound of a block sum of L products: |fl(S) - S| <= g * sum |a_k b_k|.
  //   chain:  Higham's gamma over L roundings, L u / (1 - L u);
  //   fused:  each of the s = ceil(L/k) steps truncates each of its terms to
  //           the largest term's exponent minus the kept bits (u per term of
  //           up to k products, plus the incoming accumulator after the
  //           first) and its result (u), so n = L + 2 s - 1 unit errors of
  //           at most the sum of |terms| so far: n u / (1 - n u).
  double block_gamma(std::int64_t l) const {
    double n = static_cast<double>(l);
    if (products_per_step > 0) {
      const std::int64_t s = (l + products_per_step - 1) / products_per_step;
      n = static_cast<double>(l + 2 * s - 1);
    }
    const double nu = n * u;
    return nu < 1 ? nu / (1 - nu) : INFINITY;
  }
};

// The CPU (and the fp32 block sums of CUDA's general kernel).
inline constexpr Fp8BlockSumModel kFp8BlockSumFp32{0x1p-24, 0, "fp32 additions"};
// sm_90a FP8 wgmma: DeepSeek-V3 technical report (arXiv:2412.19437, section
// 3.3.2): the H800 tensor cores keep about 14 bits in FP8 GEMM accumulation;
// DeepGEMM issues #37 and #50 describe the alignment-and-truncate adder.
// 14 bits, truncating: u = 2^-13.
inline constexpr Fp8BlockSumModel kFp8BlockSumWgmma{0x1p-13, 32,
                                                    "DeepSeek-V3 report 3.3.2: ~14 bits kept by H800 FP8 wgmma"};
// MI300 FP8 MFMA: its internal precision is not documented (CDNA3 ISA
// guide). Assumed no better than wgmma's (a fused 32-product step, since the
// kernel issues 32x32x16 instructions: 16 products per lane per step are
// taken as 32 to stay on the safe side) until measured on a device.
inline constexpr Fp8BlockSumModel kFp8BlockSumMfmaAssumed{0x1p-13, 32,
                                                          "assumed like wgmma's (CDNA3 does not document it)"};

// The model of the device the suite runs: "cpu" (and anything unknown) the
// CPU's, "cuda:N" wgmma's (it also bounds the fp32 general kernel), "hip:N"
// the assumed MFMA one.
inline Fp8BlockSumModel fp8_block_sum_model(std::string_view device_name) {
  if (device_name.rfind("cuda", 0) == 0) return kFp8BlockSumWgmma;
  if (device_name.rfind("hip", 0) == 0) return kFp8BlockSumMfmaAssumed;
  return kFp8BlockSumFp32;
}

}  // namespace hal::conformance
