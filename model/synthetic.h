#pragma once
// A random Llama checkpoint of a chosen size, for benchmarks: config.json and
// one model.safetensors of bf16 weights (Philox uniform values, scaled like
// an initialised network), written tensor by tensor (never held whole in
// memory). Hugging Face names and layout, so it loads like a real one.
#include <cstdint>
#include <string>

namespace hal::model {

struct SyntheticSpec {
  std::int64_t layers = 2, hidden = 1024, intermediate = 2816, heads = 16, kv_heads = 4, vocab = 8192;
  std::uint64_t seed = 1;
};

// About `bytes` of bf16 weights: hidden 1024, grouped heads, as many layers as fit.
SyntheticSpec synthetic_spec_for_bytes(std::uint64_t bytes);
void write_synthetic_checkpoint(const std::string& dir, const SyntheticSpec& spec);

}  // namespace hal::model
