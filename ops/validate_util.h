#pragma once
// Building blocks of op validation (ops/validate*.cpp), private to ops/.
//
// Every check throws hal::Error(invalid_argument) through throw_invalid_argument
// with the op name, the argument name as spelled in the API ("a", "bias", "q"),
// what was expected and what was given. Checks only read: validation has no
// side effects, so a rejected call leaves every buffer untouched.
#include <initializer_list>
#include <string_view>
#include <vector>

#include "hal/op.h"
#include "hal/tensor.h"

namespace hal::ops::detail {

// A tensor together with its API name, for messages.
struct Named {
  std::string_view name;
  const Tensor* tensor;
};

enum class Role { input, output };

// Per-tensor checks: device set, strides of the right rank and non-negative,
// offset non-negative, numel and byte extent free of int64 overflow, data
// non-null when non-empty and aligned to the element size. Outputs must also
// map distinct indices to distinct elements (no zero stride on a dim of size
// > 1, no overlapping strides).
void check_tensor(std::string_view op, std::string_view arg, const Tensor& t, Role role);

// All tensors on one device.
void check_same_device(std::string_view op, std::initializer_list<Named> tensors);

// An output's bytes must not overlap any input's bytes (simple range test on
// [first byte, end byte) when both live on the same device).
void check_no_overlap(std::string_view op, Named output, std::initializer_list<Named> inputs);

// dtype in {f32, f16, bf16, f64}.
void check_compute_dtype(std::string_view op, std::string_view arg, const Tensor& t);
void check_dtype_equals(std::string_view op, std::string_view arg, const Tensor& t, DType want,
                        std::string_view why);
void check_rank(std::string_view op, std::string_view arg, const Tensor& t, int min_rank, int max_rank);
void check_shape_equals(std::string_view op, std::string_view arg, const Tensor& t, const Shape& want,
                        std::string_view why);
// The output y of a computing op (binary, unary, swiglu, reduce, softmax,
// norm, rope, attention) has the dtype of its reference input `ref`. This is
// the one place that states that policy; allowing a different float output
// dtype (e.g. f32 in, bf16 out) would be a change here only.
void check_output_dtype(std::string_view op, const Tensor& y, std::string_view ref_name, const Tensor& ref);
void check_finite(std::string_view op, std::string_view arg, float value);

// Per-family validation; each returns the call with its defaults resolved.
GemmCall validate_gemm(const GemmCall& c);
BinaryCall validate_binary(const BinaryCall& c);
UnaryCall validate_unary(const UnaryCall& c);
SwigluCall validate_swiglu(const SwigluCall& c);
CastCall validate_cast(const CastCall& c);
CopyCall validate_copy(const CopyCall& c);
FillRandomCall validate_fill_random(const FillRandomCall& c);
ReduceCall validate_reduce(const ReduceCall& c);
SoftmaxCall validate_softmax(const SoftmaxCall& c);
NormCall validate_norm(const NormCall& c);
RopeCall validate_rope(const RopeCall& c);
// The options and geometry rope and rope_backward share (positions' shape, an
// even head_dim, rotary_dim, theta, style, inv_freq's dtype and shape); `x` is
// the rotated input ([batch, seq, heads, head_dim], rank checked). Returns
// rotary_dim with 0 resolved to head_dim.
int check_rope_options(std::string_view op, std::string_view x_name, const Tensor& x, const Tensor& positions,
                       int rotary_dim, float theta, RopeStyle style, const std::optional<Tensor>& inv_freq);
EmbeddingCall validate_embedding(const EmbeddingCall& c);
AttentionCall validate_attention(const AttentionCall& c);
// The tensors attention and attention_backward share: q's compute dtype, k
// and v of q's dtype, the rank-4 shapes that agree (batch, head_dim, sk, a
// kv head count dividing hq). Returns the scale resolved (0 -> 1/sqrt(d)).
float check_attention_inputs(std::string_view op, const Tensor& q, const Tensor& k, const Tensor& v, float scale);
// The row log-sum-exp's dtype (f32; f64 with f64 q) and shape [b, sq, hq].
void check_attention_lse(std::string_view op, const Tensor& lse, const Tensor& q);
QuantizeFp8Call validate_quantize_fp8(const QuantizeFp8Call& c);
DequantizeFp8Call validate_dequantize_fp8(const DequantizeFp8Call& c);
GemmFp8Call validate_gemm_fp8(const GemmFp8Call& c);
GemmFp8GroupedCall validate_gemm_fp8_grouped(const GemmFp8GroupedCall& c);

}  // namespace hal::ops::detail
