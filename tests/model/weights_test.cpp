// The weights' device layout: fused projections hold each checkpoint tensor,
// exactly, at its columns; the bytes a decode step reads.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "hal/registry.h"
#include "model/model.h"
#include "tests/model/model_fixture.h"

namespace hal::model::testing {
namespace {

// Every element of the checkpoint tensor `name` ([out, in], or a bias [out])
// at columns [column0, column0 + out) of the stored linear (the CPU stores
// [in, columns]; a bias is [columns]); f16 -> f32 is exact.
std::int64_t mismatches(Stream& s, const Checkpoint& c, const std::string& name, const Tensor& stored,
                        std::int64_t column0) {
  const CheckpointTensor& t = c.tensor(name);
  const bool bias = t.entry->shape.rank() == 1;
  const std::int64_t out = t.entry->shape[0], in = bias ? 1 : t.entry->shape[1];
  const std::int64_t cols = stored.shape[stored.rank() - 1];
  EXPECT_EQ(stored.shape.rank(), bias ? 1 : 2) << name;
  if (!bias) EXPECT_EQ(stored.shape[0], in) << name;
  EXPECT_LE(column0 + out, cols) << name;
  std::vector<std::byte> got(static_cast<std::size_t>(stored.numel()) * dtype_size(stored.dtype));
  s.download(got.data(), stored);
  s.synchronize();
  std::int64_t wrong = 0;
  for (std::int64_t r = 0; r < out; ++r)
    for (std::int64_t k = 0; k < in; ++k)
      wrong += load_element(got.data(), stored.dtype, k * cols + column0 + r) !=
               load_element(t.bytes().data(), t.entry->dtype, r * in + k);
  return wrong;
}

// Qwen2 (f16, q/k/v biases), run in f32 on the CPU: one fused q/k/v and one
// gate/up weight, each part and bias where the session's column views read it.
TEST_F(ModelTest, FusedProjectionsHoldEachTensorAtItsColumns) {
  const Checkpoint c(dir("qwen2_bias_f16"));
  Model m(c, hal::device("cpu"), DType::f32);
  const ModelConfig& k = c.config();
  const std::int64_t q = k.num_heads * k.head_dim, kv = k.num_kv_heads * k.head_dim, F = k.intermediate_size;
  ASSERT_TRUE(k.qkv_bias);
  for (std::int64_t l = 0; l < k.num_layers; ++l) {
    const LayerWeights& lw = m.weights().layers[static_cast<std::size_t>(l)];
    ASSERT_EQ(lw.qkv.linears.size(), 1u);
    ASSERT_EQ(lw.gate_up.linears.size(), 1u);
    EXPECT_EQ(lw.qkv.columns, q + 2 * kv);
    EXPECT_EQ(lw.gate_up.columns, 2 * F);
    const Linear& qkv = lw.qkv.linears[0];
    const Linear& gate_up = lw.gate_up.linears[0];
    EXPECT_FALSE(qkv.trans_b);  // [in, out] on the CPU
    EXPECT_EQ(qkv.weight.shape, (Shape{k.hidden_size, q + 2 * kv}));
    ASSERT_TRUE(qkv.bias.has_value());
    EXPECT_FALSE(gate_up.bias.has_value());
    const std::string p = "model.layers." + std::to_string(l) + ".";
    Stream& s = m.stream();
    EXPECT_EQ(mismatches(s, c, p + "self_attn.q_proj.weight", qkv.weight, 0), 0);
    EXPECT_EQ(mismatches(s, c, p + "self_attn.k_proj.weight", qkv.weight, q), 0);
    EXPECT_EQ(mismatches(s, c, p + "self_attn.v_proj.weight", qkv.weight, q + kv), 0);
    EXPECT_EQ(mismatches(s, c, p + "self_attn.q_proj.bias", *qkv.bias, 0), 0);
    EXPECT_EQ(mismatches(s, c, p + "self_attn.k_proj.bias", *qkv.bias, q), 0);
    EXPECT_EQ(mismatches(s, c, p + "self_attn.v_proj.bias", *qkv.bias, q + kv), 0);
    EXPECT_EQ(mismatches(s, c, p + "mlp.gate_proj.weight", gate_up.weight, 0), 0);
    EXPECT_EQ(mismatches(s, c, p + "mlp.up_proj.weight", gate_up.weight, F), 0);
  }
}

std::vector<std::byte> bytes_of(Stream& s, const Tensor& t) {
  std::vector<std::byte> out(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
  s.download(out.data(), t);
  s.synchronize();
  return out;
}

// Fusing changes which GEMM computes a column, not how: on the CPU every
// output column is the same dot product in the same order (K is never
// split), so the fused model's logits have the bits of one GEMM per part,
// prefill (several sequences) and decode.
TEST_F(ModelTest, FusedProjectionsGiveTheBitsOfOneGemmPerPart) {
  Device& cpu = hal::device("cpu");
  for (const auto& [variant, dtype] : {std::pair{"qwen2_bias_f16", DType::f32}, std::pair{"llama3_tied_bf16", DType::bf16}}) {
    SCOPED_TRACE(variant);
    const Checkpoint c(dir(variant));
    Model fused(c, cpu, dtype), apart(c, cpu, dtype, LoadOptions{.fuse_projections = false});
    ASSERT_EQ(fused.weights().layers[0].qkv.linears.size(), 1u);
    ASSERT_EQ(apart.weights().layers[0].qkv.linears.size(), 3u);
    ASSERT_EQ(apart.weights().layers[0].gate_up.linears.size(), 2u);
    Session a(fused, 2, 16), b(apart, 2, 16);
    EXPECT_EQ(bytes_of(fused.stream(), a.step(kSequences)), bytes_of(apart.stream(), b.step(kSequences)));
    for (std::int32_t t : {5, 77}) {
      const std::vector<std::vector<std::int32_t>> next{{t}, {t + 1}};
      EXPECT_EQ(bytes_of(fused.stream(), a.step(next)), bytes_of(apart.stream(), b.step(next))) << "token " << t;
    }
  }
}

// A decode step reads every weight once but gathers one row of an untied
// embedding table; a tied one is lm_head's weight, read whole.
TEST_F(ModelTest, DecodeBytesLeaveOutAllButOneRowOfAnUntiedEmbedding) {
  Device& cpu = hal::device("cpu");
  const Checkpoint untied(dir("llama_untied_f32"));
  ASSERT_FALSE(untied.config().tie_word_embeddings);
  Model a(untied, cpu, DType::f32);
  const ModelConfig& u = untied.config();
  EXPECT_EQ(a.weights().decode_bytes,
            a.weights().device_bytes - static_cast<std::uint64_t>((u.vocab_size - 1) * u.hidden_size * 4));
  const Checkpoint tied(dir("llama3_tied_bf16"));
  ASSERT_TRUE(tied.config().tie_word_embeddings);
  Model b(tied, cpu, DType::bf16);
  EXPECT_EQ(b.weights().decode_bytes, b.weights().device_bytes);
}

}  // namespace
}  // namespace hal::model::testing
