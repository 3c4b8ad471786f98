// Bad checkpoints and configs: each is refused by Checkpoint's constructor
// (which allocates no device memory) with an error naming the file and the
// tensor or field. Config fields that cannot change the computation pass.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hal/io/safetensors.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "hal/registry.h"
#include "tests/model/model_fixture.h"

namespace hal::model::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Replaces `from` by `to` in config.json (which must contain it).
void edit_config(const std::string& dir, const std::string& from, const std::string& to) {
  std::string c = read_file(dir + "/config.json");
  const std::size_t at = c.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  c.replace(at, from.size(), to);
  write_file(dir + "/config.json", c);
}

std::string load_error(const std::string& dir) {
  return error_of([&] { Checkpoint c(dir); });
}

void expect_contains(const std::string& text, std::initializer_list<std::string> parts) {
  for (const std::string& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

// Rewrites model.safetensors through `edit` on its tensors.
void edit_tensors(const std::string& dir, const std::function<void(std::vector<io::NamedTensor>&)>& edit) {
  io::SafetensorsFile f = io::read_safetensors(dir + "/model.safetensors");
  edit(f.tensors);
  io::write_safetensors(dir + "/model.safetensors", f);
}

TEST_F(ModelTest, GoodCheckpointsLoadWithTheirSizes) {
  const Checkpoint c(dir("llama3_tied_bf16"));
  EXPECT_EQ(c.config().architecture_name, "LlamaForCausalLM");
  EXPECT_EQ(c.config().head_dim, 24);  // given, not hidden / heads = 16
  EXPECT_TRUE(c.config().rope_scaling.has_value());
  EXPECT_TRUE(c.config().tie_word_embeddings);
  EXPECT_EQ(c.files().size(), 2u);
  EXPECT_EQ(c.stored_dtype(), DType::bf16);
  const Checkpoint q(dir("qwen2_bias_f16"));
  EXPECT_TRUE(q.config().qkv_bias);
  EXPECT_FALSE(q.config().o_bias);
  EXPECT_FALSE(q.config().sliding_window.has_value());  // use_sliding_window false
  const Checkpoint m(dir("mistral_window_bf16"));
  EXPECT_EQ(m.config().sliding_window.value_or(0), 4096);
  // Every parameter counted once: a layer-free sum from the config.
  const Checkpoint plain(dir("llama_untied_f32"));
  const ModelConfig& k = plain.config();
  const std::int64_t hd = k.head_dim, per_layer = 2 * k.hidden_size + k.hidden_size * k.num_heads * hd * 2 +
                                                  k.hidden_size * k.num_kv_heads * hd * 2 + 3 * k.hidden_size * k.intermediate_size;
  EXPECT_EQ(plain.parameter_count(),
            2 * k.vocab_size * k.hidden_size + k.hidden_size + k.num_layers * per_layer);
}

TEST_F(ModelTest, UntrustedFilesAreRefusedNamingTheFile) {
  const std::string base = "llama_untied_f32";
  {  // truncated: the data ends before the last tensor's bytes
    const std::string d = copy_of(base, "bad_truncated");
    const std::string f = read_file(d + "/model.safetensors");
    write_file(d + "/model.safetensors", f.substr(0, f.size() - 100));
    expect_contains(load_error(d), {d + "/model.safetensors"});
  }
  {  // a header length larger than the file
    const std::string d = copy_of(base, "bad_header_length");
    std::string f = read_file(d + "/model.safetensors");
    const std::uint64_t lie = f.size() + 1000;
    std::memcpy(f.data(), &lie, 8);
    write_file(d + "/model.safetensors", f);
    expect_contains(load_error(d), {d + "/model.safetensors", "header"});
  }
  {  // overlapping data offsets: the second tensor's range moved onto the first's
    const std::string d = copy_of(base, "bad_overlap");
    std::string f = read_file(d + "/model.safetensors");
    std::uint64_t hlen = 0;
    std::memcpy(&hlen, f.data(), 8);
    std::string header = f.substr(8, hlen);
    const std::string key = "\"model.layers.0.input_layernorm.weight\"";
    const std::size_t at = header.find(key);
    ASSERT_NE(at, std::string::npos);
    const std::size_t off = header.find("\"data_offsets\"", at), open = header.find('[', off), close = header.find(']', off);
    const std::string range = "[0, 192]";  // 48 f32 = 192 bytes, on top of the embedding
    header.replace(open, close - open + 1, range + std::string(close - open + 1 - std::min(close - open + 1, range.size()), ' '));
    ASSERT_EQ(header.size(), hlen);
    write_file(d + "/model.safetensors", f.substr(0, 8) + header + f.substr(8 + hlen));
    expect_contains(load_error(d), {d + "/model.safetensors", "model.layers.0.input_layernorm.weight"});
  }
  {  // a missing tensor
    const std::string d = copy_of(base, "bad_missing");
    edit_tensors(d, [](auto& ts) {
      std::erase_if(ts, [](const io::NamedTensor& t) { return t.name == "model.layers.1.mlp.up_proj.weight"; });
    });
    expect_contains(load_error(d), {d + "/model.safetensors", "model.layers.1.mlp.up_proj.weight", "missing"});
  }
  {  // a shape that disagrees with the config
    const std::string d = copy_of(base, "bad_shape");
    edit_config(d, "\"intermediate_size\": 80", "\"intermediate_size\": 81");
    expect_contains(load_error(d), {d + "/model.safetensors", "model.layers.0.mlp.gate_proj.weight", "[81, 48]"});
  }
  {  // an unsupported dtype (f64 weights), and FP8 (the gemm_fp8 seam)
    for (const auto& [dt, want] : {std::pair{DType::f64, std::string("F64")}, std::pair{DType::f8e4m3, std::string("gemm_fp8")}}) {
      const std::string d = copy_of(base, "bad_dtype_" + want);
      edit_tensors(d, [dt](auto& ts) {
        for (io::NamedTensor& t : ts)
          if (t.name == "model.norm.weight") {
            t.dtype = dt;
            t.bytes.resize(static_cast<std::size_t>(checked_numel(t.shape)) * dtype_size(dt));
          }
      });
      expect_contains(load_error(d), {d + "/model.safetensors", "model.norm.weight", want});
    }
  }
  {  // a bias where Llama (attention_bias false) has none
    const std::string d = copy_of(base, "bad_extra_bias");
    edit_tensors(d, [](auto& ts) {
      ts.push_back({"model.layers.0.self_attn.o_proj.bias", DType::f32, Shape{48}, std::vector<std::uint8_t>(192)});
    });
    expect_contains(load_error(d), {d + "/model.safetensors", "model.layers.0.self_attn.o_proj.bias", "no place"});
  }
  {  // Qwen2 without its q/k/v biases
    const std::string d = copy_of("qwen2_bias_f16", "bad_qwen_no_bias");
    edit_tensors(d, [](auto& ts) {
      std::erase_if(ts, [](const io::NamedTensor& t) { return t.name == "model.layers.1.self_attn.k_proj.bias"; });
    });
    expect_contains(load_error(d), {"model.layers.1.self_attn.k_proj.bias", "missing"});
  }
  {  // shards: the index names a file that is absent, or a shard without the tensor
    const std::string d = copy_of("llama3_tied_bf16", "bad_shard_missing");
    std::filesystem::remove(d + "/model-00002-of-00002.safetensors");
    expect_contains(load_error(d), {"model.safetensors.index.json", "model-00002-of-00002.safetensors", "does not exist"});
    const std::string e = copy_of("llama3_tied_bf16", "bad_shard_wrong");
    std::string index = read_file(e + "/model.safetensors.index.json");
    const std::string key = "\"model.norm.weight\": \"model-00002-of-00002.safetensors\"";
    const std::size_t at = index.find(key);
    ASSERT_NE(at, std::string::npos);
    index.replace(at, key.size(), "\"model.norm.weight\": \"model-00001-of-00002.safetensors\"");
    write_file(e + "/model.safetensors.index.json", index);
    expect_contains(load_error(e), {e + "/model-00001-of-00002.safetensors", "model.norm.weight", "missing"});
    const std::string f = copy_of("llama3_tied_bf16", "bad_shard_path");
    index = read_file(f + "/model.safetensors.index.json");
    index.replace(index.find("model-00001-of-00002"), 20, "../../../../etc/pass");
    write_file(f + "/model.safetensors.index.json", index);
    expect_contains(load_error(f), {"not a file in the checkpoint folder"});
  }
  {  // neither file
    const std::string d = copy_of(base, "bad_no_weights");
    std::filesystem::remove(d + "/model.safetensors");
    expect_contains(load_error(d), {d, "neither model.safetensors nor"});
  }
}

TEST_F(ModelTest, ComputationChangingSettingsAreRefusedByName) {
  const std::string base = "llama_untied_f32";
  struct Case {
    std::string from, to, expect;
  };
  const Case cases[] = {
      {"\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"", "hidden_act 'gelu'"},
      {"\"rope_theta\": 10000.0", "\"rope_theta\": 10000.0, \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}",
       "rope_scaling type 'linear'"},
      {"\"rope_theta\": 10000.0", "\"rope_theta\": 10000.0, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}",
       "rope_scaling type 'yarn'"},
      {"\"rope_theta\": 10000.0",
       "\"rope_theta\": 10000.0, \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0, "
       "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 64, \"beta_fast\": 32}",
       "rope_scaling.beta_fast"},
      {"\"rope_theta\": 10000.0", "\"rope_theta\": 10000.0, \"partial_rotary_factor\": 0.5", "partial_rotary_factor"},
      {"\"rope_theta\": 10000.0", "\"rope_theta\": 10000.0, \"attn_logit_softcapping\": 50.0", "attn_logit_softcapping"},
      {"\"rope_theta\": 10000.0",
       "\"rope_theta\": 10000.0, \"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4}",
       "quant_method 'awq'"},
      {"\"rope_theta\": 10000.0",
       "\"rope_theta\": 10000.0, \"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": [64, 64]}",
       "quantization_config.weight_block_size"},
      {"\"rope_theta\": 10000.0",
       "\"rope_theta\": 10000.0, \"quantization_config\": {\"quant_method\": \"fp8\", \"activation_scheme\": \"static\"}",
       "quantization_config.activation_scheme"},
      {"\"architectures\": [\n    \"LlamaForCausalLM\"\n  ]", "\"architectures\": [\"GemmaForCausalLM\"]",
       "architecture 'GemmaForCausalLM'"},
      {"\"model_type\": \"llama\"", "\"model_type\": \"qwen2\"", "model_type"},
      {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3", "num_key_value_heads"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expect);
    const std::string d = copy_of(base, "bad_config");
    edit_config(d, c.from, c.to);
    expect_contains(load_error(d), {d + "/config.json", c.expect});
  }
  // A Llama with attention_bias true needs the four biases: their absence is named.
  const std::string d = copy_of(base, "bad_attention_bias");
  edit_config(d, "\"attention_bias\": false", "\"attention_bias\": true");
  expect_contains(load_error(d), {"model.layers.0.self_attn.q_proj.bias", "missing"});
  // Fields that cannot change the forward pass are accepted.
  const std::string ok = copy_of(base, "inert_fields");
  edit_config(ok, "\"use_cache\": true",
              "\"use_cache\": true, \"pad_token_id\": null, \"attention_dropout\": 0.0, \"pretraining_tp\": 1, "
              "\"_name_or_path\": \"x\", \"rope_scaling\": null");
  EXPECT_NO_THROW(Checkpoint c(ok));
}

TEST_F(ModelTest, Fp8WeightsNeedTheirBlockScales) {
  const std::string fp8 = "llama_fp8_e4m3";
  const std::string w = "model.layers.1.mlp.down_proj.weight", sc = w + "_scale_inv";
  auto with = [&](const std::string& variant, const std::string& name,
                  const std::function<void(std::vector<io::NamedTensor>&)>& edit) {
    const std::string d = copy_of(variant, name);
    edit_tensors(d, edit);
    return d;
  };
  {  // an fp8 weight without its scale
    const std::string d = with(fp8, "bad_fp8_no_scale", [&](auto& ts) {
      std::erase_if(ts, [&](const io::NamedTensor& t) { return t.name == sc; });
    });
    expect_contains(load_error(d), {d + "/model.safetensors", w, sc, "missing"});
  }
  {  // a scale of the wrong shape (the weight's [160, 272] needs [2, 3])
    const std::string d = with(fp8, "bad_fp8_scale_shape", [&](auto& ts) {
      for (io::NamedTensor& t : ts)
        if (t.name == sc) t.shape = Shape{3, 2};
    });
    expect_contains(load_error(d), {d + "/model.safetensors", sc, "[3, 2]", "[2, 3]"});
  }
  {  // a scale in a dtype other than F32 / BF16
    const std::string d = with(fp8, "bad_fp8_scale_dtype", [&](auto& ts) {
      for (io::NamedTensor& t : ts)
        if (t.name == sc) t.dtype = DType::f16, t.bytes.resize(t.bytes.size() / 2);
    });
    expect_contains(load_error(d), {d + "/model.safetensors", sc, "F16", "F32 or BF16"});
  }
  {  // a scale whose weight is not fp8
    const std::string d = with("llama_untied_f32", "bad_scale_without_fp8", [&](auto& ts) {
      ts.push_back({"model.layers.0.self_attn.q_proj.weight_scale_inv", DType::f32, Shape{1, 1}, std::vector<std::uint8_t>(4)});
    });
    expect_contains(load_error(d), {d + "/model.safetensors", "model.layers.0.self_attn.q_proj.weight_scale_inv",
                                    "no F8_E4M3 weight", "F32"});
  }
  {  // a scale for a tensor that is no linear weight
    const std::string d = with(fp8, "bad_scale_for_norm", [&](auto& ts) {
      ts.push_back({"model.norm.weight_scale_inv", DType::f32, Shape{1, 1}, std::vector<std::uint8_t>(4)});
    });
    expect_contains(load_error(d), {d + "/model.safetensors", "model.norm.weight_scale_inv", "not a linear layer's weight"});
  }
  // fp8 where the architecture has no linear: the embedding, a norm.
  for (const std::string name : {"model.embed_tokens.weight", "model.layers.0.input_layernorm.weight"}) {
    SCOPED_TRACE(name);
    const std::string d = with(fp8, "bad_fp8_not_linear", [&](auto& ts) {
      for (io::NamedTensor& t : ts)
        if (t.name == name) {
          t.dtype = DType::f8e4m3;
          t.bytes.resize(static_cast<std::size_t>(checked_numel(t.shape)));
        }
    });
    expect_contains(load_error(d), {d + "/model.safetensors", name, "F8_E4M3", "not a linear layer's weight"});
  }
  {  // another fp8 format for a linear weight
    const std::string d = with(fp8, "bad_fp8_e5m2", [&](auto& ts) {
      for (io::NamedTensor& t : ts)
        if (t.name == w) t.dtype = DType::f8e5m2;
    });
    expect_contains(load_error(d), {d + "/model.safetensors", w, "F8_E5M2"});
  }
  {  // an fp8 weight whose shape disagrees with the config: the weight is named, not its scale
    const std::string d = copy_of(fp8, "bad_fp8_shape");
    edit_config(d, "\"intermediate_size\": 272", "\"intermediate_size\": 400");
    expect_contains(load_error(d), {d + "/model.safetensors", "model.layers.0.mlp.gate_proj.weight", "[272, 160]", "[400, 160]"});
  }
  // The good one loads, and so does its config's quantization_config.
  EXPECT_NO_THROW(Checkpoint c(dir(fp8)));
}

TEST_F(ModelTest, SlidingWindowIsEnforcedNotIgnored) {
  const std::string d = copy_of("mistral_window_bf16", "short_window");
  edit_config(d, "\"sliding_window\": 4096", "\"sliding_window\": 6");
  const Checkpoint c(d);
  Model m(c, hal::device("cpu"), DType::f32);
  Session s(m, 1, 16);
  const std::vector<std::vector<std::int32_t>> six{{1, 2, 3, 4, 5, 6}}, one{{7}};
  EXPECT_NO_THROW(s.step(six));  // within the window: exact
  expect_contains(error_of([&] { s.step(one); }), {"sliding_window 6", "7 tokens"});
  EXPECT_EQ(s.length(0), 6);
}

}  // namespace
}  // namespace hal::model::testing
