#pragma once
// The model tests' checkpoints: make_checkpoints.py runs once per test binary
// into a temporary folder (skipped, saying why, without Debian's
// python3-torch for /usr/bin/python3).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "hal/error.h"
#include "hal/io/npy.h"

namespace hal::model::testing {

namespace fs = std::filesystem;

inline const std::vector<std::vector<std::int32_t>> kSequences = {{3, 17, 42, 5, 8, 61, 23, 9, 11}, {7, 2, 80, 33, 4}};
inline const char* kVariants[] = {"llama_untied_f32", "llama3_tied_bf16", "qwen2_bias_f16", "mistral_window_bf16"};

class ModelTest : public ::testing::Test {
 protected:
  // ctest runs make_checkpoints.py once (the model.checkpoints fixture) and
  // names its folder in HAL_MODEL_CHECKPOINTS; run alone, the binary makes its own.
  static void SetUpTestSuite() {
    if (const char* env = std::getenv("HAL_MODEL_CHECKPOINTS"); env && *env) {
      root_ = env;
    } else {
      char templ[] = "/tmp/hal-model-test-XXXXXX";
      root_ = ::mkdtemp(templ);
      owned_ = true;
      const std::string cmd = fmt::format("/usr/bin/python3 {} {}", HAL_MODEL_SCRIPT, root_);
      if (std::system(cmd.c_str()) != 0) skip_reason_ = "make_checkpoints.py failed";
    }
    if (std::ifstream skip(root_ + "/SKIP"); skip) std::getline(skip, skip_reason_);
    else if (!fs::exists(root_ + "/DONE")) skip_reason_ = fmt::format("no checkpoints in '{}'", root_);
  }
  static void TearDownTestSuite() {
    if (owned_) fs::remove_all(root_);
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }
  static std::string dir(const std::string& variant) { return root_ + "/" + variant; }
  // A writable copy of a variant, to damage.
  static std::string copy_of(const std::string& variant, const std::string& name) {
    const std::string to = root_ + "/" + name;
    fs::remove_all(to);
    fs::copy(dir(variant), to);
    return to;
  }
  static std::vector<double> reference(const std::string& variant, int seq) {
    const io::HostArray a = io::read_npy(fmt::format("{}/ref_{}.npy", dir(variant), seq));
    std::vector<double> out(static_cast<std::size_t>(a.numel()));
    std::memcpy(out.data(), a.bytes.data(), out.size() * sizeof(double));
    return out;
  }
  static std::string root_, skip_reason_;
  static bool owned_;
};
inline std::string ModelTest::root_, ModelTest::skip_reason_;
inline bool ModelTest::owned_ = false;

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace hal::model::testing
