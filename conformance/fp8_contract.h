#pragma once
// The accuracy contract of the scaled-FP8 ops (docs/accuracy.md, "Scaled
// FP8"), private to the suite.
//
// quantize_fp8 and dequantize_fp8 are exact: their references are computed
// here on the host with the contract's fp32 recipe (hal/op_fp8.h), written
// independently of the CPU backend's kernel. gemm_fp8 and gemm_fp8_grouped
// are scored against the fp64 oracle with the bound below.
#include <span>
#include <vector>

#include "conformance/oracle.h"
#include "hal/op.h"

namespace hal::conformance {

// Unit roundoff of the block sums (128 products of K) that the bound allows.
// fp32 on the CPU, the only backend that runs the fp8 GEMMs today. A backend
// whose block sums are narrower (sm_90a wgmma's FP8 accumulator, about 14
// bits: 2^-13, docs/accuracy.md) needs its own value here before it can run
// the cases.
inline constexpr double kFp8BlockSumRoundoff = 0x1p-24;

std::vector<Reference> quantize_fp8_references(const QuantizeFp8Call& host_call);  // y, then scales
Reference dequantize_fp8_reference(const DequantizeFp8Call& host_call);

namespace contract {
// Per-element bounds of c, from the oracle call (every floating tensor f64).
std::vector<double> gemm_fp8_bounds(const GemmFp8Call& oracle_call, std::span<const double> ref, DType out_dtype);
std::vector<double> gemm_fp8_grouped_bounds(const GemmFp8GroupedCall& oracle_call, std::span<const double> ref,
                                            DType out_dtype);
}  // namespace contract

}  // namespace hal::conformance
