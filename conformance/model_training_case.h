#pragma once
// The model-level training case's setup (model_training_case.cpp), shared with
// the tools that check the same step against independent references (the
// torch.autograd test writes it with tests/training/training_step_dump.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "hal/stream.h"
#include "train/training_step.h"

namespace hal::conformance {

// One decoder layer of model_case.cpp's sizes, with embedding, final norm and
// a V = 256 head; batch 1 of 33 tokens.
train::ModelShape training_case_shape();
// The case's seed for a dtype ("model_training/<dt>/...": the case name's).
std::uint64_t training_case_seed(DType dt);
// Parameters from the step's Philox initialisation, AdamW moments as after a
// few steps, Philox tokens and targets, accumulated gradients zeroed.
void training_case_initial_state(train::TrainingStep& step, Stream& s, std::uint64_t seed);
// Forward, loss, backward, then AdamW at step training_case_adam_step().
std::vector<train::Stage> training_case_stages(const train::TrainingStep& step);
std::int64_t training_case_adam_step();
train::OptimizerSettings training_case_optimizer();

}  // namespace hal::conformance
