#pragma once
// A Hugging Face checkpoint folder, opened and checked before anything large
// is allocated: config.json, then model.safetensors or the shards that
// model.safetensors.index.json names. Every shard is memory-mapped and its
// header checked (hal/io/safetensors.h); then every tensor the architecture
// needs is looked up with its exact Hugging Face name, its dtype (f32, f16,
// bf16) and its shape checked against the config. A linear layer's weight
// (q/k/v/o, gate/up/down, an untied lm_head) may instead be F8_E4M3 with its
// 128 x 128 block scales in `<name>_scale_inv` (DeepSeek-V3's checkpoints);
// fp8 anywhere else, a scale without an fp8 weight, an fp8 weight without
// its scale or with a scale of the wrong shape or dtype are refused. A missing tensor, a shape
// that disagrees, an unsupported dtype, a tensor the architecture has no
// place for (e.g. a bias where it has none), a shard the index names that is
// absent or lacks the tensor: each throws hal::Error(io_error, or unsupported
// for dtypes) naming the file and the tensor.
//
// The Checkpoint keeps the mappings: a tensor's bytes are views of them,
// uploaded tensor by tensor (model/weights.h), never copied whole in host
// memory.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hal/io/safetensors.h"
#include "model/config.h"

namespace hal::model {

// One tensor the model reads, with where it lies.
struct CheckpointTensor {
  std::string name;                     // "model.layers.0.self_attn.q_proj.weight"
  const io::SafetensorsReader* file = nullptr;
  const io::SafetensorsEntry* entry = nullptr;
  std::span<const std::byte> bytes() const { return file->bytes(*entry); }
  // An F8_E4M3 linear weight's 128 x 128 block scales, `<name>_scale_inv`
  // (DeepSeek-V3's layout: real weight = stored fp8 value * scale), shape
  // [ceil(out/128), ceil(in/128)], F32 or BF16; null for other weights.
  const io::SafetensorsReader* scale_file = nullptr;
  const io::SafetensorsEntry* scale_entry = nullptr;
  bool is_fp8() const noexcept { return scale_entry != nullptr; }
  std::span<const std::byte> scale_bytes() const { return scale_file->bytes(*scale_entry); }
  CheckpointTensor scale() const { return {name + "_scale_inv", scale_file, scale_entry, nullptr, nullptr}; }
};

class Checkpoint {
 public:
  explicit Checkpoint(const std::string& dir);

  const std::string& dir() const noexcept { return dir_; }
  const ModelConfig& config() const noexcept { return config_; }
  // Throws hal::Error(invalid_argument) for a name the model does not read.
  const CheckpointTensor& tensor(const std::string& name) const;
  const std::vector<CheckpointTensor>& tensors() const noexcept { return tensors_; }
  // The dtype most weights are stored in (that of the embedding table).
  DType stored_dtype() const;
  std::int64_t parameter_count() const;
  std::uint64_t stored_bytes() const;  // with the fp8 weights' scales
  // The fp8 linear weights: how many, their elements and stored bytes (scales included).
  std::int64_t fp8_tensor_count() const;
  std::uint64_t fp8_bytes() const;
  const std::vector<std::string>& files() const noexcept { return file_names_; }
  // A hash of config.json and of every tensor's name, dtype and shape: what
  // a recorded comparison checks before it is trusted for this checkpoint.
  std::uint64_t fingerprint() const noexcept { return fingerprint_; }

 private:
  std::string dir_;
  ModelConfig config_;
  std::vector<std::string> file_names_;
  std::vector<std::unique_ptr<io::SafetensorsReader>> readers_;
  std::vector<CheckpointTensor> tensors_;
  std::uint64_t fingerprint_ = 0;
};

// The Hugging Face names and shapes an architecture reads, in load order.
struct ExpectedTensor {
  std::string name;
  Shape shape;
};
std::vector<ExpectedTensor> expected_tensors(const ModelConfig& c);

}  // namespace hal::model
