#pragma once
// Parameters of the wrapper test kernels: the one-warp sm_80 ones
// (wrapper_tests.cu, tests/cuda/ptx_wrappers_test.cpp) and the sm_90 / sm_90a
// ones (wrapper_tests_sm90.cu, tests/cuda/ptx_wrappers_sm90_test.cpp).
// Plain host/device header.
#include <stdint.h>

#include "ptx/kernels/gemm_sm90a_params.h"  // TmaDescriptorBytes

namespace hal::ptx {

struct WrapperTestParams {
  const void* in = nullptr;
  void* out = nullptr;
  int32_t variant = 0;  // mma: 0 f16, 1 bf16; ldmatrix: 0 plain, 1 .trans
};

// Parameters of the sm_90 / sm_90a wrapper test kernels (wrapper_tests_sm90.cu),
// used by tests/cuda/ptx_wrappers_sm90_test.cpp. Passed as a
// `const __grid_constant__` parameter so that `map` stays in parameter space
// (where TMA reads it, as in the GEMM).
struct WrapperTestSm90Params {
  TmaDescriptorBytes map{};  // TMA test: the global matrix (encoded like the GEMM's maps)
  const void* in = nullptr;
  void* out = nullptr;
  // Thread 0 writes kWrapperTestRan when the kernel body was compiled for
  // this device's architecture, kWrapperTestCompiledOut when the device runs
  // a build without it (e.g. the compute_80 PTX JIT-compiled elsewhere).
  uint32_t* status = nullptr;
  int32_t variant = 0;                    // stmatrix: 0 plain, 1 .trans; elect: number of masks in `in`
  int32_t tile_col[3] = {0, 0, 0};        // TMA: box origin (elements, innermost) of load i
  int32_t tile_row[3] = {0, 0, 0};        // TMA: box origin (rows) of load i
};

inline constexpr uint32_t kWrapperTestRan = 1;
inline constexpr uint32_t kWrapperTestCompiledOut = 2;

// Shapes shared by the kernels and the host checks.
struct WrapperTestSm90Shapes {
  // wgmma: D[64][128] = A[64][64] B[64][128], four k16 steps.
  static constexpr int kWgmmaM = 64, kWgmmaN = 128, kWgmmaK = 64;
  // TMA: box {64 elements, 32 rows} of 16-bit elements, 128B swizzle, three loads.
  static constexpr int kTmaBoxCols = 64, kTmaBoxRows = 32, kTmaLoads = 3;
  static constexpr int kTmaBoxBytes = kTmaBoxCols * kTmaBoxRows * 2;
  // mbarrier: arrivals per phase (threads 0..kMbarArrivals-1 of 128), phases.
  static constexpr int kMbarThreads = 128, kMbarArrivals = 96, kMbarPhases = 3;
  // setmaxnreg: producer warpgroup + two consumer warpgroups, as the GEMM.
  static constexpr int kSetmaxnregThreads = 384, kSetmaxnregDec = 40, kSetmaxnregInc = 232;
  static constexpr int kSetmaxnregInputs = 512, kSetmaxnregAcc = 64, kSetmaxnregSteps = 32;
};

}  // namespace hal::ptx
