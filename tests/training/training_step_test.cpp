// train/: the training step and loop. The same bits for one and two oneTBB
// threads (the whole step: every gradient, parameter and moment; a short
// training run's loss curve), the gradient list covering every parameter, and
// refusals by name.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "conformance/model_training_case.h"
#include "hal/buffer.h"
#include "hal/error.h"
#include "hal/registry.h"
#include "train/trainer.h"

namespace {

using namespace hal;

train::ModelShape small_shape() {
  train::ModelShape m;
  m.layers = 2;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 16;
  m.ffn = 96;
  m.batch = 3;
  m.seq = 17;
  return m;
}

train::ByteCorpus corpus() {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the quick brown fox jumps over the lazy dog; ";
  return train::ByteCorpus(text, "pangrams");
}

std::map<std::string, std::vector<std::uint8_t>> run_step_with_threads(DType dt, int threads) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  Device& cpu = device("cpu");
  Stream s(cpu);
  train::TrainingStep step(cpu, dt, small_shape());
  step.init_parameters(s, 7);
  std::vector<std::int32_t> ids, targets;
  corpus().batch(0, 7, 0, 1, step.shape().batch, step.shape().seq, ids, targets);
  step.set_batch(s, ids, targets);
  step.zero_accumulated_gradients(s);
  train::run_stages(s, step.forward_backward());
  train::run_stages(s, step.optimizer(1, {}));
  s.synchronize();
  std::map<std::string, std::vector<std::uint8_t>> out;
  for (const auto& [name, t] : step.tensors()) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
    s.download(bytes.data(), t);
    s.synchronize();
    out[name] = std::move(bytes);
  }
  return out;
}

TEST(TrainingStep, SameBitsForOneAndTwoThreads) {
  for (DType dt : {DType::f32, DType::bf16}) {
    const auto one = run_step_with_threads(dt, 1), two = run_step_with_threads(dt, 2);
    ASSERT_EQ(one.size(), two.size());
    for (const auto& [name, bytes] : one) EXPECT_EQ(bytes, two.at(name)) << dtype_name(dt) << " " << name;
    // The step did something: the loss is finite and every gradient has a non-zero element.
    float loss = 0;
    std::memcpy(&loss, one.at("loss").data(), sizeof loss);
    EXPECT_TRUE(std::isfinite(loss) && loss > 1.0f) << loss;
    for (const auto& [name, bytes] : one) {
      if (!name.starts_with("d.") || name.find('.', 2) == std::string::npos) continue;
      EXPECT_TRUE(std::any_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b != 0; })) << name;
    }
  }
}

// The conformance suite's model-level training case itself (its shape, its
// initial state, forward, backward and AdamW at step 5): one and two threads.
TEST(TrainingStep, ConformanceCaseSameBitsForOneAndTwoThreads) {
  for (DType dt : {DType::f32, DType::bf16}) {
    std::map<std::string, std::vector<std::uint8_t>> runs[2];
    for (int threads : {1, 2}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
      Device& cpu = device("cpu");
      Stream s(cpu);
      train::TrainingStep step(cpu, dt, conformance::training_case_shape());
      conformance::training_case_initial_state(step, s, conformance::training_case_seed(dt));
      train::run_stages(s, conformance::training_case_stages(step));
      s.synchronize();
      for (const auto& [name, t] : step.tensors()) {
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
        s.download(bytes.data(), t);
        s.synchronize();
        runs[threads - 1][name] = std::move(bytes);
      }
    }
    for (const auto& [name, bytes] : runs[0]) EXPECT_EQ(bytes, runs[1].at(name)) << dtype_name(dt) << " " << name;
  }
}

TEST(TrainingStep, GradientListCoversEveryParameter) {
  Device& cpu = device("cpu");
  train::TrainingStep step(cpu, DType::bf16, small_shape());
  // tok_embed, 9 per layer, final_norm, lm_head.
  EXPECT_EQ(step.parameters().size(), 1u + 9u * 2u + 2u);
  for (const train::Parameter& p : step.parameters()) {
    EXPECT_EQ(p.grad.shape, p.param.shape) << p.name;
    EXPECT_EQ(p.grad.dtype, DType::bf16) << p.name;
    ASSERT_TRUE(p.master.has_value()) << p.name;
    EXPECT_EQ(p.master->dtype, DType::f32);
    EXPECT_EQ(p.m.dtype, DType::f32);
  }
}

TEST(Trainer, LossCurveSameBitsForOneAndTwoThreadsAndFalls) {
  train::TrainOptions o;
  o.shape = small_shape();
  o.steps = 12;
  o.seed = 3;
  std::vector<double> curves[2];
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    curves[threads - 1] = train::train(device("cpu"), corpus(), o).losses;
  }
  ASSERT_EQ(curves[0].size(), 12u);
  for (std::size_t i = 0; i < curves[0].size(); ++i)
    EXPECT_EQ(std::memcmp(&curves[0][i], &curves[1][i], sizeof(double)), 0) << "step " << i + 1;
  EXPECT_LT(curves[0].back(), curves[0].front() - 1.0);  // a repetitive text is learnt fast
  // Another seed draws other batches and parameters: another curve.
  o.seed = 4;
  EXPECT_NE(train::train(device("cpu"), corpus(), o).losses.front(), curves[0].front());
}

TEST(TrainingStep, RefusesByName) {
  Device& cpu = device("cpu");
  train::ModelShape bad = small_shape();
  bad.kv_heads = 3;
  try {
    train::TrainingStep step(cpu, DType::f32, bad);
    FAIL() << "kv_heads 3 of 4 heads accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kv_heads 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(train::TrainingStep(cpu, DType::i32, small_shape()), Error);
  train::TrainingStep step(cpu, DType::f32, small_shape());
  Stream s(cpu);
  try {
    step.set_batch(s, std::vector<std::int32_t>(5), std::vector<std::int32_t>(5));
    FAIL() << "a batch of 5 tokens accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 51 ids"), std::string::npos) << e.what();
  }
  EXPECT_THROW(step.tensor("no_such"), Error);
  std::vector<std::int32_t> ids, targets;
  EXPECT_THROW(train::ByteCorpus("short", "s").batch(0, 0, 0, 1, 1, 8, ids, targets), Error);
  EXPECT_THROW(train::ByteCorpus::from_file("/nonexistent/text"), Error);
}

}  // namespace
