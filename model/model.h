#pragma once
// A Llama-family decoder on one hal device: prefill a batch of token
// sequences, then decode step by step with a KV cache on the device.
//
//   Checkpoint ckpt(dir);                       // config + checked headers
//   Model m(ckpt, hal::device("cuda:0"), DType::bf16);
//   Session s(m, /*batch=*/2, /*max_len=*/64);
//   Tensor logits = s.step({{1, 2, 3}, {4, 5}});  // prefill: [2, vocab]
//   logits = s.step({{7}, {9}});                  // one decode step
//
// One forward step takes any number of new tokens per sequence. All new
// tokens are packed into one [T, hidden] activation, so every GEMM reads each
// weight once per step whatever the batch; rotary embedding and attention run
// per sequence (or once for the whole batch when every sequence has the same
// length and the same number of new tokens), attention reading the sequence's
// KV cache with the causal offset of its prefix. The residual adds are fused
// into the output projections (gemm with beta = 1). A linear layer whose
// weight is F8_E4M3 (model/weights.h) quantises its input per 1 x 128 group
// (quantize_fp8, e4m3) and runs gemm_fp8 into the run's dtype, as
// DeepSeek-V3 does; the residual add is its epilogue's beta.
//
// Every op goes through ops::run, so the same code runs on every backend;
// f64 on the CPU computes in fp64 and is the oracle of `hal model compare`
// (for an fp8 checkpoint: the weights dequantised exactly, plain f64 GEMMs,
// no activation quantisation).
// A StepObserver sees every op before and after it runs, each layer's hidden
// state and the logits (model/proof.h scores them).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/buffer.h"
#include "hal/stream.h"
#include "model/checkpoint.h"
#include "model/weights.h"

namespace hal::model {

class Model {
 public:
  Model(const Checkpoint& checkpoint, Device& device, DType dtype, const LoadOptions& options = {});

  const ModelConfig& config() const noexcept { return config_; }
  Device& device() const noexcept { return *device_; }
  DType dtype() const noexcept { return weights_.dtype; }
  const Weights& weights() const noexcept { return weights_; }
  Stream& stream() noexcept { return stream_; }

 private:
  ModelConfig config_;
  Device* device_;
  Stream stream_;
  Weights weights_;
};

// Where an op of the forward pass sits: layer -1 is the embedding, layer
// num_layers the final norm and lm_head; `stage` names the op
// ("qkv_proj", "rope_k", "attention", ...; "q_proj", "k_proj", "v_proj" where
// fp8 weights keep the projections apart); sequences [seq_begin, seq_end).
struct StageInfo {
  int layer = -1;
  std::string_view stage;
  std::int64_t seq_begin = 0, seq_end = 0;
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void before_op(const StageInfo&, const OpCall&, Stream&) {}
  virtual void after_op(const StageInfo&, const OpCall&, Stream&) {}
  // The residual stream after layer `layer` ([T, hidden], every new token).
  virtual void hidden(int /*layer*/, const Tensor&, Stream&) {}
  virtual void logits(const Tensor&, Stream&) {}
};

// A batch of sequences and their KV caches (per layer K and V of
// [batch, max_len, kv_heads, head_dim], contiguous per sequence).
class Session {
 public:
  Session(Model& model, std::int64_t batch, std::int64_t max_len);

  std::int64_t batch() const noexcept { return batch_; }
  std::int64_t max_len() const noexcept { return max_len_; }
  std::int64_t length(std::int64_t seq) const { return lengths_.at(static_cast<std::size_t>(seq)); }

  // Appends tokens[i] (at least one) to sequence i and returns the logits of
  // each sequence's last new token, [batch, vocab] in the model's dtype on
  // its device (valid until the next step). Token ids are checked against
  // the vocabulary, lengths against max_len and the sliding window, before
  // anything runs.
  Tensor step(std::span<const std::vector<std::int32_t>> tokens, StepObserver* observer = nullptr);

 private:
  void run(const StageInfo& where, const OpCall& call);
  Tensor rows(Buffer& b, std::int64_t t, std::int64_t cols);
  void attend(int layer, std::int64_t b0, std::int64_t b1, std::int64_t t0, std::int64_t new_tokens,
              std::int64_t past);

  Model& model_;
  std::int64_t batch_, max_len_;
  std::vector<std::int64_t> lengths_;
  std::vector<Buffer> k_cache_, v_cache_;  // one per layer
  // Step workspace, grown as needed.
  std::int64_t capacity_ = 0;
  // qkv_: [T, q | k | v] (the fused projection's columns); gate_up_: [T, gate | up].
  Buffer x_, h_, qkv_, q_rot_, attn_, gate_up_, act_, last_, last_norm_, logits_;
  Buffer ids_, positions_, last_index_;
  Buffer fp8_act_, fp8_act_scales_;  // an fp8 linear's quantised input (1 x 128 groups)
  std::vector<std::int32_t> host_ids_, host_positions_, host_last_;
  StepObserver* observer_ = nullptr;
  std::int64_t tokens_ = 0;  // T of the current step
};

}  // namespace hal::model
