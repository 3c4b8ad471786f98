#pragma once
// The fp64 gemm: the oracle of the conformance suite, used when C is f64 (or
// the inputs are). Inputs of any float dtype are widened exactly to double,
// products are summed in ascending k in double, the epilogue runs in double and
// the result is rounded once to C's dtype. Simple rather than fast; parallel
// over (batch, row block) and bitwise reproducible for any thread count.
// beta == 0: C is not read (BLAS convention).
#include "cpu_ref/gemm_operands.h"

namespace hal::cpu_ref {

void gemm_f64(const GemmProblem& p);

}  // namespace hal::cpu_ref
