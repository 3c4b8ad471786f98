#pragma once
// The training loop of `hal train`: each step draws a batch from the corpus,
// runs the TrainingStep's forward, loss and backward, optionally hands the
// gradients to a reducer (data parallelism: an all-reduce over ranks), then
// AdamW. Everything runs through hal::ops on one device, so the loss curve of
// a seed is the same bits for any CPU thread count.
#include <cstdint>
#include <functional>
#include <vector>

#include "hal/device.h"
#include "train/byte_corpus.h"
#include "train/model_shape.h"
#include "train/training_step.h"

namespace hal::train {

struct TrainOptions {
  ModelShape shape;
  DType dtype = DType::f32;
  std::int64_t steps = 100;
  std::uint64_t seed = 0;
  OptimizerSettings optimizer;
  std::int64_t warmup_steps = 10;  // linear learning-rate warm-up, then constant
  // Data parallelism: this rank's index and the rank count (batches differ by
  // rank), and the reducer that replaces every Parameter::grad by the ranks'
  // average between backward and AdamW (empty: one process).
  std::int64_t rank = 0, ranks = 1;
  std::function<void(Stream&, const std::vector<Parameter>&)> reduce_gradients;
};

struct StepReport {
  std::int64_t step = 0;      // 1-based
  double loss = 0.0;          // this rank's mean cross-entropy (nats per token) before the update
  double seconds = 0.0;       // wall time of the step, synchronised
  std::int64_t tokens = 0;    // tokens this rank processed in the step
};

struct TrainResult {
  std::vector<double> losses;  // one per step
  double seconds = 0.0;
  std::int64_t tokens = 0;
};

// Trains from the seed's initial parameters; `on_step` (optional) is called
// after each step. `step_out` (optional) receives the final state.
TrainResult train(Device& device, const ByteCorpus& corpus, const TrainOptions& options,
                  const std::function<void(const StepReport&)>& on_step = {},
                  std::unique_ptr<TrainingStep>* step_out = nullptr);

}  // namespace hal::train
