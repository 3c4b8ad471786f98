#pragma once
// The accuracy contract in code: for every op and output dtype, a bound on
// |device output - exact result| per output element, derived by rounding-error
// analysis (docs/accuracy.md states every formula and why it holds).
//
// Notation: u32 = 2^-24 (fp32 unit roundoff), eps32 = 2^-23 (one fp32 ulp at
// 1.0), gamma(K) = K*u32 / (1 - K*u32) (Higham), u_out the unit roundoff of the
// output dtype. Every bound is
//     c * (compute_error * (1 + u_out) + u_out * |ref| + eta_out)
// with the safety factor c = 2 and eta_out half the smallest subnormal of the
// output dtype (rounding to it near zero is absolute, not relative). A bound
// of exactly 0 means the op is exact: the output must equal the reference.
#include <cstdint>
#include <span>
#include <vector>

#include "conformance/fp8_accumulator.h"
#include "hal/op.h"

namespace hal::conformance::contract {

inline constexpr double kSafety = 2.0;              // c
inline constexpr double kU32 = 0x1p-24;             // fp32 unit roundoff
inline constexpr double kEps32 = 0x1p-23;           // fp32 ulp at 1
inline constexpr double kFltMin = 0x1p-126;         // smallest normal fp32
inline constexpr double kTranscendentalUlps = 4.0;  // exp log tanh erf sigmoid sin cos pow
inline constexpr double kDivUlps = 2.0;             // fp32 division and rsqrt
inline constexpr double kSqrtUlps = 1.0;
inline constexpr double kActivationLipschitz = 1.13;  // max |d/dz| of gelu_tanh, silu (relu: 1)

double gamma(double k);
double output_roundoff(DType t);   // u_out; 0 for integer dtypes
double output_underflow(DType t);  // eta_out: half the smallest subnormal

// Per-element bounds for output number `output` (in hal::for_each_tensor's
// order) of `oracle_call`: the call as the fp64 oracle ran it (floating inputs
// as f64 host tensors holding exactly the device's input values; integer
// inputs as given; accumulated outputs holding their initial contents), `ref`
// that output's reference in logical order, `out_dtype` the dtype the device
// under test writes.
// `fp8_block_sums`: the device's block-sum precision for gemm_fp8[_grouped]
// (fp8_accumulator.h; the CPU's by default).
std::vector<double> element_bounds(const OpCall& oracle_call, std::size_t output, std::span<const double> ref,
                                   DType out_dtype, const Fp8BlockSumModel& fp8_block_sums = kFp8BlockSumFp32);

// Ops whose result is exact and must also keep the sign of zero (IEEE: neg,
// abs, copies, conversions). Other ops may return either zero.
bool checks_zero_sign(const OpCall& call);

}  // namespace hal::conformance::contract
