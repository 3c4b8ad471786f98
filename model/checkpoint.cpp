#include "model/checkpoint.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "hal/error.h"
#include "hal/op.h"
#include "hal/io/json_reader.h"
#include "model/text_file.h"

namespace hal::model {

namespace {

bool file_exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// FNV-1a, 64 bit.
void mix(std::uint64_t& h, std::string_view bytes) {
  for (char ch : bytes) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
}

// Tensors some checkpoints carry that the forward pass recomputes
// (transformers made rotary inv_freq a non-persistent buffer in 4.31).
bool is_ignored(const std::string& name) {
  return name.size() > 25 && name.ends_with(".self_attn.rotary_emb.inv_freq");
}

// The index file: weight name -> shard file name (a plain name in `dir`).
std::map<std::string, std::string> read_index(const std::string& path) {
  const io::JsonValue root = io::parse_json(read_text(path), path);
  const io::JsonValue* map = root.is_object() ? root.find("weight_map") : nullptr;
  if (map == nullptr || !map->is_object())
    throw Error(ErrorCode::io_error, fmt::format("'{}': no 'weight_map' object", path));
  std::map<std::string, std::string> out;
  for (const io::JsonMember& m : map->members()) {
    if (!m.value.is_string())
      throw Error(ErrorCode::io_error, fmt::format("'{}': weight_map entry '{}' is not a file name", path, m.key));
    const std::string& file = m.value.text();
    if (file.empty() || file.find('/') != std::string::npos || file.find('\\') != std::string::npos || file == "." ||
        file == "..")
      throw Error(ErrorCode::io_error,
                  fmt::format("'{}': weight_map entry '{}' names '{}', not a file in the checkpoint folder", path, m.key, file));
    out[m.key] = file;
  }
  return out;
}

// A linear layer's weight: the tensors an F8_E4M3 checkpoint may store in fp8.
bool is_linear_weight(const std::string& name) {
  return name == "lm_head.weight" || (name.starts_with("model.layers.") && name.ends_with("_proj.weight"));
}

constexpr std::string_view kScaleSuffix = "_scale_inv";  // "<linear>.weight_scale_inv"

}  // namespace

std::vector<ExpectedTensor> expected_tensors(const ModelConfig& c) {
  const std::int64_t H = c.hidden_size, F = c.intermediate_size, V = c.vocab_size;
  const std::int64_t q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  std::vector<ExpectedTensor> out;
  out.push_back({"model.embed_tokens.weight", {V, H}});
  for (std::int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    out.push_back({p + "input_layernorm.weight", {H}});
    out.push_back({p + "self_attn.q_proj.weight", {q, H}});
    out.push_back({p + "self_attn.k_proj.weight", {kv, H}});
    out.push_back({p + "self_attn.v_proj.weight", {kv, H}});
    out.push_back({p + "self_attn.o_proj.weight", {H, q}});
    if (c.qkv_bias) {
      out.push_back({p + "self_attn.q_proj.bias", {q}});
      out.push_back({p + "self_attn.k_proj.bias", {kv}});
      out.push_back({p + "self_attn.v_proj.bias", {kv}});
    }
    if (c.o_bias) out.push_back({p + "self_attn.o_proj.bias", {H}});
    out.push_back({p + "post_attention_layernorm.weight", {H}});
    out.push_back({p + "mlp.gate_proj.weight", {F, H}});
    out.push_back({p + "mlp.up_proj.weight", {F, H}});
    out.push_back({p + "mlp.down_proj.weight", {H, F}});
    if (c.mlp_bias) {
      out.push_back({p + "mlp.gate_proj.bias", {F}});
      out.push_back({p + "mlp.up_proj.bias", {F}});
      out.push_back({p + "mlp.down_proj.bias", {H}});
    }
  }
  out.push_back({"model.norm.weight", {H}});
  if (!c.tie_word_embeddings) out.push_back({"lm_head.weight", {V, H}});
  return out;
}

Checkpoint::Checkpoint(const std::string& dir) : dir_(dir) {
  const std::string config_path = dir + "/config.json";
  const std::string config_text = read_text(config_path);
  config_ = parse_config(config_text, config_path);
  fingerprint_ = 0xcbf29ce484222325ULL;
  mix(fingerprint_, config_text);

  // Which file holds each tensor.
  const std::string index_path = dir + "/model.safetensors.index.json";
  const std::string single_path = dir + "/model.safetensors";
  std::map<std::string, std::string> where;  // name -> file name
  std::map<std::string, std::size_t> reader_of;  // file name -> readers_ index
  if (file_exists(index_path)) {
    where = read_index(index_path);
    for (const auto& [name, file] : where)
      if (!reader_of.count(file)) {
        const std::string path = dir + "/" + file;
        if (!file_exists(path))
          throw Error(ErrorCode::io_error,
                      fmt::format("'{}': names shard '{}' (for tensor '{}'), which does not exist", index_path, path, name));
        reader_of[file] = readers_.size();
        readers_.push_back(std::make_unique<io::SafetensorsReader>(path));
        file_names_.push_back(path);
      }
  } else if (file_exists(single_path)) {
    readers_.push_back(std::make_unique<io::SafetensorsReader>(single_path));
    file_names_.push_back(single_path);
    reader_of["model.safetensors"] = 0;
    for (const io::SafetensorsEntry& e : readers_[0]->tensors()) where[e.name] = "model.safetensors";
  } else {
    throw Error(ErrorCode::io_error, fmt::format("'{}': neither model.safetensors nor model.safetensors.index.json", dir));
  }

  const std::vector<ExpectedTensor> expected = expected_tensors(config_);
  std::set<std::string> wanted;
  for (const ExpectedTensor& e : expected) wanted.insert(e.name);
  for (const auto& [name, file] : where) {
    if (wanted.count(name) || is_ignored(name)) continue;
    // A block scale is checked with its weight below.
    if (name.ends_with(kScaleSuffix)) {
      const std::string weight = name.substr(0, name.size() - kScaleSuffix.size());
      if (wanted.count(weight) && is_linear_weight(weight)) continue;
      throw Error(ErrorCode::io_error,
                  fmt::format("'{}': tensor '{}' is a block scale, but '{}' is not a linear layer's weight that {} "
                              "with this config.json reads (only linear weights may be F8_E4M3)",
                              dir + "/" + file, name, weight, config_.architecture_name));
    }
    // A tied checkpoint may still store lm_head.weight; transformers ties it
    // to the embedding, and so does hal.
    if (name == "lm_head.weight" && config_.tie_word_embeddings) continue;
    throw Error(ErrorCode::io_error,
                fmt::format("'{}': tensor '{}' has no place in {} with this config.json (a bias the architecture or "
                            "config does not have, or a layer beyond num_hidden_layers {}?)",
                            dir + "/" + file, name, config_.architecture_name, config_.num_layers));
  }

  for (const ExpectedTensor& e : expected) {
    const auto it = where.find(e.name);
    if (it == where.end())
      throw Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}' is missing ({} with this config.json needs it)",
                                                   readers_.size() == 1 ? file_names_[0] : index_path, e.name,
                                                   config_.architecture_name));
    const io::SafetensorsReader& r = *readers_[reader_of.at(it->second)];
    const io::SafetensorsEntry* entry = r.find(e.name);
    if (entry == nullptr)
      throw Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}' is missing (the index places it in this shard)",
                                                   r.path(), e.name));
    const auto check_shape = [&] {
      if (!(entry->shape == e.shape))
        throw Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}' has shape {}, config.json implies {}", r.path(),
                                                     e.name, entry->shape.str(), e.shape.str()));
    };
    CheckpointTensor t{e.name, &r, entry};
    const std::string scale_name = e.name + std::string(kScaleSuffix);
    const auto scale_it = where.find(scale_name);
    if (entry->dtype == DType::f8e4m3) {
      if (!is_linear_weight(e.name))
        throw Error(ErrorCode::unsupported,
                    fmt::format("'{}': tensor '{}' is F8_E4M3, but it is not a linear layer's weight (embeddings and "
                                "norms are read in F32, F16 or BF16; fp8 runs through gemm_fp8 only)",
                                r.path(), e.name));
      if (scale_it == where.end())
        throw Error(ErrorCode::io_error,
                    fmt::format("'{}': tensor '{}' is F8_E4M3 but its block scale '{}' is missing", r.path(), e.name,
                                scale_name));
      check_shape();  // the weight's own shape first: the scale's follows from it
      const io::SafetensorsReader& sr = *readers_[reader_of.at(scale_it->second)];
      const io::SafetensorsEntry* se = sr.find(scale_name);
      if (se == nullptr)
        throw Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}' is missing (the index places it in this shard)",
                                                     sr.path(), scale_name));
      const auto blocks = [](std::int64_t n) { return (n + kFp8BlockSize - 1) / kFp8BlockSize; };
      const Shape want{blocks(e.shape[0]), blocks(e.shape[1])};
      if (se->dtype != DType::f32 && se->dtype != DType::bf16)
        throw Error(ErrorCode::unsupported, fmt::format("'{}': block scale '{}' is {}; expected F32 or BF16", sr.path(),
                                                        scale_name, io::safetensors_dtype(se->dtype)));
      if (!(se->shape == want))
        throw Error(ErrorCode::io_error,
                    fmt::format("'{}': block scale '{}' has shape {}; its weight {} in 128 x 128 blocks needs {}",
                                sr.path(), scale_name, se->shape.str(), e.shape.str(), want.str()));
      t.scale_file = &sr;
      t.scale_entry = se;
    } else {
      if (scale_it != where.end())
        throw Error(ErrorCode::io_error,
                    fmt::format("'{}': block scale '{}' has no F8_E4M3 weight: '{}' is {}", dir + "/" + scale_it->second,
                                scale_name, e.name, io::safetensors_dtype(entry->dtype)));
      if (is_fp8(entry->dtype))
        throw Error(ErrorCode::unsupported,
                    fmt::format("'{}': tensor '{}' is {}: of the fp8 formats only F8_E4M3 linear weights with 128 x 128 "
                                "block scales are read", r.path(), e.name, io::safetensors_dtype(entry->dtype)));
    }
    if (entry->dtype != DType::f8e4m3 && entry->dtype != DType::f32 && entry->dtype != DType::f16 && entry->dtype != DType::bf16)
      throw Error(ErrorCode::unsupported, fmt::format("'{}': tensor '{}' is {}; weights must be F32, F16 or BF16",
                                                      r.path(), e.name, io::safetensors_dtype(entry->dtype)));
    check_shape();
    tensors_.push_back(t);
    mix(fingerprint_, fmt::format("{}:{}:{};", e.name, dtype_name(entry->dtype), entry->shape.str()));
    if (t.is_fp8())
      mix(fingerprint_, fmt::format("{}:{}:{};", scale_name, dtype_name(t.scale_entry->dtype), t.scale_entry->shape.str()));
  }
}

const CheckpointTensor& Checkpoint::tensor(const std::string& name) const {
  for (const CheckpointTensor& t : tensors_)
    if (t.name == name) return t;
  throw Error(ErrorCode::invalid_argument, fmt::format("checkpoint '{}': no tensor '{}' is read", dir_, name));
}

DType Checkpoint::stored_dtype() const { return tensors_.front().entry->dtype; }

std::int64_t Checkpoint::parameter_count() const {
  std::int64_t n = 0;
  for (const CheckpointTensor& t : tensors_) n += checked_numel(t.entry->shape);
  return n;
}

std::uint64_t Checkpoint::stored_bytes() const {
  std::uint64_t n = 0;
  for (const CheckpointTensor& t : tensors_) n += t.entry->size() + (t.is_fp8() ? t.scale_entry->size() : 0);
  return n;
}

std::int64_t Checkpoint::fp8_tensor_count() const {
  std::int64_t n = 0;
  for (const CheckpointTensor& t : tensors_) n += t.is_fp8() ? 1 : 0;
  return n;
}

std::uint64_t Checkpoint::fp8_bytes() const {
  std::uint64_t n = 0;
  for (const CheckpointTensor& t : tensors_)
    if (t.is_fp8()) n += t.entry->size() + t.scale_entry->size();
  return n;
}

}  // namespace hal::model
