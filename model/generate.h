#pragma once
// Token selection and the prefill-then-decode loop.
//
// Greedy (temperature 0) takes the first largest logit. Otherwise the top_k
// largest logits (all when top_k is 0; ties broken by the smaller id) are
// turned into probabilities softmax(logit / temperature) in fp64 and one is
// drawn by inverse CDF with a 53-bit uniform from Philox4x32-10 keyed by the
// seed at counter (sequence, step): the draw depends only on (seed, sequence,
// step) and the logits, so every backend whose logits agree picks the same
// tokens for the same seed.
#include <cstdint>
#include <span>
#include <vector>

#include "model/model.h"

namespace hal::model {

struct SamplingOptions {
  double temperature = 0.0;  // 0: greedy
  std::int64_t top_k = 0;    // 0: the whole vocabulary
  std::uint64_t seed = 0;
};

std::int32_t select_token(std::span<const float> logits, const SamplingOptions& options, std::int64_t sequence,
                          std::int64_t step);

// The logits [batch, vocab] of a step as f32 on the host.
std::vector<float> download_logits(Stream& stream, const Tensor& logits);

struct Generation {
  std::vector<std::vector<std::int32_t>> tokens;  // the new tokens of each sequence
  std::vector<float> last_logits;                 // [batch, vocab]: those the last token was chosen from
};

// Prefills `prompts`, then generates `steps` tokens per sequence (the first
// from the prefill's logits, each next one after a decode step). With
// `forced` (teacher forcing, used by the porting proof), forced[i][s] is fed
// instead of the chosen token, so several devices decode the same stream.
Generation generate(Model& model, std::span<const std::vector<std::int32_t>> prompts, std::int64_t steps,
                    const SamplingOptions& options, StepObserver* observer = nullptr,
                    const std::vector<std::vector<std::int32_t>>* forced = nullptr);

}  // namespace hal::model
