#pragma once
// The kernels' arguments (kernel_params/) from validated op calls, one
// function per kernel family, shared by the CUDA and HIP launchers so the two
// pack every call the same way. Host-only, no vendor call: unit-tested
// without a GPU (tests/unit/gpu_kernel_args_test.cpp).
//
// Each function fills every field that describes the call (pointers, sizes,
// strides, dtypes, attributes) and the layout facts a kernel may exploit
// (contiguous, 16-byte alignment, vector widths). What only one vendor's
// launcher decides -- which kernel runs, the launch geometry, the CUDA row
// group (RowsLayout::cuda_threads_per_row), the CUDA tensor-core operand
// layout (GemmParams::a_k_major / b_k_major) -- the launcher sets on top.
#include <cstdint>

#include "hal/op.h"
#include "hal/tensor.h"
#include "kernel_params/attention.h"
#include "kernel_params/attention_backward.h"
#include "kernel_params/cast_copy.h"
#include "kernel_params/elementwise.h"
#include "kernel_params/fp8.h"
#include "kernel_params/gemm.h"
#include "kernel_params/random.h"
#include "kernel_params/rows.h"
#include "kernel_params/strided.h"
#include "kernel_params/training.h"

namespace hal::gpu {

kernel_params::KernelShape kernel_shape(const Shape& s);
kernel_params::KernelStrides kernel_strides(const Strides& s);
// The kernels' element-type code (ptx/element.cuh, hip/element.h ElemType mirror DType's numbering).
inline std::int32_t elem_type(DType t) { return static_cast<std::int32_t>(t); }
inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// Elementwise (kernel_params/elementwise.h): a and b broadcast to y's shape;
// contiguous and vec16 from the views.
kernel_params::BinaryParams binary_params(const BinaryCall& call);
kernel_params::UnaryParams unary_params(const UnaryCall& call);
kernel_params::SwigluParams swiglu_params(const SwigluCall& call);

kernel_params::CastParams cast_params(const CastCall& call);
kernel_params::CopyParams copy_params(const CopyCall& call);
kernel_params::FillRandomParams fill_random_params(const FillRandomCall& call);

// Rows over every axis of x but `axis`, which becomes the row (cols) axis.
// y_outer_strides are y's strides over the same outer axes (a keepdim axis of
// size 1 already dropped); the vec16 flags are left 0. Ranks <=
// kRowsMaxOuterRank + 1 (hal::kMaxRank).
kernel_params::RowsLayout rows_layout(const Tensor& x, const Strides& y_outer_strides, std::int64_t y_col_stride,
                                      int axis);
// The row kernels' parameters, x_vec16 / y_vec16 (and a norm's weight_vec16 /
// bias_vec16) set from the views; cuda_threads_per_row left 0.
kernel_params::SoftmaxParams softmax_params(const SoftmaxCall& call);
kernel_params::NormParams norm_params(const NormCall& call);
kernel_params::ReduceParams reduce_params(const ReduceCall& call);
kernel_params::RopeParams rope_params(const RopeCall& call);

// GEMM operands as the kernels see them: strides of op(A) and op(B), a batch
// of 1 broadcast (stride 0), a_k_major / b_k_major = K-contiguity, the vec8
// flags and the epilogue form.
kernel_params::GemmParams gemm_params(const GemmCall& call);

// Attention; throws unsupported (naming `backend`) when a head count or head
// dim does not fit the kernels' int32 fields.
// Attention's sizes from q [b, sq, hq, d], k [b, sk, hkv, d], v [b, sk, hkv, dv],
// shared by the forward's and the backward's parameters; head counts and
// head dims beyond int32 are refused as unsupported, naming `op`.
struct AttentionDims {
  std::int64_t batch = 0, sq = 0, sk = 0;
  std::int32_t hq = 0, hkv = 0, d = 0, dv = 0;
};
AttentionDims attention_dims(const Tensor& q, const Tensor& k, const Tensor& v, const char* backend, const char* op);
kernel_params::AttentionParams attention_params(const AttentionCall& call, const char* backend);

// Training ops (kernel_params/training.h; backends/gpu/kernel_args_training.cpp).
// Elementwise: every tensor has x's (gate's, param's) shape, strides as given.
kernel_params::UnaryBackwardParams unary_backward_params(const UnaryBackwardCall& call);
kernel_params::SwigluBackwardParams swiglu_backward_params(const SwigluBackwardCall& call);
// The AdamW scalars computed in fp64 and rounded once, as cpu_ref/adamw.cpp.
kernel_params::AdamwParams adamw_params(const AdamwCall& call);
// Rows over the last axis of (forward tensor, dy, dx).
kernel_params::RowTensors row_tensors(const Tensor& forward, const Tensor& dy, const Tensor& dx);
kernel_params::SoftmaxBackwardParams softmax_backward_params(const SoftmaxBackwardCall& call);
// The device scratch (stats, partial_w, partial_b) is the launcher's: left null here.
kernel_params::NormBackwardParams norm_backward_params(const NormBackwardCall& call);
// floats of scratch a norm_backward launch needs: 2 per row (mean, rstd) and
// blocks x cols per partial (weight, and bias when dbias is asked for).
std::int64_t norm_backward_scratch_floats(const kernel_params::NormBackwardParams& p);
// rope_params of the equivalent RopeCall, with inverse = 1.
kernel_params::RopeParams rope_backward_params(const RopeBackwardCall& call);
// Pass 1 of global_norm for tensor x, its partials at `partials`.
kernel_params::GlobalNormPartialParams global_norm_partial_params(const Tensor& x, float* partials);
// Pass 2: chunk_begin from the tensors' sizes (the partials' total is chunk_begin[tensors]).
kernel_params::GlobalNormFinishParams global_norm_finish_params(const GlobalNormCall& call, const float* partials);

// attention_backward: every tensor's pointer and strides; delta (the D
// scratch) is the launcher's, left null. Throws unsupported (naming `backend`)
// when a head count or head dim does not fit int32.
kernel_params::AttentionBackwardParams attention_backward_params(const AttentionBackwardCall& call, const char* backend);

// cross_entropy: the id check, and the rows once `counted` (the rows not
// ignored, from the check) is known; row_loss is left null for sum / mean
// (the launcher's scratch) and is the loss tensor for none.
kernel_params::CrossEntropyCheckParams cross_entropy_check_params(const CrossEntropyCall& call);
kernel_params::CrossEntropyParams cross_entropy_params(const CrossEntropyCall& call, std::int64_t counted);
// Scaled FP8 (kernel_params/fp8.h). The scale grid and its strides from the
// block kind; a tensor scale has strides 0.
kernel_params::Fp8QuantParams quantize_fp8_params(const QuantizeFp8Call& call);
kernel_params::Fp8QuantParams dequantize_fp8_params(const DequantizeFp8Call& call);
// Everything but m_tiles / block_m (the launcher's tile height; for the
// grouped call, set_fp8_m_tiles below). gemm_fp8_grouped_params leaves
// `offsets` pointing at the device's offsets.
kernel_params::GemmFp8Params gemm_fp8_params(const GemmFp8Call& call);
kernel_params::GemmFp8Params gemm_fp8_grouped_params(const GemmFp8GroupedCall& call);
// The grouped call's offsets, copied to the host by the launcher, checked
// before anything is written: offsets[0] = 0, non-decreasing, offsets[G] = M.
// Throws invalid_argument naming gemm_fp8_grouped and offsets (the CPU
// backend's message, cpu_ref/gemm_fp8.cpp).
void check_fp8_group_offsets(const std::int32_t* host_offsets, std::int64_t groups, std::int64_t m);
// Sets p.block_m and p.m_tiles: ceil(M / block_m) for gemm_fp8; the sum of
// each group's ceil(rows / block_m) for the grouped call, from the checked
// host copy of its offsets. Throws unsupported (naming `backend`) when the
// tile count does not fit the kernels' int32.
void set_fp8_m_tiles(kernel_params::GemmFp8Params& p, int block_m, const std::int32_t* host_offsets,
                     const char* backend);

}  // namespace hal::gpu
