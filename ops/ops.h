#pragma once
// hal::ops: the backend-neutral operator interface.
//
// Each function validates every argument (shapes, dtypes, strides, devices,
// options) before anything runs, then queues the op on `stream`'s device.
// Misuse throws hal::Error(invalid_argument) naming the op, the argument, what
// was expected and what was given; a device that cannot run a valid call
// throws hal::Error(unsupported). No output is written when an error is thrown.
// All tensors must live on the stream's device. See hal/op.h for semantics.
#include <cstdint>
#include <optional>

#include "hal/op.h"
#include "hal/stream.h"

namespace hal::ops {

// Validation alone (what every function below does first); throws on misuse.
// Returns the call with its defaults resolved: axes made non-negative,
// rotary_dim 0 -> head_dim, attention scale 0 -> 1/sqrt(head_dim).
OpCall validate(const OpCall& call);
// Validates, then asks the device. Never throws for an unsupported call.
Support supports(const Device& device, const OpCall& call);
// Validates and runs any op call on `stream` (used by the CLI and the suite).
void run(Stream& stream, const OpCall& call);

struct GemmOptions {
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 0.0f;
  std::optional<Tensor> bias;
  Activation activation = Activation::none;
};
void gemm(Stream& s, const Tensor& a, const Tensor& b, const Tensor& c, const GemmOptions& options = {});

void binary(Stream& s, BinaryKind kind, const Tensor& a, const Tensor& b, const Tensor& y);
void add(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y);
void sub(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y);
void mul(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y);
void div(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y);
void maximum(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y);
void minimum(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y);

void unary(Stream& s, UnaryKind kind, const Tensor& x, const Tensor& y);
void neg(Stream& s, const Tensor& x, const Tensor& y);
void abs(Stream& s, const Tensor& x, const Tensor& y);
void exp(Stream& s, const Tensor& x, const Tensor& y);
void log(Stream& s, const Tensor& x, const Tensor& y);
void sqrt(Stream& s, const Tensor& x, const Tensor& y);
void rsqrt(Stream& s, const Tensor& x, const Tensor& y);
void tanh(Stream& s, const Tensor& x, const Tensor& y);
void sigmoid(Stream& s, const Tensor& x, const Tensor& y);
void relu(Stream& s, const Tensor& x, const Tensor& y);
void gelu(Stream& s, const Tensor& x, const Tensor& y);
void gelu_tanh(Stream& s, const Tensor& x, const Tensor& y);
void silu(Stream& s, const Tensor& x, const Tensor& y);
void swiglu(Stream& s, const Tensor& gate, const Tensor& up, const Tensor& y);

struct ReduceOptions {
  int axis = -1;
  bool keepdim = false;
};
void reduce(Stream& s, ReduceKind kind, const Tensor& x, const Tensor& y, const ReduceOptions& options = {});
void sum(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& options = {});
void mean(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& options = {});
void max(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& options = {});
void min(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& options = {});
void argmax(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& options = {});

struct SoftmaxOptions {
  int axis = -1;  // only the last axis is supported; anything else is rejected
  float scale = 1.0f;
  bool causal = false;
};
void softmax(Stream& s, const Tensor& x, const Tensor& y, const SoftmaxOptions& options = {});
void log_softmax(Stream& s, const Tensor& x, const Tensor& y, const SoftmaxOptions& options = {});

struct NormOptions {
  float eps = 1e-5f;
};
void layernorm(Stream& s, const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
               const Tensor& y, const NormOptions& options = {});
void rmsnorm(Stream& s, const Tensor& x, const Tensor& weight, const Tensor& y,
             const NormOptions& options = {});

struct RopeOptions {
  float theta = 10000.0f;
  RopeStyle style = RopeStyle::neox;
  int rotary_dim = 0;  // 0: the whole head_dim
  std::optional<Tensor> inv_freq{};  // per-pair frequencies [rotary_dim / 2] (see RopeCall)
};
void rope(Stream& s, const Tensor& x, const Tensor& positions, const Tensor& y, const RopeOptions& options = {});

struct CastOptions {
  float scale = 1.0f;
};
void cast(Stream& s, const Tensor& x, const Tensor& y, const CastOptions& options = {});

void embedding(Stream& s, const Tensor& table, const Tensor& ids, const Tensor& y);

struct AttentionOptions {
  float scale = 0.0f;  // 0: 1/sqrt(head_dim)
  bool causal = false;
};
void attention(Stream& s, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& y,
               const AttentionOptions& options = {});

void copy(Stream& s, const Tensor& x, const Tensor& y);

struct RandomOptions {
  std::uint64_t seed = 0;
  RandomDistribution distribution = RandomDistribution::uniform;
  float a = 0.0f;  // uniform: low; normal: mean
  float b = 1.0f;  // uniform: high; normal: standard deviation
};
void fill_random(Stream& s, const Tensor& y, const RandomOptions& options = {});

// Scaled FP8 (hal/op_fp8.h): block quantisation and the DeepSeek-style GEMMs.
// The shape of the scales of an [m, k] tensor quantised with `block`.
Shape fp8_scales_shape(Fp8Block block, std::int64_t m, std::int64_t k);
struct QuantizeFp8Options {
  Fp8Block block = Fp8Block::row_1x128;
  bool pow2_scales = false;  // round each scale up to a power of two (UE8M0)
};
void quantize_fp8(Stream& s, const Tensor& x, const Tensor& y, const Tensor& scales,
                  const QuantizeFp8Options& options = {});
struct DequantizeFp8Options {
  Fp8Block block = Fp8Block::row_1x128;
};
void dequantize_fp8(Stream& s, const Tensor& y, const Tensor& scales, const Tensor& x,
                    const DequantizeFp8Options& options = {});
void gemm_fp8(Stream& s, const Tensor& a, const Tensor& a_scales, const Tensor& b, const Tensor& b_scales,
              const Tensor& c, const Fp8Epilogue& epilogue = {});
void gemm_fp8_grouped(Stream& s, const Tensor& a, const Tensor& a_scales, const Tensor& b, const Tensor& b_scales,
                      const Tensor& offsets, const Tensor& c, const Fp8Epilogue& epilogue = {});

}  // namespace hal::ops

// The training ops: backward passes, the fused loss, the optimizer step.
#include "ops/training.h"
