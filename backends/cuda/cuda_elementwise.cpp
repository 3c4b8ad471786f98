// Launchers of binary, unary and swiglu (ptx/kernels/elementwise.cu). The
// vectorised *_contig_<t> kernels run when every operand is contiguous with
// y's shape, 16-byte aligned (the arguments' vec16), and the dtype is
// f32/f16/bf16; otherwise the strided kernel handles broadcasting, views and
// fp8.
#include <algorithm>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/rows_variants.h"
#include "backends/gpu/unverified.h"
#include "ptx/kernels/elementwise_geometry.h"

namespace hal::cuda {

namespace {

// The *_contig_<t> kernel of y's dtype when the call qualifies, else nullptr.
const char* contig_kernel(const char* const names[3], DType t, std::int32_t vec16) {
  if (!vec16) return nullptr;
  switch (t) {
    case DType::f32: return names[0];
    case DType::f16: return names[1];
    case DType::bf16: return names[2];
    default: return nullptr;
  }
}

// The packed kernels' grid: a block per 256 16-byte chunks, at most the
// blocks that are resident at once (ptx/kernels/elementwise_geometry.h).
LaunchShape packed_shape(std::int64_t n, int sm_count) {
  LaunchShape s;
  s.block[0] = ptx::kPackedBlockThreads;
  const std::int64_t chunks = n / 8 + 1;
  const std::int64_t blocks = (chunks + ptx::kPackedBlockThreads - 1) / ptx::kPackedBlockThreads;
  const std::int64_t resident = std::int64_t{std::max(1, sm_count)} * ptx::kPackedBlocksPerSm;
  s.grid[0] = static_cast<unsigned>(std::min(blocks, resident));
  return s;
}

template <class Params>
void launch_elementwise(CudaStream& s, gpu::ElementwiseFamily family, const char* const contig_names[3],
                        const char* strided_name, DType t, const Params& p) {
  if (p.n == 0) return;
  // The 16-bit packed variant (issue 24), never run: only when asked for.
  // HAL_CUDA_DISABLE=elementwise_packed turns it off again (A/B runs).
  const bool packed_on = gpu::unverified_kernels_enabled() && path_enabled("elementwise_packed");
  if (const char* packed = packed_on ? gpu::cuda_elementwise_packed_kernel(family, t, p.vec16) : nullptr) {
    launch(s, packed, packed_shape(p.n, stream_caps(s).sm_count), p);
    return;
  }
  if (const char* fast = contig_kernel(contig_names, t, p.vec16)) {
    launch(s, fast, grid_stride_shape(p.n / 4 + 1, stream_caps(s).sm_count), p);
    return;
  }
  launch(s, strided_name, grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

}  // namespace

void run_binary(CudaStream& s, const BinaryCall& call) {
  static const char* const names[3] = {"binary_contig_f32", "binary_contig_f16", "binary_contig_bf16"};
  launch_elementwise(s, gpu::ElementwiseFamily::binary, names, "binary_strided", call.y.dtype,
                     gpu::binary_params(call));
}

void run_unary(CudaStream& s, const UnaryCall& call) {
  static const char* const names[3] = {"unary_contig_f32", "unary_contig_f16", "unary_contig_bf16"};
  launch_elementwise(s, gpu::ElementwiseFamily::unary, names, "unary_strided", call.y.dtype, gpu::unary_params(call));
}

void run_swiglu(CudaStream& s, const SwigluCall& call) {
  static const char* const names[3] = {"swiglu_contig_f32", "swiglu_contig_f16", "swiglu_contig_bf16"};
  launch_elementwise(s, gpu::ElementwiseFamily::swiglu, names, "swiglu_strided", call.y.dtype,
                     gpu::swiglu_params(call));
}

}  // namespace hal::cuda
