#pragma once
// Launch geometry of the training kernels (kernel_params/training.h), the
// same for CUDA and HIP: 256-thread blocks / workgroups everywhere. Host-only
// and vendor-free, so it is unit-tested on the CPU
// (tests/unit/gpu_training_args_test.cpp). Every kernel that takes a 1-D
// grid loops grid-stride, so a capped grid is still correct; the row-block
// axis of the norm partials is not capped (it is at most 256, the split of
// kernel_params::norm_backward_blocks).
#include <algorithm>
#include <cstdint>

namespace hal::gpu {

inline constexpr int kTrainingBlockThreads = 256;
// Blocks of a grid-stride launch over rows or chunks (one block each).
inline constexpr std::int64_t kTrainingMaxGridBlocks = 65535;

struct TrainingGrid {
  std::int64_t x = 0, y = 1;  // x == 0: nothing to launch
};

// One block per row (softmax_backward, the norm rows kernel) or per chunk
// (global_norm pass 1), grid-strided past kTrainingMaxGridBlocks.
inline TrainingGrid one_block_per_item(std::int64_t items) {
  return {std::min(items, kTrainingMaxGridBlocks), 1};
}

// The norm partials: column tiles of 256 threads by row blocks. x may exceed
// a vendor's grid limit only for rows longer than 2^31 * 256 elements, which
// the launchers refuse.
inline TrainingGrid norm_partials_grid(std::int64_t cols, std::int64_t blocks) {
  if (cols == 0 || blocks == 0) return {0, 1};
  return {(cols + kTrainingBlockThreads - 1) / kTrainingBlockThreads, blocks};
}

// The norm finish kernel: a thread per column, grid-stride.
inline TrainingGrid norm_finish_grid(std::int64_t cols) {
  return {std::min((cols + kTrainingBlockThreads - 1) / kTrainingBlockThreads, kTrainingMaxGridBlocks), 1};
}

}  // namespace hal::gpu
