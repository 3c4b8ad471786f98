#pragma once
// The oracle: the CPU backend run in fp64 on exactly the device's inputs.
//
// compute_reference() takes a call whose tensors live in CPU memory, in the
// dtypes the device under test sees. Floating inputs are widened exactly to
// f64 (same strides and offsets), the op runs on the CPU device with f64
// outputs, and the contract's per-element bounds are computed from those f64
// inputs and the result. Two ops are not compared with fp64:
//   cast:        the contract fixes the fp32 scale multiply, so the reference
//                is RN_out(fp32(x * scale)) computed on the host; exact;
//   fill_random: bits are defined per dtype (Philox), so the reference is the
//                CPU backend's output in the same dtype; exact.
#include <vector>

#include "conformance/fp8_accumulator.h"
#include "hal/op.h"

namespace hal::conformance {

// The reference of one output of a call.
struct Reference {
  std::vector<double> values;  // logical (row-major) order of the output
  std::vector<double> bounds;  // per element; 0 = must be exact
  bool zero_sign = false;      // the sign of zero must match too
  DType out_dtype = DType::f32;
};

// One reference per output of the call, in hal::for_each_tensor's order
// (an accumulated tensor, such as gemm's C with beta != 0, is an output whose
// initial contents the oracle reads as well).
// `fp8_block_sums`: the precision of the device under test's fp8 GEMM block
// sums (fp8_accumulator.h), which only gemm_fp8[_grouped]'s bounds read.
std::vector<Reference> compute_references(const OpCall& host_call,
                                          const Fp8BlockSumModel& fp8_block_sums = kFp8BlockSumFp32);
// The reference of a call with one output.
Reference compute_reference(const OpCall& host_call);

// The output tensors of a call (written or accumulated), in order.
std::vector<Tensor> outputs_of(const OpCall& call);
// The first output (a call with one output: gemm's C, otherwise y).
Tensor& output_of(OpCall& call);
const Tensor& output_of(const OpCall& call);

// Calls f(Tensor&) for every tensor the op reads: its inputs, and accumulated
// outputs (gemm's C only when beta != 0).
template <class F>
void for_each_input(OpCall& call, F&& f) {
  for_each_tensor(call, [&](std::string_view, Tensor& t, TensorRole role) {
    if (role != TensorRole::output) f(t);
  });
}

}  // namespace hal::conformance
