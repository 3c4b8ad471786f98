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

#include "hal/op.h"

namespace hal::conformance {

struct Reference {
  std::vector<double> values;  // logical (row-major) order of the output
  std::vector<double> bounds;  // per element; 0 = must be exact
  bool zero_sign = false;      // the sign of zero must match too
  DType out_dtype = DType::f32;
};

Reference compute_reference(const OpCall& host_call);

// The output tensor of any call (gemm's C, otherwise y).
const Tensor& output_of(const OpCall& call);
Tensor& output_of(OpCall& call);

// Calls f(Tensor&) for every input tensor of the call (gemm's C only when
// beta != 0, since only then is it read).
template <class F>
void for_each_input(OpCall& call, F&& f) {
  std::visit(
      [&](auto& c) {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, GemmCall>) {
          f(c.a), f(c.b);
          if (c.bias) f(*c.bias);
        } else if constexpr (std::is_same_v<C, BinaryCall>) {
          f(c.a), f(c.b);
        } else if constexpr (std::is_same_v<C, SwigluCall>) {
          f(c.gate), f(c.up);
        } else if constexpr (std::is_same_v<C, NormCall>) {
          f(c.x), f(c.weight);
          if (c.bias) f(*c.bias);
        } else if constexpr (std::is_same_v<C, RopeCall>) {
          f(c.x), f(c.positions);
        } else if constexpr (std::is_same_v<C, EmbeddingCall>) {
          f(c.table), f(c.ids);
        } else if constexpr (std::is_same_v<C, AttentionCall>) {
          f(c.q), f(c.k), f(c.v);
        } else if constexpr (std::is_same_v<C, FillRandomCall>) {
        } else {
          f(c.x);
        }
      },
      call);
}

}  // namespace hal::conformance
