#include "train/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <memory>

#include "hal/error.h"
#include "hal/stream.h"

namespace hal::train {

namespace {

double read_scalar(Stream& s, const Tensor& t) {
  if (t.dtype == DType::f64) {
    double v = 0;
    s.download(&v, t);
    s.synchronize();
    return v;
  }
  float v = 0;
  s.download(&v, t);
  s.synchronize();
  return v;
}

}  // namespace

TrainResult train(Device& device, const ByteCorpus& corpus, const TrainOptions& o,
                  const std::function<void(const StepReport&)>& on_step, std::unique_ptr<TrainingStep>* step_out) {
  if (o.steps < 0) throw Error(ErrorCode::invalid_argument, fmt::format("train: argument 'steps': expected >= 0, given {}", o.steps));
  if (o.ranks < 1 || o.rank < 0 || o.rank >= o.ranks)
    throw Error(ErrorCode::invalid_argument, fmt::format("train: rank {} of {} ranks", o.rank, o.ranks));
  if (o.shape.vocab < 256)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("train: argument 'shape.vocab': expected >= 256 (one token per byte), given {}", o.shape.vocab));
  auto step = std::make_unique<TrainingStep>(device, o.dtype, o.shape);
  Stream s(device);
  step->init_parameters(s, o.seed);
  s.synchronize();
  TrainResult result;
  std::vector<std::int32_t> ids, targets;
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t t = 1; t <= o.steps; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    corpus.batch(t - 1, o.seed, o.rank, o.ranks, o.shape.batch, o.shape.seq, ids, targets);
    step->set_batch(s, ids, targets);
    step->zero_accumulated_gradients(s);
    run_stages(s, step->forward_backward());
    if (o.reduce_gradients) o.reduce_gradients(s, step->parameters());
    OptimizerSettings opt = o.optimizer;
    if (o.warmup_steps > 0 && t <= o.warmup_steps)
      opt.lr = o.optimizer.lr * static_cast<float>(t) / static_cast<float>(o.warmup_steps);
    run_stages(s, step->optimizer(t, opt));
    const double loss = read_scalar(s, step->tensor("loss"));  // synchronises
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.losses.push_back(loss);
    result.tokens += o.shape.rows();
    if (on_step) on_step({t, loss, secs, o.shape.rows()});
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (step_out) *step_out = std::move(step);
  return result;
}

}  // namespace hal::train
