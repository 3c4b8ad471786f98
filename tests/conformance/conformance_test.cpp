// The suite's own tests: the scorer's rules, the backend-entry mechanics
// (skip, unsupported, expected failure), record/compare, and the proof that
// every planted fault of the faulty backend is reported as a failure naming
// the case.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "hal/error.h"

#include "conformance/cli.h"
#include "conformance/contract.h"
#include "conformance/registry.h"
#include "hal/io/safetensors.h"
#include "conformance/score.h"
#include "faulty_backend.h"

namespace hal::conformance {

using io::NamedTensor;
using io::read_safetensors;
using io::SafetensorsFile;
using io::write_safetensors;
namespace {

using testing::Fault;
using testing::fault_device_name;

const Case& named(const std::string& name) {
  const Case* c = find_case(name);
  if (!c) throw std::runtime_error("no case " + name);
  return *c;
}

std::vector<std::uint8_t> f32_bytes(std::initializer_list<float> v) {
  std::vector<std::uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), std::data(v), b.size());
  return b;
}

class Conformance : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { testing::register_faulty_devices(); }
};

// --- the scorer ------------------------------------------------------------

TEST(Score, PassesWithinBoundAndFailsBeyond) {
  const std::vector<double> ref = {1.0, 2.0}, bound = {0.5, 0.25};
  EXPECT_TRUE(score_output(f32_bytes({1.25f, 2.0f}), DType::f32, ref, bound, false).passed());
  const Score s = score_output(f32_bytes({1.0f, 2.5f}), DType::f32, ref, bound, false);
  EXPECT_FALSE(s.passed());
  EXPECT_DOUBLE_EQ(s.score, 2.0);  // |2.5 - 2| / 0.25
  EXPECT_NE(s.failure.find("element 1"), std::string::npos);
  // The comparison bound doubles every element's bound.
  EXPECT_TRUE(score_output(f32_bytes({1.0f, 2.5f}), DType::f32, ref, bound, false, 2.0).passed());
}

TEST(Score, SpecialValuesMustMatch) {
  const std::vector<double> zero_bound = {0.0};
  EXPECT_FALSE(score_output(f32_bytes({0.0f}), DType::f32, std::vector<double>{NAN}, zero_bound, false).passed());
  EXPECT_FALSE(score_output(f32_bytes({NAN}), DType::f32, std::vector<double>{1.0}, std::vector<double>{1e9}, false).passed());
  EXPECT_TRUE(score_output(f32_bytes({NAN}), DType::f32, std::vector<double>{NAN}, zero_bound, false).passed());
  EXPECT_FALSE(score_output(f32_bytes({-INFINITY}), DType::f32, std::vector<double>{INFINITY}, zero_bound, false).passed());
  EXPECT_FALSE(score_output(f32_bytes({INFINITY}), DType::f32, std::vector<double>{1e30}, std::vector<double>{1e38}, false).passed());
  EXPECT_FALSE(score_output(f32_bytes({0.0f}), DType::f32, std::vector<double>{-0.0}, zero_bound, true).passed());
  EXPECT_TRUE(score_output(f32_bytes({0.0f}), DType::f32, std::vector<double>{-0.0}, zero_bound, false).passed());
  // A reference beyond f32's range must come out as +inf, exactly.
  EXPECT_TRUE(score_output(f32_bytes({INFINITY}), DType::f32, std::vector<double>{1e39}, std::vector<double>{1e30}, false).passed());
}

TEST(Score, ReportsUlpsAndNmse) {
  const float one_up = std::nextafter(1.0f, 2.0f);
  const Score s = score_output(f32_bytes({one_up, 3.0f}), DType::f32, std::vector<double>{1.0, 3.0},
                               std::vector<double>{1.0, 1.0}, false);
  EXPECT_EQ(s.max_ulp, 1);
  const double d = double(one_up) - 1.0;
  EXPECT_DOUBLE_EQ(s.nmse, d * d / 10.0);
}

TEST(Contract, GammaAndExactOps) {
  EXPECT_DOUBLE_EQ(contract::gamma(1), 0x1p-24 / (1 - 0x1p-24));
  EXPECT_GT(contract::gamma(16384), 16384 * 0x1p-24);
  EXPECT_EQ(contract::output_roundoff(DType::bf16), 0x1p-8);
  EXPECT_TRUE(contract::checks_zero_sign(CopyCall{}));
  EXPECT_FALSE(contract::checks_zero_sign(GemmCall{}));
}

TEST(Registry, GlobAndCatalogue) {
  EXPECT_TRUE(glob_match("softmax/*/causal_*", "softmax/bf16/causal_127x257"));
  EXPECT_FALSE(glob_match("softmax/*/causal_*", "log_softmax/bf16/causal_127x257"));
  EXPECT_TRUE(glob_match("cast/f32->f8e?m?/*", "cast/f32->f8e4m3/vec_1021_scale"));
  // Every v1 op is covered, in each of f32, f16, bf16.
  for (const char* op : {"gemm", "add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "exp", "log",
                         "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "swiglu", "sum",
                         "mean", "max", "min", "argmax", "softmax", "log_softmax", "layernorm", "rmsnorm", "rope",
                         "cast", "embedding", "attention", "copy", "fill_random"})
    for (const char* dt : {"f32", "f16", "bf16"}) EXPECT_FALSE(select_cases(op, dt).empty()) << op << " " << dt;
  // The scaled-FP8 ops, in each fp8 format of both families.
  for (const char* op : {"quantize_fp8", "dequantize_fp8", "gemm_fp8", "gemm_fp8_grouped"})
    for (const char* dt : {"f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz"})
      EXPECT_FALSE(select_cases(op, dt).empty()) << op << " " << dt;
  std::set<std::string> names;
  for (const Case& c : all_cases()) EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
}

TEST(Registry, TrainingOpsAreCovered) {
  for (const char* op : {"softmax_backward", "log_softmax_backward", "layernorm_backward", "rmsnorm_backward",
                         "gelu_backward", "gelu_tanh_backward", "silu_backward", "relu_backward", "sigmoid_backward",
                         "tanh_backward", "exp_backward", "swiglu_backward", "cross_entropy", "embedding_backward",
                         "adamw_step", "global_norm", "rope_backward", "attention_backward"})
    for (const char* dt : {"f32", "f16", "bf16"}) EXPECT_FALSE(select_cases(op, dt).empty()) << op << " " << dt;
}

// --- backend entries --------------------------------------------------------

TEST_F(Conformance, AbsentDeviceSkipsWithTheBackendsReason) {
  const CaseResult r = run_case(named("mul/f32/prime_1021"), "cuda:7");
  EXPECT_EQ(r.status, Status::skipped);
  EXPECT_FALSE(r.reason.empty());
}

TEST_F(Conformance, DeclinedCaseIsAFailureUnlessListedUnsupported) {
  register_backend_entry({"faulty-declines", "faulty:declines", {}, {{"tanh/*", "no tanh here"}}, {}});
  const CaseResult listed = run_case(named("tanh/f32/vec_1021"), fault_device_name(Fault::declines));
  EXPECT_EQ(listed.status, Status::unsupported);
  EXPECT_EQ(listed.reason, "no tanh here");
  const CaseResult silent = run_case(named("exp/f32/vec_1021"), fault_device_name(Fault::declines));
  EXPECT_EQ(silent.status, Status::failed);
  EXPECT_NE(silent.reason.find("not listed as unsupported"), std::string::npos);
}

TEST_F(Conformance, ExpectedFailureThatPassesIsReported) {
  register_backend_entry({"faulty-none", "faulty:none", {}, {}, {{"mul/f32/prime_1021", "tracked bug"}}});
  const CaseResult r = run_case(named("mul/f32/prime_1021"), fault_device_name(Fault::none));
  EXPECT_EQ(r.status, Status::failed);
  EXPECT_NE(r.reason.find("unexpected pass"), std::string::npos);
}

// --- the faulty backend: each planted bug must fail its case ----------------

struct FaultCase {
  Fault fault;
  const char* case_name;
  const char* message;  // a phrase the failure must contain
};

class Faults : public Conformance, public ::testing::WithParamInterface<FaultCase> {};

TEST_P(Faults, AreCaughtAndNameTheCase) {
  const FaultCase& f = GetParam();
  const Case& c = named(f.case_name);
  // Control: the same case passes on the CPU device itself.
  const CaseResult good = run_case(c, "cpu");
  ASSERT_EQ(good.status, Status::passed) << good.reason;
  const CaseResult bad = run_case(c, fault_device_name(f.fault));
  EXPECT_EQ(bad.status, Status::failed) << bad.reason;
  EXPECT_EQ(bad.name, f.case_name);
  EXPECT_NE(bad.reason.find(f.message), std::string::npos) << bad.reason;
  // (A model case's score is its worst stage's; the faulty backend plants in
  // every stage, accumulated outputs from their already-updated contents.)
  if (f.fault == Fault::beyond_bound && !c.is_model) {
    EXPECT_GT(bad.score.score, 1.0);
    EXPECT_LT(bad.score.score, 2.0);  // just beyond: 1.5x the bound
  }
}

INSTANTIATE_TEST_SUITE_P(
    Planted, Faults,
    ::testing::Values(FaultCase{Fault::beyond_bound, "gemm/f32/nn_127x257x61", "> bound"},
                      FaultCase{Fault::beyond_bound, "softmax/bf16/causal_127x257", "> bound"},
                      FaultCase{Fault::skipped_tile, "gemm/f32/nn_127x257x61", "> bound"},
                      FaultCase{Fault::skipped_tile, "gemm/bf16/batched_nt_2x5x7x1021", "> bound"},
                      FaultCase{Fault::write_past_end, "add/f32/bcast_31x1_45", "past the end"},
                      FaultCase{Fault::write_past_end, "sum/f16/last_17x257", "past the end"},
                      FaultCase{Fault::dropped_nan, "add/f32/special_4x8", "NaN expected"},
                      FaultCase{Fault::dropped_nan, "exp/bf16/special_2x8", "NaN expected"},
                      // Zeros for the rows of NaN or of -inf scores: the CUDA general attention's old answer.
                      FaultCase{Fault::dropped_nan, "attention/f32/nonfinite_scores_1x1x80_h4_d16", "NaN expected"},
                      FaultCase{Fault::dropped_nan, "attention/bf16/nonfinite_scores_1x9x80_h4_d16", "NaN expected"},
                      FaultCase{Fault::nondeterministic, "softmax/f32/rows_7x1021", "not deterministic"},
                      FaultCase{Fault::wrong_transpose, "gemm/f32/nt_33x65x127", "> bound"}),
    [](const ::testing::TestParamInfo<FaultCase>& info) {
      std::string n = fault_device_name(info.param.fault).substr(7) + "_" + info.param.case_name;
      for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

// The training ops' cases catch the same faults (on outputs that are written,
// not accumulated: the planted value is computed from the call's inputs).
INSTANTIATE_TEST_SUITE_P(
    PlantedTraining, Faults,
    ::testing::Values(FaultCase{Fault::beyond_bound, "layernorm_backward/f32/rows_7x1021", "> bound"},
                      FaultCase{Fault::beyond_bound, "cross_entropy/bf16/mean_7x1021", "> bound"},
                      FaultCase{Fault::beyond_bound, "gelu_tanh_backward/bf16/n_4099", "> bound"},
                      FaultCase{Fault::write_past_end, "swiglu_backward/f16/n_4099", "past the end"},
                      FaultCase{Fault::dropped_nan, "softmax_backward/f32/nan_dy_3x16", "NaN expected"},
                      FaultCase{Fault::nondeterministic, "rmsnorm_backward/f32/many_rows_300x17", "not deterministic"},
                      FaultCase{Fault::beyond_bound, "attention_backward/bf16/gqa_causal_1x37x131_h6kv2_d40", "> bound"},
                      FaultCase{Fault::dropped_nan, "attention_backward/f32/nan_dy_1x5x9_h2_d16", "NaN expected"},
                      // The model-level training step: the first stage past its bound is named.
                      FaultCase{Fault::beyond_bound,
                                "model_training/f32/llama_layer_step_s33_h256_q4_kv2_d64_ffn512_v256_adamw",
                                "stage l0.attn_norm output y"},
                      FaultCase{Fault::skipped_tile,
                                "model_training/bf16/llama_layer_step_s33_h256_q4_kv2_d64_ffn512_v256_adamw",
                                "stage l0.q_proj output c"}),
    [](const ::testing::TestParamInfo<FaultCase>& info) {
      std::string n = fault_device_name(info.param.fault).substr(7) + "_" + info.param.case_name;
      for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

// --- record / compare -------------------------------------------------------

std::vector<const Case*> record_cases() {
  return {&named("gemm/f32/nn_127x257x61"), &named("gemm/bf16/nt_33x65x127"), &named("softmax/f16/causal_127x257"),
          &named("argmax/bf16/last_17x257"), &named("cast/f32->f8e4m3/vec_1021_scale"), &named("add/f32/special_4x8")};
}

TEST_F(Conformance, RecordThenCompareOnTheSameDevicePasses) {
  const std::string path = (std::filesystem::temp_directory_path() / "hal_conformance_record_test.safetensors").string();
  const auto cases = record_cases();
  const auto recorded = run_cases(cases, "cpu", {});
  for (const CaseResult& r : recorded) ASSERT_EQ(r.status, Status::passed) << r.name << ": " << r.reason;
  write_record(path, "cpu", recorded);

  // The file is safetensors: 8-byte little-endian header length, JSON header.
  const SafetensorsFile file = read_safetensors(path);
  EXPECT_EQ(file.metadata.at("device"), "cpu");
  ASSERT_EQ(file.tensors.size(), cases.size());
  EXPECT_EQ(file.tensors[1].dtype, DType::bf16);
  EXPECT_EQ(file.tensors[3].dtype, DType::i64);

  RunOptions compare;
  std::string from;
  compare.recorded = load_record(path, &from);
  EXPECT_EQ(from, "cpu");
  for (const CaseResult& r : run_cases(cases, "cpu", compare)) EXPECT_EQ(r.status, Status::passed) << r.name << ": " << r.reason;
  std::remove(path.c_str());
}

TEST_F(Conformance, CompareAgainstATamperedRecordFails) {
  const std::string path = (std::filesystem::temp_directory_path() / "hal_conformance_tamper_test.safetensors").string();
  const auto cases = record_cases();
  write_record(path, "cpu", run_cases(cases, "cpu", {}));
  SafetensorsFile file = read_safetensors(path);
  // Move one gemm element by 1% and change one argmax index.
  NamedTensor& g = file.tensors[0];
  store_element(g.bytes.data(), g.dtype, 5, load_element(g.bytes.data(), g.dtype, 5) * 1.01 + 0.01);
  NamedTensor& a = file.tensors[3];
  store_element(a.bytes.data(), a.dtype, 0, load_element(a.bytes.data(), a.dtype, 0) + 1);
  write_safetensors(path, file);

  RunOptions compare;
  compare.recorded = load_record(path);
  const auto results = run_cases(cases, "cpu", compare);
  EXPECT_EQ(results[0].status, Status::failed) << results[0].reason;
  EXPECT_NE(results[0].reason.find("element 5"), std::string::npos) << results[0].reason;
  EXPECT_EQ(results[3].status, Status::failed) << results[3].reason;
  EXPECT_EQ(results[1].status, Status::passed) << results[1].reason;  // untouched
  std::remove(path.c_str());
}

TEST(Safetensors, MalformedFileIsAnIoError) {
  const std::string path = (std::filesystem::temp_directory_path() / "hal_conformance_bad.safetensors").string();
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const char bad[] = "\x40\x00\x00\x00\x00\x00\x00\x00{";
    std::fwrite(bad, 1, sizeof bad - 1, f);
    std::fclose(f);
  }
  try {
    read_safetensors(path);
    FAIL() << "expected an io_error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io_error);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hal::conformance
