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
// at output columns [column0, column0 + out) of the stored linear (its
// weight wherever weight_index puts (k, j): [in, columns] or column-blocked;
// or its bias [columns]); f16 -> f32 is exact.
std::int64_t mismatches(Stream& s, const Checkpoint& c, const std::string& name, const Linear& l,
                        std::int64_t column0) {
  const CheckpointTensor& t = c.tensor(name);
  const bool bias = t.entry->shape.rank() == 1;
  const std::int64_t out = t.entry->shape[0], in = bias ? 1 : t.entry->shape[1];
  const Tensor& stored = bias ? *l.bias : l.weight;
  EXPECT_LE(column0 + out, output_columns(l)) << name;
  std::vector<std::byte> got(static_cast<std::size_t>(stored.numel()) * dtype_size(stored.dtype));
  s.download(got.data(), stored);
  s.synchronize();
  std::int64_t wrong = 0;
  for (std::int64_t r = 0; r < out; ++r)
    for (std::int64_t k = 0; k < in; ++k) {
      const std::int64_t at = bias ? column0 + r : weight_index(l, k, column0 + r) - stored.offset;
      wrong += load_element(got.data(), stored.dtype, at) != load_element(t.bytes().data(), t.entry->dtype, r * in + k);
    }
  return wrong;
}

// Qwen2 (f16, q/k/v biases), run in f32 on the CPU: one fused q/k/v and one
// gate/up weight, each part and bias where the session's column views read it.
TEST_F(ModelTest, FusedProjectionsHoldEachTensorAtItsColumns) {
  const Checkpoint c(dir("qwen2_bias_f16"));
  const ModelConfig& k = c.config();
  const std::int64_t q = k.num_heads * k.head_dim, kv = k.num_kv_heads * k.head_dim, F = k.intermediate_size;
  ASSERT_TRUE(k.qkv_bias);
  // Row-major [in, out], and two column blocks (the bias-free gate/up, o and
  // down blocked; q/k/v, with its biases, not).
  for (const int blocks : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << "column_blocks " << blocks);
    Model m(c, hal::device("cpu"), DType::f32, LoadOptions{.column_blocks = blocks});
    for (std::int64_t l = 0; l < k.num_layers; ++l) {
      const LayerWeights& lw = m.weights().layers[static_cast<std::size_t>(l)];
      ASSERT_EQ(lw.qkv.linears.size(), 1u);
      ASSERT_EQ(lw.gate_up.linears.size(), 1u);
      EXPECT_EQ(lw.qkv.columns, q + 2 * kv);
      EXPECT_EQ(lw.gate_up.columns, 2 * F);
      const Linear& qkv = lw.qkv.linears[0];
      const Linear& gate_up = lw.gate_up.linears[0];
      EXPECT_FALSE(qkv.trans_b);  // [in, out] on the CPU
      EXPECT_EQ(qkv.column_blocks, 1);
      EXPECT_EQ(qkv.weight.shape, (Shape{k.hidden_size, q + 2 * kv}));
      EXPECT_EQ(gate_up.column_blocks, blocks);
      EXPECT_EQ(lw.down.column_blocks, blocks);
      const Shape want = blocks == 1 ? Shape{k.hidden_size, 2 * F} : Shape{2, k.hidden_size, F};
      EXPECT_EQ(gate_up.weight.shape, want);
      EXPECT_EQ(output_columns(gate_up), 2 * F);
      ASSERT_TRUE(qkv.bias.has_value());
      EXPECT_FALSE(gate_up.bias.has_value());
      const std::string p = "model.layers." + std::to_string(l) + ".";
      Stream& s = m.stream();
      EXPECT_EQ(mismatches(s, c, p + "self_attn.q_proj.weight", qkv, 0), 0);
      EXPECT_EQ(mismatches(s, c, p + "self_attn.k_proj.weight", qkv, q), 0);
      EXPECT_EQ(mismatches(s, c, p + "self_attn.v_proj.weight", qkv, q + kv), 0);
      EXPECT_EQ(mismatches(s, c, p + "self_attn.q_proj.bias", qkv, 0), 0);
      EXPECT_EQ(mismatches(s, c, p + "self_attn.k_proj.bias", qkv, q), 0);
      EXPECT_EQ(mismatches(s, c, p + "self_attn.v_proj.bias", qkv, q + kv), 0);
      EXPECT_EQ(mismatches(s, c, p + "mlp.gate_proj.weight", gate_up, 0), 0);
      EXPECT_EQ(mismatches(s, c, p + "mlp.up_proj.weight", gate_up, F), 0);
      EXPECT_EQ(mismatches(s, c, p + "mlp.down_proj.weight", lw.down, 0), 0);
      EXPECT_EQ(mismatches(s, c, p + "self_attn.o_proj.weight", lw.o, 0), 0);
    }
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

// Column blocks change which task computes a column, not how: the logits of
// two and three blocks (a part straddling two blocks: llama3's q/k/v of
// 96 + 24 + 24 columns in blocks of 48) have the bits of [in, out] weights,
// prefill (several sequences) and decode.
TEST_F(ModelTest, ColumnBlockedWeightsGiveTheBitsOfRowMajorOnes) {
  Device& cpu = hal::device("cpu");
  for (const auto& [variant, dtype] : {std::pair{"mistral_window_bf16", DType::bf16}, std::pair{"llama3_tied_bf16", DType::bf16},
                                       std::pair{"llama_untied_f32", DType::f32}}) {
    const Checkpoint c(dir(variant));
    Model row_major(c, cpu, dtype, LoadOptions{.column_blocks = 1});
    for (const int blocks : {2, 3}) {
      SCOPED_TRACE(::testing::Message() << variant << " column_blocks " << blocks);
      Model blocked(c, cpu, dtype, LoadOptions{.column_blocks = blocks});
      int blocked_linears = 0;
      for (const LayerWeights& lw : blocked.weights().layers)
        for (const Linear* l : {&lw.qkv.linears[0], &lw.o, &lw.gate_up.linears[0], &lw.down})
          blocked_linears += l->column_blocks == blocks;
      EXPECT_GT(blocked_linears, 0);
      Session a(row_major, 2, 16), b(blocked, 2, 16);
      EXPECT_EQ(bytes_of(row_major.stream(), a.step(kSequences)), bytes_of(blocked.stream(), b.step(kSequences)));
      for (std::int32_t t : {5, 77}) {
        const std::vector<std::vector<std::int32_t>> next{{t}, {t + 1}};
        EXPECT_EQ(bytes_of(row_major.stream(), a.step(next)), bytes_of(blocked.stream(), b.step(next))) << "token " << t;
      }
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
