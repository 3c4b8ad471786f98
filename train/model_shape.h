#pragma once
// The sizes of a Llama-style decoder-only model for training: token
// embedding, `layers` decoder layers (RMSNorm, Q/K/V projections, RoPE,
// causal grouped-query attention, output projection, residual, RMSNorm,
// SwiGLU MLP, residual), a final RMSNorm and an untied vocabulary projection.
// A batch is `batch` sequences of `seq` tokens, computed as batch * seq rows.
#include <cstdint>

namespace hal::train {

struct ModelShape {
  std::int64_t layers = 2;
  std::int64_t hidden = 128;
  std::int64_t heads = 4;
  std::int64_t kv_heads = 2;
  std::int64_t head_dim = 32;
  std::int64_t ffn = 384;
  std::int64_t vocab = 256;
  std::int64_t batch = 8;
  std::int64_t seq = 64;
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;

  std::int64_t rows() const { return batch * seq; }
  std::int64_t q_width() const { return heads * head_dim; }
  std::int64_t kv_width() const { return kv_heads * head_dim; }
};

}  // namespace hal::train
