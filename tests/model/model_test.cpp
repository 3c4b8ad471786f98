// The model layer on the CPU: tiny checkpoints in Hugging Face's exact layout
// (written with their reference logits by make_checkpoints.py, an independent
// PyTorch implementation in float64), for Llama (untied, f32), Llama 3 (tied,
// rope_scaling llama3, explicit head_dim, bf16, two shards), Qwen2 (q/k/v
// biases, f16) and Mistral (sliding window, bf16).
//
// What each check means:
//  - the f64 run is the oracle: it must equal PyTorch's float64 forward to
//    fp64 round-off. Both compute in fp64 from the same stored weights; with
//    at most a few hundred roundings per element, each ~1.1e-16 relative,
//    growing through three layers of norms, the difference stays near 1e-13;
//    1e-9 (relative to the largest logit) leaves room for libm's last-ulp
//    differences and is still millions of times below what a wiring error
//    (a wrong rotary pair, a swapped head, a bias left out, an untied head)
//    does to these logits (> 1e-2).
//  - f32 and bf16 runs: every op of the forward pass within its contract
//    bound against the fp64 oracle of that op on the run's own inputs
//    (model/proof.h), prefill and decode.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "hal/error.h"
#include "hal/io/npy.h"
#include "hal/io/safetensors.h"
#include "hal/registry.h"
#include "model/generate.h"
#include "model/proof.h"
#include "tests/conformance/faulty_backend.h"
#include "tests/model/model_fixture.h"

namespace fs = std::filesystem;
using namespace hal;
using namespace hal::model;
using namespace hal::model::testing;

namespace {

std::vector<double> logits_row(Stream& s, const Tensor& logits, std::int64_t row) {
  std::vector<std::byte> raw(static_cast<std::size_t>(logits.numel()) * dtype_size(logits.dtype));
  s.download(raw.data(), logits);
  s.synchronize();
  const std::int64_t V = logits.shape[1];
  std::vector<double> out(static_cast<std::size_t>(V));
  for (std::int64_t i = 0; i < V; ++i) out[static_cast<std::size_t>(i)] = load_element(raw.data(), logits.dtype, row * V + i);
  return out;
}

// max |a - b| / max |b|
double relative_max_diff(const std::vector<double>& a, const double* b, std::size_t n) {
  double d = 0, m = 0;
  for (std::size_t i = 0; i < n; ++i) d = std::max(d, std::fabs(a[i] - b[i])), m = std::max(m, std::fabs(b[i]));
  return d / m;
}

TEST_F(ModelTest, OracleEqualsPyTorchForEveryArchitecture) {
  for (const char* v : kVariants) {
    SCOPED_TRACE(v);
    const Checkpoint ckpt(dir(v));
    Model m(ckpt, hal::device("cpu"), DType::f64);
    const std::int64_t V = ckpt.config().vocab_size;
    // A batch of two sequences of different lengths: each attends over its own prefix.
    Session s(m, 2, 16);
    const Tensor logits = s.step(kSequences);
    for (int q = 0; q < 2; ++q) {
      const std::vector<double> ref = reference(v, q);
      const std::size_t last = kSequences[static_cast<std::size_t>(q)].size() - 1;
      const std::vector<double> got = logits_row(m.stream(), logits, q);
      EXPECT_LT(relative_max_diff(got, ref.data() + last * static_cast<std::size_t>(V), static_cast<std::size_t>(V)), 1e-9);
    }
  }
}

TEST_F(ModelTest, PrefillThenDecodeEqualsPrefillOfTheWholeSequence) {
  for (const char* v : kVariants) {
    SCOPED_TRACE(v);
    const Checkpoint ckpt(dir(v));
    Model m(ckpt, hal::device("cpu"), DType::f64);
    const auto V = static_cast<std::size_t>(ckpt.config().vocab_size);
    const std::vector<double> ref0 = reference(v, 0), ref1 = reference(v, 1);
    const auto& s0 = kSequences[0];
    const auto& s1 = kSequences[1];
    auto part = [](const std::vector<std::int32_t>& s, std::size_t a, std::size_t b) {
      return std::vector<std::int32_t>(s.begin() + static_cast<std::ptrdiff_t>(a), s.begin() + static_cast<std::ptrdiff_t>(b));
    };
    // Prefill 5 and 2 tokens; then a step of 2 and 1 new tokens (each
    // sequence attends to its own cached prefix); then two one-token steps.
    const std::vector<std::vector<std::vector<std::int32_t>>> steps = {
        {part(s0, 0, 5), part(s1, 0, 2)}, {part(s0, 5, 7), part(s1, 2, 3)}, {part(s0, 7, 8), part(s1, 3, 4)},
        {part(s0, 8, 9), part(s1, 4, 5)}};
    Session s(m, 2, 16);
    std::size_t end0 = 0, end1 = 0;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const Tensor logits = s.step(steps[k]);
      end0 += steps[k][0].size(), end1 += steps[k][1].size();
      EXPECT_LT(relative_max_diff(logits_row(m.stream(), logits, 0), ref0.data() + (end0 - 1) * V, V), 1e-9) << "step " << k;
      EXPECT_LT(relative_max_diff(logits_row(m.stream(), logits, 1), ref1.data() + (end1 - 1) * V, V), 1e-9) << "step " << k;
    }
    // A uniform batch (same lengths: one rope and one attention call for both).
    Session u(m, 2, 8);
    const Tensor first = u.step(std::vector<std::vector<std::int32_t>>{part(s0, 0, 3), part(s1, 0, 3)});
    EXPECT_LT(relative_max_diff(logits_row(m.stream(), first, 1), ref1.data() + 2 * V, V), 1e-9);
    const Tensor next = u.step(std::vector<std::vector<std::int32_t>>{part(s0, 3, 4), part(s1, 3, 4)});
    EXPECT_LT(relative_max_diff(logits_row(m.stream(), next, 0), ref0.data() + 3 * V, V), 1e-9);
    EXPECT_LT(relative_max_diff(logits_row(m.stream(), next, 1), ref1.data() + 3 * V, V), 1e-9);
  }
}

TEST_F(ModelTest, EveryOpOfF32AndBf16RunsIsWithinTheContract) {
  const ProofInput in{kSequences, 3};
  for (const char* v : kVariants) {
    const Checkpoint ckpt(dir(v));
    const ProofRun oracle = run_oracle(ckpt, in);
    for (DType dt : {DType::f32, DType::bf16}) {
      SCOPED_TRACE(fmt::format("{} {}", v, dtype_name(dt)));
      const ProofRun run = run_scored(ckpt, "cpu", dt, in, oracle.generated);
      ASSERT_EQ(run.steps.size(), 4u);  // the prefill and 3 decode steps
      for (std::size_t s = 0; s < run.steps.size(); ++s)
        for (const LayerCheck& c : run.steps[s].checks) {
          EXPECT_TRUE(c.failure.empty()) << c.failure;
          EXPECT_LE(c.score, 1.0);
          EXPECT_FALSE(c.worst_stage.empty());
        }
      // The drift is visible and small: f32 close to the oracle, bf16 less so.
      const Drift d = logits_drift(run, oracle, 0);
      EXPECT_LT(d.score.nmse, dt == DType::f32 ? 1e-9 : 1e-2);
      EXPECT_GT(d.score.nmse, 0.0);
    }
  }
}

TEST_F(ModelTest, TheProofNamesTheFirstOpOverItsBound) {
  // A device whose gemm drops its last K tile of 16 (tests/conformance's
  // faulty backend): the first projection of layer 0 must be caught.
  conformance::testing::register_faulty_devices();
  const Checkpoint ckpt(dir("llama_untied_f32"));
  const ProofInput in{{{3, 17, 42, 5}}, 1};
  const ProofRun oracle = run_oracle(ckpt, in);
  const ProofRun bad = run_scored(ckpt, conformance::testing::fault_device_name(conformance::testing::Fault::skipped_tile),
                                  DType::f32, in, oracle.generated);
  const LayerCheck& embedding = bad.steps[0].checks[0];
  const LayerCheck& layer0 = bad.steps[0].checks[1];
  EXPECT_TRUE(embedding.failure.empty()) << embedding.failure;
  EXPECT_EQ(layer0.failure.rfind("qkv_proj:", 0), 0u) << layer0.failure;
  EXPECT_GT(layer0.score, 1.0);
  EXPECT_FALSE(print_report({&bad}, oracle, ckpt.config()));
  const ProofRun good = run_scored(ckpt, "cpu", DType::f32, in, oracle.generated);
  EXPECT_TRUE(print_report({&good}, oracle, ckpt.config()));
}

TEST_F(ModelTest, RecordingsRoundTripAndBelongToOneCheckpoint) {
  const Checkpoint a(dir("llama_untied_f32"));
  const Checkpoint b(dir("mistral_window_bf16"));
  const ProofInput in{{{3, 17, 42}}, 1};
  const ProofRun oracle = run_oracle(a, in);
  const ProofRun run = run_scored(a, "cpu", DType::f32, in, oracle.generated);
  const std::string rec = root_ + "/rec.safetensors";
  write_record(rec, run, a, in);
  const ProofRun back = load_record(rec, a, in);
  ASSERT_EQ(back.steps.size(), run.steps.size());
  for (std::size_t s = 0; s < run.steps.size(); ++s) {
    EXPECT_EQ(back.steps[s].logits, run.steps[s].logits);
    EXPECT_EQ(back.steps[s].hidden, run.steps[s].hidden);
    ASSERT_EQ(back.steps[s].checks.size(), run.steps[s].checks.size());
    for (std::size_t l = 0; l < run.steps[s].checks.size(); ++l) {
      EXPECT_EQ(back.steps[s].checks[l].score, run.steps[s].checks[l].score);
      EXPECT_EQ(back.steps[s].checks[l].worst_stage, run.steps[s].checks[l].worst_stage);
    }
  }
  EXPECT_EQ(back.device, "cpu");
  EXPECT_NE(error_of([&] { load_record(rec, b, in); }).find("another checkpoint"), std::string::npos);
  const ProofInput other{{{3, 17, 41}}, 1};
  EXPECT_NE(error_of([&] { load_record(rec, a, other); }).find("--tokens 3,17,42"), std::string::npos);
}

TEST_F(ModelTest, GreedyAndSampledGenerationAreReproducible) {
  const Checkpoint ckpt(dir("qwen2_bias_f16"));
  Model f32(ckpt, hal::device("cpu"), DType::f32);
  Model f64(ckpt, hal::device("cpu"), DType::f64);
  const std::vector<std::vector<std::int32_t>> prompt{{5, 6, 7}};
  const SamplingOptions sampled{0.8, 20, 42};
  const Generation a = generate(f32, prompt, 6, sampled), b = generate(f32, prompt, 6, sampled);
  EXPECT_EQ(a.tokens, b.tokens);
  // The f64 oracle's logits agree closely: the same seed picks the same tokens.
  EXPECT_EQ(generate(f64, prompt, 6, sampled).tokens, a.tokens);
  // Greedy follows the largest logit of each step.
  const Generation g = generate(f64, prompt, 1, {});
  const auto& l = g.last_logits;
  EXPECT_EQ(g.tokens[0][0], std::max_element(l.begin(), l.end()) - l.begin());
  // top_k = 1 is greedy whatever the temperature.
  EXPECT_EQ(generate(f64, prompt, 4, {1.5, 1, 7}).tokens, generate(f64, prompt, 4, {}).tokens);
}

TEST(SelectToken, FollowsTheDistributionAndTheSeed) {
  const std::vector<float> logits{0.0f, std::log(3.0f), -100.0f, std::log(6.0f)};  // p = 0.1, 0.3, 0, 0.6
  std::array<int, 4> counts{};
  for (int step = 0; step < 4000; ++step) ++counts[static_cast<std::size_t>(select_token(logits, {1.0, 0, 9}, 0, step))];
  EXPECT_EQ(counts[2], 0);
  EXPECT_NEAR(counts[0] / 4000.0, 0.1, 0.02);
  EXPECT_NEAR(counts[1] / 4000.0, 0.3, 0.03);
  EXPECT_NEAR(counts[3] / 4000.0, 0.6, 0.03);
  // top_k 2 never picks the third most likely.
  for (int step = 0; step < 500; ++step) EXPECT_NE(select_token(logits, {1.0, 2, 9}, 0, step), 0);
  // Sequences and seeds draw differently.
  int differ = 0;
  for (int step = 0; step < 100; ++step)
    differ += select_token(logits, {1.0, 0, 9}, 0, step) != select_token(logits, {1.0, 0, 10}, 0, step);
  EXPECT_GT(differ, 10);
  EXPECT_EQ(select_token(logits, {0.0, 0, 0}, 0, 0), 3);
}

TEST_F(ModelTest, SessionRefusesBadTokensBeforeRunning) {
  const Checkpoint ckpt(dir("llama_untied_f32"));
  Model m(ckpt, hal::device("cpu"), DType::f32);
  Session s(m, 1, 4);
  const std::vector<std::vector<std::int32_t>> bad_id{{1, 97}};
  EXPECT_NE(error_of([&] { s.step(bad_id); }).find("vocab_size"), std::string::npos);
  const std::vector<std::vector<std::int32_t>> too_long{{1, 2, 3, 4, 5}};
  EXPECT_NE(error_of([&] { s.step(too_long); }).find("max_len"), std::string::npos);
  const std::vector<std::vector<std::int32_t>> none{{}};
  EXPECT_NE(error_of([&] { s.step(none); }).find("at least one"), std::string::npos);
  EXPECT_EQ(s.length(0), 0);  // nothing ran
}

}  // namespace
