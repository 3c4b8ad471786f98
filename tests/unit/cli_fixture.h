// The fixture of the tests that run the `hal` tool as a separate process: a
// scratch folder per test, and run() giving the exit status and the output.
// The binary's path comes from HAL_CLI_PATH (set by tests/CMakeLists.txt when
// the tool is built); without it the tests skip.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace hal::test {

struct CliResult {
  int status;
  std::string output;  // stdout and stderr together
};

class CliFixture : public ::testing::Test {
 protected:
  // `prefix` names the scratch folders of one test file.
  explicit CliFixture(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
#ifndef HAL_CLI_PATH
    GTEST_SKIP() << "the hal tool is not built (HAL_BUILD_TOOLS=OFF)";
#else
    cli_ = HAL_CLI_PATH;
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
#endif
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  CliResult run(const std::string& args) const {
    const std::string out = path("cli_output.txt");
    const std::string cmd = "'" + cli_ + "' " + args + " > '" + out + "' 2>&1";
    const int raw = std::system(cmd.c_str());
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, text};
  }

  std::string prefix_;
  std::string cli_;
  std::filesystem::path dir_;
};

}  // namespace hal::test
