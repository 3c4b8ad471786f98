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

#include "conformance/fp8_accumulator.h"
#include "conformance/oracle.h"
#include "hal/op.h"

namespace hal::conformance {


std::vector<Reference> quantize_fp8_references(const QuantizeFp8Call& host_call);  // y, then scales
Reference dequantize_fp8_reference(const DequantizeFp8Call& host_call);

namespace contract {
// Per-element bounds of c, from the oracle call (every floating tensor f64),
// with the block sums of the device's stated precision (fp8_accumulator.h).
std::vector<double> gemm_fp8_bounds(const GemmFp8Call& oracle_call, std::span<const double> ref, DType out_dtype,
                                    const Fp8BlockSumModel& block_sums = kFp8BlockSumFp32);
std::vector<double> gemm_fp8_grouped_bounds(const GemmFp8GroupedCall& oracle_call, std::span<const double> ref,
                                            DType out_dtype, const Fp8BlockSumModel& block_sums = kFp8BlockSumFp32);
}  // namespace contract

}  // namespace hal::conformance
