#pragma once
// The forward-pass settings of a Hugging Face decoder checkpoint, read from
// its config.json.
//
// Three architectures: LlamaForCausalLM (Llama 2 and 3, rope_scaling of type
// llama3, attention_bias / mlp_bias), Qwen2ForCausalLM (q/k/v biases) and
// MistralForCausalLM. A field that changes the computation and that hal does
// not implement (another rope_scaling type, a hidden_act other than silu,
// partial rotary, quantization) is refused with an error naming it; a field
// the reader does not know is refused too, because it might change the
// computation. Fields that cannot change the forward pass (token ids,
// training and generation settings, transformers_version) are accepted.
// A sliding window is accepted, and enforced: a sequence longer than the
// window is refused at run time (up to the window, full causal attention is
// exactly what the window computes).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hal::model {

enum class Architecture { llama, qwen2, mistral };

// Llama 3's frequency scaling (transformers' _compute_llama3_parameters).
struct Llama3RopeScaling {
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  std::int64_t original_max_position_embeddings = 8192;
};

struct ModelConfig {
  Architecture architecture = Architecture::llama;
  std::string architecture_name;  // "LlamaForCausalLM"
  std::int64_t vocab_size = 0;
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t num_layers = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;  // hidden_size / num_heads when absent
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  std::optional<Llama3RopeScaling> rope_scaling;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // q_proj/k_proj/v_proj have biases
  bool o_bias = false;    // o_proj has a bias (Llama attention_bias)
  bool mlp_bias = false;  // gate/up/down_proj have biases (Llama mlp_bias)
  std::optional<std::int64_t> sliding_window;  // only when it applies
  std::int64_t max_position_embeddings = 0;    // informative
  std::string torch_dtype;                     // informative ("bfloat16")
};

// Parses config.json's text; `source` names the file in errors. Throws
// hal::Error(io_error) for malformed JSON, missing or ill-typed fields and
// inconsistent sizes, and hal::Error(unsupported) for settings hal does not
// implement, each naming the field.
ModelConfig parse_config(std::string_view json_text, const std::string& source);
ModelConfig read_config(const std::string& checkpoint_dir);

std::string_view architecture_name(Architecture a);

}  // namespace hal::model
