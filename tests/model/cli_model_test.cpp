// `hal model` end to end: info, run (ids and text, --logits), compare with
// --against and with --record / --compare, bench, and the usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>

#include "hal/io/json_writer.h"
#include "hal/io/npy.h"
#include "model/checkpoint.h"
#include "tests/model/model_fixture.h"

namespace hal::model::testing {
namespace {

struct CliResult {
  int status;
  std::string output;
};

class ModelCliTest : public ModelTest {
 protected:
  void SetUp() override {
    ModelTest::SetUp();
#ifndef HAL_CLI_PATH
    GTEST_SKIP() << "the hal tool is not built (HAL_BUILD_TOOLS=OFF)";
#endif
  }
  static CliResult hal(const std::string& args) {
#ifdef HAL_CLI_PATH
    const std::string out = root_ + "/cli_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
    const int raw = std::system(("'" HAL_CLI_PATH "' model " + args + " > '" + out + "' 2>&1").c_str());
    std::ifstream in(out);
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1,
            std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
#else
    (void)args;
    return {-1, ""};
#endif
  }
};

void expect_contains(const CliResult& r, const std::string& part) {
  EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in:\n" << r.output;
}

TEST_F(ModelCliTest, InfoRunAndLogits) {
  const CliResult info = hal("info " + dir("llama3_tied_bf16"));
  EXPECT_EQ(info.status, 0) << info.output;
  expect_contains(info, "LlamaForCausalLM");
  expect_contains(info, "head_dim 24");
  expect_contains(info, "rope_scaling llama3");
  expect_contains(info, "tokenisation is the user's job");

  const std::string npy = root_ + "/cli_logits.npy";
  const CliResult run = hal("run " + dir("qwen2_bias_f16") + " --tokens 3,17,42/7,2 --steps 1 --dtype f32 --logits " + npy);
  ASSERT_EQ(run.status, 0) << run.output;
  const io::HostArray l = io::read_npy(npy);
  ASSERT_EQ(l.dtype, DType::f32);
  ASSERT_EQ(l.shape, (Shape{2, 89}));
  // With one step, each printed token is the argmax of its logits row.
  const auto* v = reinterpret_cast<const float*>(l.bytes.data());
  for (int s = 0; s < 2; ++s) {
    const long best = std::max_element(v + s * 89, v + (s + 1) * 89) - (v + s * 89);
    expect_contains(run, fmt::format("sequence {}: {}\n", s, best));
  }
}

TEST_F(ModelCliTest, Fp8CheckpointInfoRunAndCompare) {
  const std::string d = dir("llama_fp8_e4m3");
  const Checkpoint ckpt(d);
  const CliResult info = hal("info " + d);
  EXPECT_EQ(info.status, 0) << info.output;
  expect_contains(info, fmt::format("fp8 weights: 15 F8_E4M3 linear weights with 128x128 block scales ({} stored bytes",
                                    ckpt.fp8_bytes()));
  expect_contains(info, "lm_head.weight");
  expect_contains(info, "f8e4m3 ");
  expect_contains(hal("info " + dir("llama_untied_f32")), "fp8 weights: none");
  // Runs in the checkpoint's dtype (f32, that of its embedding) and in bf16.
  for (const char* dt : {"", " --dtype bf16"}) {
    const CliResult run = hal("run " + d + " --tokens 3,17,42/7,2 --steps 2" + dt);
    EXPECT_EQ(run.status, 0) << run.output;
    expect_contains(run, "sequence 1: ");
  }
  // The oracle of an fp8 model is the f64 run of its dequantised weights (f64
  // on the cpu runs it too); gemm_fp8 makes no f16.
  EXPECT_EQ(hal("run " + d + " --tokens 3,17,42 --steps 1 --dtype f64").status, 0);
  const CliResult f16 = hal("compare " + d + " --device cpu --dtype f16 --tokens 1,2,3");
  EXPECT_EQ(f16.status, 1);
  expect_contains(f16, "gemm_fp8");
}

TEST_F(ModelCliTest, Fp8CompareAgainstAndAcrossMachines) {
  const std::string d = dir("llama_fp8_e4m3");
  const std::string rec = root_ + "/cli_fp8_record.safetensors";
  const std::string common = d + " --tokens 3,17,42/7,2 --steps 2";
  const CliResult both = hal("compare " + common + " --device cpu --against cpu --dtype bf16 --record " + rec);
  ASSERT_EQ(both.status, 0) << both.output;
  expect_contains(both, "15 fp8 weights dequantised exactly");
  expect_contains(both, "run A: cpu in bf16");
  expect_contains(both, "layer 1");
  expect_contains(both, "first layer over its bound: none");
  expect_contains(both, "with the oracle");
  expect_contains(both, "decode step 2:");
  expect_contains(both, "A-B: top-1 2/2, largest logit difference 0");  // the same device: the same bits
  expect_contains(both, "every op of every run is within the contract");
  // Another run (here f32, the checkpoint's dtype) against the recorded bf16 one.
  const CliResult later = hal("compare " + common + " --device cpu --compare " + rec);
  ASSERT_EQ(later.status, 0) << later.output;
  expect_contains(later, "recorded run from");
  expect_contains(later, "run B: cpu in f32");
  const CliResult wrong = hal("compare " + dir("llama_fp8_e4m3_dequant_bf16") + " --tokens 3,17,42/7,2 --steps 2 --compare " + rec);
  EXPECT_EQ(wrong.status, 1);
  expect_contains(wrong, "another checkpoint");
}

TEST_F(ModelCliTest, PromptNeedsATokenizerAndUsesOne) {
  const CliResult none = hal("run " + dir("llama_untied_f32") + " --prompt 'the cat'");
  EXPECT_EQ(none.status, 2);
  expect_contains(none, "has no tokenizer.json");
  // A GPT-2 style tokenizer whose 97 ids fit the model's vocabulary: the
  // bytes of ' ' and a-z, merges, and filler tokens.
  const std::string d = copy_of("llama_untied_f32", "with_tokenizer");
  std::string vocab = io::json_string("\xC4\xA0") + ":0";  // 'Ġ', the byte ' '
  for (char c = 'a'; c <= 'z'; ++c) vocab += "," + io::json_string(std::string(1, c)) + ":" + std::to_string(c - 'a' + 1);
  vocab += "," + io::json_string("th") + ":27," + io::json_string("\xC4\xA0" "c") + ":28";
  for (int i = 29; i < 97; ++i) vocab += "," + io::json_string(fmt::format("x{}", i)) + ":" + std::to_string(i);
  std::ofstream(d + "/tokenizer.json")
      << R"({"added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},)"
      << R"("post_processor":null,"decoder":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{)" << vocab
      << R"(},"merges":["t h", ")" << "\xC4\xA0" << R"( c"]}})";
  const CliResult text = hal("run " + d + " --prompt 'the cat' --steps 3");
  ASSERT_EQ(text.status, 0) << text.output;
  expect_contains(text, "text 0: ");
  const CliResult info = hal("info " + d);
  expect_contains(info, "byte-level BPE, GPT-2 pre-tokenizer, 97 tokens, 2 merges");
}

TEST_F(ModelCliTest, CompareAgainstAndAcrossMachines) {
  const std::string rec = root_ + "/cli_record.safetensors";
  const std::string common = dir("llama3_tied_bf16") + " --tokens 3,17,42/7,2 --steps 2";
  const CliResult both = hal("compare " + common + " --device cpu --against cpu --record " + rec);
  ASSERT_EQ(both.status, 0) << both.output;
  expect_contains(both, "layer 2");
  expect_contains(both, "first layer over its bound: none");
  expect_contains(both, "decode step 2:");
  expect_contains(both, "A-B: top-1 2/2, largest logit difference 0");  // the same device: the same bits
  const CliResult later = hal("compare " + common + " --device cpu --dtype f32 --compare " + rec);
  ASSERT_EQ(later.status, 0) << later.output;
  expect_contains(later, "recorded");
  const CliResult wrong = hal("compare " + dir("llama_untied_f32") + " --tokens 3,17,42/7,2 --steps 2 --compare " + rec);
  EXPECT_EQ(wrong.status, 1);
  expect_contains(wrong, "another checkpoint");
}

TEST_F(ModelCliTest, BenchAndUsageErrors) {
  const CliResult b = hal("bench " + dir("mistral_window_bf16") + " --prompt-tokens 8 --decode-steps 4 --rounds 1");
  ASSERT_EQ(b.status, 0) << b.output;
  expect_contains(b, "decode 4 steps: median");
  expect_contains(b, "read per decode step");
  expect_contains(b, "% of the copy ceiling (range");
  const CliResult unfused = hal("bench " + dir("qwen2_bias_f16") + " --prompt-tokens 4 --decode-steps 2 --rounds 1 --unfused");
  ASSERT_EQ(unfused.status, 0) << unfused.output;
  expect_contains(unfused, "projections unfused");
  const CliResult row_major = hal("bench " + dir("mistral_window_bf16") + " --prompt-tokens 4 --decode-steps 2 --rounds 1 --column-blocks 1");
  ASSERT_EQ(row_major.status, 0) << row_major.output;
  expect_contains(row_major, "linears [in, out]");
  EXPECT_EQ(hal("run " + dir("llama_untied_f32") + " --tokens 1 --column-blocks 2").status, 2);  // bench only
  EXPECT_EQ(hal("run " + dir("llama_untied_f32") + " --tokens 1 --unfused").status, 2);  // bench only
  EXPECT_EQ(hal("run " + dir("llama_untied_f32")).status, 2);                       // no tokens
  EXPECT_EQ(hal("run " + dir("llama_untied_f32") + " --tokens 1,,2").status, 2);    // an empty id
  EXPECT_EQ(hal("run " + dir("llama_untied_f32") + " --tokens 1 --bogus").status, 2);
  EXPECT_EQ(hal("frobnicate " + dir("llama_untied_f32")).status, 2);
  const CliResult oov = hal("run " + dir("llama_untied_f32") + " --tokens 1,500");
  EXPECT_EQ(oov.status, 1);
  expect_contains(oov, "vocab_size");
}

}  // namespace
}  // namespace hal::model::testing
