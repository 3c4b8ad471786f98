#pragma once
// Sets HAL_GPU_UNVERIFIED (backends/gpu/unverified.h) for one scope and
// restores what was there before: "1" turns the never-run GPU kernels on,
// nullptr unsets the variable (the verified kernels only). Shared by the unit
// tests of the support matrix and plans and by the CUDA device tests.
#include <cstdlib>
#include <optional>
#include <string>

#include "backends/gpu/unverified.h"

namespace hal::test {

class UnverifiedSwitch {
 public:
  explicit UnverifiedSwitch(const char* value) {
    if (const char* old = std::getenv(gpu::kUnverifiedKernelsEnv)) saved_ = old;
    if (value)
      setenv(gpu::kUnverifiedKernelsEnv, value, 1);
    else
      unsetenv(gpu::kUnverifiedKernelsEnv);
  }
  ~UnverifiedSwitch() {
    if (saved_)
      setenv(gpu::kUnverifiedKernelsEnv, saved_->c_str(), 1);
    else
      unsetenv(gpu::kUnverifiedKernelsEnv);
  }
  UnverifiedSwitch(const UnverifiedSwitch&) = delete;
  UnverifiedSwitch& operator=(const UnverifiedSwitch&) = delete;

 private:
  std::optional<std::string> saved_;
};

}  // namespace hal::test
