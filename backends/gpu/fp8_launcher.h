#pragma once
// The host logic of the scaled-FP8 ops that both GPU backends share
// (ptx/kernels/fp8_quantize.cu, gemm_fp8_*.cu; hip/kernels/fp8_quantize.hip,
// gemm_fp8_mfma.hip): one launcher for quantize/dequantize, and the
// preparation of the fp8 GEMMs' parameters; which GEMM kernel runs is each
// vendor's (cuda_gemm_fp8.cpp, hip_fp8.cpp).
//
// gemm_fp8_grouped's offsets are data on the device: they are copied back
// and the stream SYNCHRONISED, then checked before anything is queued that
// writes c (an invalid offsets tensor is an invalid_argument naming it, as on
// the CPU), and the M tile count is summed from them.
//
// `Backend` names what differs between vendors (see cuda_fp8.cpp): Stream,
// LaunchShape, grid(work, stream) (a grid-stride launch of 256 threads per
// block over `work` items) and units(stream) (SMs / CUs).
// launch(stream, name, shape, params) is the backend's, found through Stream.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/gpu/kernel_args.h"
#include "hal/device.h"
#include "hal/op.h"
#include "kernel_params/fp8.h"

namespace hal::gpu {

// The kernels' block sizes (fp8_quantize.cu / .hip kThreads, kTensorScaleThreads).
inline constexpr unsigned kFp8QuantThreads = 256, kFp8TensorScaleThreads = 1024;

template <class Backend>
void run_quantize_fp8(typename Backend::Stream& s, const QuantizeFp8Call& call) {
  const kernel_params::Fp8QuantParams p = quantize_fp8_params(call);
  if (call.block == Fp8Block::tensor) {
    // Pass 1 (one block: the amax and the scale, written even for an empty
    // x, as on the CPU), pass 2 (the elements), in stream order.
    typename Backend::LaunchShape one;
    one.block[0] = kFp8TensorScaleThreads;
    launch(s, "fp8_tensor_scale", one, p);
    if (p.m * p.k > 0) launch(s, "fp8_quantize_tensor", Backend::grid(p.m * p.k, s), p);
    return;
  }
  const std::int64_t blocks = p.grid_rows * p.grid_cols;
  if (blocks == 0) return;
  typename Backend::LaunchShape shape;
  shape.block[0] = kFp8QuantThreads;
  shape.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(blocks, 8LL * std::max(1, Backend::units(s))));
  launch(s, "fp8_quantize_blocks", shape, p);
}

template <class Backend>
void run_dequantize_fp8(typename Backend::Stream& s, const DequantizeFp8Call& call) {
  const kernel_params::Fp8QuantParams p = dequantize_fp8_params(call);
  if (p.m * p.k == 0) return;
  launch(s, "fp8_dequantize", Backend::grid(p.m * p.k, s), p);
}

// gemm_fp8_grouped's parameters and the host copy of its offsets (G + 1),
// checked (see above); the launcher then sets m_tiles for its tile height
// with set_fp8_m_tiles(params, block_m, offsets.data(), backend).
struct GroupedFp8Launch {
  kernel_params::GemmFp8Params params;
  std::vector<std::int32_t> offsets;
};

template <class Stream>
GroupedFp8Launch grouped_fp8_params(Stream& s, const GemmFp8GroupedCall& call) {
  GroupedFp8Launch l{gemm_fp8_grouped_params(call), {}};
  const std::int64_t groups = call.b.shape[0], stride = call.offsets.strides[0];
  std::vector<std::int32_t> span(static_cast<std::size_t>(groups * stride + 1));
  s.copy(span.data(), call.offsets.first(), span.size() * sizeof(std::int32_t), CopyKind::device_to_host);
  s.synchronize();
  for (std::int64_t g = 0; g <= groups; ++g) l.offsets.push_back(span[static_cast<std::size_t>(g * stride)]);
  check_fp8_group_offsets(l.offsets.data(), groups, call.a.shape[0]);
  return l;
}

}  // namespace hal::gpu
