#include "model/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <span>
#include <sstream>
#include <vector>

#include "hal/error.h"
#include "hal/io/json_reader.h"
#include "model/text_file.h"

namespace hal::model {

using io::JsonValue;

namespace {

// Fields that cannot change the forward pass: token ids, generation and
// training settings, bookkeeping of transformers' PretrainedConfig.
constexpr std::string_view kInert[] = {
    "_name_or_path", "_commit_hash", "_attn_implementation", "_attn_implementation_autoset", "transformers_version",
    "torch_dtype", "model_type", "architectures", "auto_map", "bos_token_id", "eos_token_id", "pad_token_id",
    "sep_token_id", "decoder_start_token_id", "initializer_range", "use_cache", "max_position_embeddings",
    "attention_dropout", "pretraining_tp", "return_dict", "output_hidden_states", "output_attentions",
    "torchscript", "use_bfloat16", "tf_legacy_loss", "pruned_heads", "chunk_size_feed_forward",
    "is_encoder_decoder", "is_decoder", "cross_attention_hidden_size", "add_cross_attention",
    "tie_encoder_decoder", "max_length", "min_length", "do_sample", "early_stopping", "num_beams",
    "num_beam_groups", "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
    "num_return_sequences", "output_scores", "return_dict_in_generate", "forced_bos_token_id",
    "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty", "suppress_tokens",
    "begin_suppress_tokens", "finetuning_task", "id2label", "label2id", "tokenizer_class", "prefix",
    "task_specific_params", "problem_type", "max_window_layers"};

// Fields this reader interprets (per architecture, below).
constexpr std::string_view kCommon[] = {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                                        "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_act",
                                        "rms_norm_eps", "rope_theta", "rope_scaling", "tie_word_embeddings",
                                        "partial_rotary_factor", "quantization_config"};
constexpr std::string_view kLlama[] = {"attention_bias", "mlp_bias"};
constexpr std::string_view kQwen2[] = {"use_sliding_window", "sliding_window"};
constexpr std::string_view kMistral[] = {"sliding_window"};

bool listed(std::span<const std::string_view> list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

struct Reader {
  const JsonValue& root;
  const std::string& source;

  [[noreturn]] void fail(std::string_view field, std::string_view what) const {
    throw Error(ErrorCode::io_error, fmt::format("'{}': field '{}': {}", source, field, what));
  }
  [[noreturn]] void refuse(std::string_view field, std::string_view what) const {
    throw Error(ErrorCode::unsupported, fmt::format("'{}': {}: not implemented by hal ({})", source, field, what));
  }
  // A field given as null counts as absent, as transformers reads it.
  const JsonValue* get(std::string_view key) const {
    const JsonValue* v = root.find(key);
    return v == nullptr || v->is_null() ? nullptr : v;
  }
  std::int64_t positive_int(std::string_view key, std::optional<std::int64_t> fallback = std::nullopt) const {
    const JsonValue* v = get(key);
    if (v == nullptr) {
      if (fallback) return *fallback;
      fail(key, "missing (a positive integer is required)");
    }
    if (!v->is_number() || !v->integer() || *v->integer() <= 0)
      fail(key, fmt::format("expected a positive integer, given {}", describe(*v)));
    return *v->integer();
  }
  double positive_number(std::string_view key, double fallback) const {
    const JsonValue* v = get(key);
    if (v == nullptr) return fallback;
    if (!v->is_number() || !(v->number() > 0) || !std::isfinite(v->number()))
      fail(key, fmt::format("expected a finite number > 0, given {}", describe(*v)));
    return v->number();
  }
  bool flag(std::string_view key, bool fallback) const {
    const JsonValue* v = get(key);
    if (v == nullptr) return fallback;
    if (!v->is_bool()) fail(key, fmt::format("expected true or false, given {}", describe(*v)));
    return v->boolean();
  }
  std::string text(std::string_view key) const {
    const JsonValue* v = get(key);
    if (v == nullptr) return {};
    if (!v->is_string()) fail(key, fmt::format("expected a string, given {}", describe(*v)));
    return v->text();
  }
  static std::string describe(const JsonValue& v) {
    if (v.is_number()) return fmt::format("{}", v.number());
    if (v.is_string()) return fmt::format("\"{}\"", v.text());
    if (v.is_bool()) return v.boolean() ? "true" : "false";
    return std::string(JsonValue::kind_name(v.kind()));
  }
};

Architecture architecture_of(const Reader& r) {
  const JsonValue* archs = r.get("architectures");
  if (archs == nullptr) r.fail("architectures", "missing (expected [\"LlamaForCausalLM\"], Qwen2 or Mistral)");
  if (!archs->is_array() || archs->items().size() != 1 || !archs->items()[0].is_string())
    r.fail("architectures", "expected a list of one architecture name");
  const std::string& name = archs->items()[0].text();
  Architecture a;
  std::string_view model_type;
  if (name == "LlamaForCausalLM") a = Architecture::llama, model_type = "llama";
  else if (name == "Qwen2ForCausalLM") a = Architecture::qwen2, model_type = "qwen2";
  else if (name == "MistralForCausalLM") a = Architecture::mistral, model_type = "mistral";
  else
    throw Error(ErrorCode::unsupported,
                fmt::format("'{}': architecture '{}' is not implemented by hal (LlamaForCausalLM, Qwen2ForCausalLM, "
                            "MistralForCausalLM are)", r.source, name));
  const std::string given = r.text("model_type");
  if (!given.empty() && given != model_type)
    r.fail("model_type", fmt::format("'{}' does not match architecture {} (model_type '{}')", given, name, model_type));
  return a;
}

std::optional<Llama3RopeScaling> rope_scaling_of(const Reader& r) {
  const JsonValue* v = r.get("rope_scaling");
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) r.fail("rope_scaling", "expected an object or null");
  const JsonValue* type = v->find("rope_type");
  if (type == nullptr) type = v->find("type");
  if (type == nullptr || !type->is_string()) r.fail("rope_scaling", "has no string 'rope_type' (or 'type')");
  if (type->text() == "default") return std::nullopt;
  if (type->text() != "llama3")
    r.refuse(fmt::format("rope_scaling type '{}'", type->text()), "only 'llama3' and 'default' are");
  const Reader sub{*v, r.source};
  Llama3RopeScaling s;
  for (const io::JsonMember& m : v->members()) {
    static constexpr std::string_view kKnown[] = {"rope_type", "type", "factor", "low_freq_factor",
                                                  "high_freq_factor", "original_max_position_embeddings"};
    if (!listed(kKnown, m.key)) r.refuse(fmt::format("rope_scaling.{}", m.key), "not a field of the llama3 scaling");
  }
  auto need = [&](std::string_view key) {
    if (sub.get(key) == nullptr) r.fail(fmt::format("rope_scaling.{}", key), "missing (llama3 scaling needs it)");
  };
  for (std::string_view k : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}) need(k);
  s.factor = sub.positive_number("factor", 0);
  s.low_freq_factor = sub.positive_number("low_freq_factor", 0);
  s.high_freq_factor = sub.positive_number("high_freq_factor", 0);
  s.original_max_position_embeddings = sub.positive_int("original_max_position_embeddings");
  if (!(s.high_freq_factor > s.low_freq_factor))
    r.fail("rope_scaling", fmt::format("high_freq_factor {} must exceed low_freq_factor {}", s.high_freq_factor,
                                       s.low_freq_factor));
  return s;
}

}  // namespace

std::string_view architecture_name(Architecture a) {
  switch (a) {
    case Architecture::llama: return "LlamaForCausalLM";
    case Architecture::qwen2: return "Qwen2ForCausalLM";
    case Architecture::mistral: return "MistralForCausalLM";
  }
  return "?";
}

// DeepSeek-V3's FP8 recipe is the one quantization hal reads: e4m3 weights
// with 128 x 128 block scales (checked per tensor by model/checkpoint.cpp),
// activations quantised per 1 x 128 at run time ("dynamic").
void quantization_of(const Reader& r, const JsonValue& q) {
  const auto text_of = [&](std::string_view key) -> std::string {
    const JsonValue* v = q.is_object() ? q.find(key) : nullptr;
    return v && v->is_string() ? v->text() : std::string("(absent)");
  };
  if (!q.is_object() || text_of("quant_method") != "fp8")
    r.refuse("quantization_config", fmt::format("quant_method '{}' (only 'fp8' with 128 x 128 block scales is read)",
                                                text_of("quant_method")));
  for (const io::JsonMember& m : q.members()) {
    const std::string_view k = m.key;
    if (k == "quant_method") continue;
    if (k == "fmt" && text_of("fmt") == "e4m3") continue;
    if (k == "activation_scheme" && text_of("activation_scheme") == "dynamic") continue;
    if (k == "weight_block_size" && m.value.is_array() && m.value.items().size() == 2 &&
        m.value.items()[0].is_number() && m.value.items()[0].number() == 128 && m.value.items()[1].is_number() &&
        m.value.items()[1].number() == 128)
      continue;
    r.refuse(fmt::format("quantization_config.{} {}", k, Reader::describe(m.value)),
             "hal reads fp8 e4m3 weights with weight_block_size [128, 128] and dynamic activation_scheme only");
  }
}

ModelConfig parse_config(std::string_view json_text, const std::string& source) {
  const JsonValue root = io::parse_json(json_text, source);
  if (!root.is_object()) throw Error(ErrorCode::io_error, fmt::format("'{}': expected a JSON object", source));
  const Reader r{root, source};
  ModelConfig c;
  c.architecture = architecture_of(r);
  c.architecture_name = std::string(architecture_name(c.architecture));

  for (const io::JsonMember& m : root.members()) {
    const bool specific = (c.architecture == Architecture::llama && listed(kLlama, m.key)) ||
                          (c.architecture == Architecture::qwen2 && listed(kQwen2, m.key)) ||
                          (c.architecture == Architecture::mistral && listed(kMistral, m.key));
    if (!listed(kInert, m.key) && !listed(kCommon, m.key) && !specific)
      throw Error(ErrorCode::unsupported,
                  fmt::format("'{}': field '{}' is not known to hal's {} reader and might change the computation",
                              source, m.key, c.architecture_name));
  }

  if (const JsonValue* q = r.get("quantization_config")) quantization_of(r, *q);
  const std::string act = r.text("hidden_act");
  if (!act.empty() && act != "silu" && act != "swish")
    r.refuse(fmt::format("hidden_act '{}'", act), "the MLP is SwiGLU: silu only");
  if (const JsonValue* p = r.get("partial_rotary_factor"); p != nullptr && !(p->is_number() && p->number() == 1.0))
    r.refuse("partial_rotary_factor", fmt::format("{} (rotary embedding over the whole head only)", Reader::describe(*p)));

  c.vocab_size = r.positive_int("vocab_size");
  c.hidden_size = r.positive_int("hidden_size");
  c.intermediate_size = r.positive_int("intermediate_size");
  c.num_layers = r.positive_int("num_hidden_layers");
  c.num_heads = r.positive_int("num_attention_heads");
  c.num_kv_heads = r.positive_int("num_key_value_heads", c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0)
    r.fail("num_key_value_heads", fmt::format("{} does not divide num_attention_heads {}", c.num_kv_heads, c.num_heads));
  if (r.get("head_dim") == nullptr && c.hidden_size % c.num_heads != 0)
    r.fail("head_dim", fmt::format("absent, and hidden_size {} is not a multiple of num_attention_heads {}",
                                   c.hidden_size, c.num_heads));
  c.head_dim = r.positive_int("head_dim", c.hidden_size / c.num_heads);
  if (c.head_dim % 2 != 0) r.fail("head_dim", fmt::format("{} is odd (rotary pairs need an even head_dim)", c.head_dim));
  c.rms_norm_eps = r.positive_number("rms_norm_eps", 1e-6);
  c.rope_theta = r.positive_number("rope_theta", 10000.0);
  c.rope_scaling = rope_scaling_of(r);
  c.tie_word_embeddings = r.flag("tie_word_embeddings", false);
  c.max_position_embeddings = r.get("max_position_embeddings") ? r.positive_int("max_position_embeddings") : 0;
  c.torch_dtype = r.text("torch_dtype");

  switch (c.architecture) {
    case Architecture::llama: {
      const bool bias = r.flag("attention_bias", false);
      c.qkv_bias = c.o_bias = bias;
      c.mlp_bias = r.flag("mlp_bias", false);
      break;
    }
    case Architecture::qwen2:
      c.qkv_bias = true;
      if (r.flag("use_sliding_window", false)) c.sliding_window = r.positive_int("sliding_window", 4096);
      break;
    case Architecture::mistral:
      // transformers' MistralConfig defaults to a 4096-token window; null turns it off.
      if (root.find("sliding_window") == nullptr) c.sliding_window = 4096;
      else if (r.get("sliding_window") != nullptr) c.sliding_window = r.positive_int("sliding_window");
      break;
  }
  return c;
}

ModelConfig read_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  return parse_config(read_text(path), path);
}

}  // namespace hal::model
