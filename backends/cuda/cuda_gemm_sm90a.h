#pragma once
// The sm_90a (Hopper wgmma + TMA) GEMM path of cuda_gemm.cpp.
#include <cstdint>

#include "hal/op.h"

namespace hal::ptx {
struct TmaDescriptorBytes;
}  // namespace hal::ptx
namespace hal::kernel_params {
struct GemmParams;
}  // namespace hal::kernel_params

namespace hal::cuda {

class CudaStream;

// Launches hal_gemm_sm90a_[wide_]<f16|bf16>[_bn] for `call` and returns true when the
// call fits the path (sm_90 device with sm_90a code, path "wgmma" enabled,
// f16/bf16, A contiguous along K, B along K or (path "wgmma_bn" enabled, N a
// multiple of 8) along N, 16-byte-aligned bases, row and batch strides, K a
// multiple of 8, cuTensorMapEncodeTiled available);
// returns false (nothing launched) otherwise. Needs gemm_sm90a_switched_on().
// `g`: the call's kernel parameters as run_gemm built them (sizes, C, bias,
// epilogue form); each batch's launch takes them with its own A, B and C.
bool try_gemm_sm90a(CudaStream& s, const GemmCall& call, const kernel_params::GemmParams& g);

// Whether the run-time switches allow the path ("wgmma" not in HAL_CUDA_DISABLE).
bool gemm_sm90a_switched_on();

// Number of kernels this process launched through the path, and through its
// wide (128 x 256) tile (for tests that must prove the fast path ran).
std::uint64_t gemm_sm90a_launch_count();
std::uint64_t gemm_sm90a_wide_launch_count();

// The path's TMA map encoding, exposed for the TMA wrapper test: a 16-bit
// (f16/bf16) matrix [rows, cols] with contiguous cols and `row_stride`
// elements between rows, box {64, box_rows}, 128B swizzle, zero fill out of
// bounds. False when the driver lacks cuTensorMapEncodeTiled or rejects it.
bool encode_gemm_sm90a_tile_map(ptx::TmaDescriptorBytes& out, const void* base, DType t, std::int64_t rows,
                                std::int64_t cols, std::int64_t row_stride, int box_rows);

}  // namespace hal::cuda
