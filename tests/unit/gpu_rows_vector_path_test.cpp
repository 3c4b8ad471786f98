// When the row kernels of both GPU backends take their 16-byte vector path
// (backends/gpu/kernel_args.h's softmax_params, norm_params, reduce_params): x_vec16 only
// for f32/f16/bf16 rows with unit column stride whose every row starts on a
// 16-byte boundary; y_vec16 only when y qualifies too with x's element size;
// a norm's weight / bias chunks only when unit-stride, aligned, x's size.
// Everything else stays on the element-per-lane path. Runs on the CPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "backends/gpu/kernel_args.h"

namespace hal::gpu_test {

namespace {

void* aligned_base() { return reinterpret_cast<void*>(std::uintptr_t{1} << 20); }

Tensor view(DType t, const Shape& shape) { return Tensor::contiguous(aligned_base(), nullptr, t, shape); }

// The first `cols` columns of a contiguous [rows, row_len] tensor: rows
// `row_len` elements apart, `cols` of them used.
Tensor column_prefix(DType t, std::int64_t rows, std::int64_t row_len, std::int64_t cols) {
  Tensor v = view(t, Shape{rows, row_len});
  v.shape = Shape{rows, cols};
  return v;
}

SoftmaxCall softmax(Tensor x, Tensor y) {
  SoftmaxCall c;
  c.x = x;
  c.y = y;
  return c;
}

NormCall norm(DType t, const Shape& shape, bool with_bias) {
  NormCall c;
  c.x = view(t, shape);
  c.y = view(t, shape);
  c.weight = view(t, Shape{shape[shape.rank() - 1]});
  if (with_bias) c.bias = view(t, Shape{shape[shape.rank() - 1]});
  return c;
}

}  // namespace

TEST(GpuKernelArgs, SoftmaxUsesChunksForAlignedContiguousRows) {
  // bf16 rows of 40: 80 bytes apart, 5 chunks of 8 each.
  const kernel_params::SoftmaxParams p = gpu::softmax_params(softmax(view(DType::bf16, Shape{3, 40}), view(DType::bf16, Shape{3, 40})));
  EXPECT_EQ(p.layout.x_vec16, 1);
  EXPECT_EQ(p.layout.y_vec16, 1);
  EXPECT_EQ(p.layout.cols, 40);
  EXPECT_EQ(p.layout.rows, 3);
  EXPECT_EQ(p.layout.x_col_stride, 1);
  // Rows 40 f32 apart (160 bytes) but 37 long: 9 chunks and a tail of 1 per row.
  const Tensor prefix = column_prefix(DType::f32, 4, 40, 37);
  const kernel_params::SoftmaxParams q = gpu::softmax_params(softmax(prefix, prefix));
  EXPECT_EQ(q.layout.x_vec16, 1);
  EXPECT_EQ(q.layout.y_vec16, 1);
  EXPECT_EQ(q.layout.cols, 37);
  EXPECT_EQ(q.layout.x_outer_stride[0], 40);
  // A single row needs no row-stride alignment: its outer extent is 1.
  EXPECT_EQ(gpu::softmax_params(softmax(view(DType::f32, Shape{1, 37}), view(DType::f32, Shape{1, 37}))).layout.x_vec16, 1);
}

TEST(GpuKernelArgs, SoftmaxKeepsElementPathForMisalignedOrStridedRows) {
  // Contiguous f32 rows of 37: row r starts 148 * r bytes in, not 16-byte aligned.
  const Tensor odd = view(DType::f32, Shape{4, 37});
  EXPECT_EQ(gpu::softmax_params(softmax(odd, odd)).layout.x_vec16, 0);
  EXPECT_EQ(gpu::softmax_params(softmax(odd, odd)).layout.y_vec16, 0);

  Tensor shifted = view(DType::f32, Shape{2, 64});
  shifted.offset = 2;  // 8 bytes past a 16-byte boundary
  EXPECT_EQ(gpu::softmax_params(softmax(shifted, view(DType::f32, Shape{2, 64}))).layout.x_vec16, 0);

  const Tensor transposed = view(DType::f16, Shape{64, 64}).transposed(0, 1);  // column stride 64
  const kernel_params::SoftmaxParams t = gpu::softmax_params(softmax(transposed, view(DType::f16, Shape{64, 64})));
  EXPECT_EQ(t.layout.x_vec16, 0);
  EXPECT_EQ(t.layout.y_vec16, 0);
  EXPECT_EQ(t.layout.x_col_stride, 64);

  // fp8 rows are not decoded by the vector path.
  EXPECT_EQ(gpu::softmax_params(softmax(view(DType::f8e4m3, Shape{2, 64}), view(DType::f8e4m3, Shape{2, 64}))).layout.x_vec16, 0);
}

TEST(GpuKernelArgs, SoftmaxVectorisesTheOutputOnlyWhenItQualifiesWithXsElementSize) {
  const Tensor x = view(DType::bf16, Shape{2, 64});
  // f32 output: one 16-byte chunk of x (8 x bf16) is 32 bytes of y.
  const kernel_params::SoftmaxParams wider = gpu::softmax_params(softmax(x, view(DType::f32, Shape{2, 64})));
  EXPECT_EQ(wider.layout.x_vec16, 1);
  EXPECT_EQ(wider.layout.y_vec16, 0);
  // f16 output: same size, chunk to chunk.
  EXPECT_EQ(gpu::softmax_params(softmax(x, view(DType::f16, Shape{2, 64}))).layout.y_vec16, 1);
  Tensor y_shifted = view(DType::bf16, Shape{2, 64});
  y_shifted.offset = 4;  // 8 bytes off
  const kernel_params::SoftmaxParams off = gpu::softmax_params(softmax(x, y_shifted));
  EXPECT_EQ(off.layout.x_vec16, 1);
  EXPECT_EQ(off.layout.y_vec16, 0);
  // Causal and log flags pass through unchanged next to the vector flags.
  SoftmaxCall causal = softmax(x, x);
  causal.causal = true;
  causal.log = true;
  causal.scale = 0.5f;
  const kernel_params::SoftmaxParams c = gpu::softmax_params(causal);
  EXPECT_EQ(c.causal, 1);
  EXPECT_EQ(c.log, 1);
  EXPECT_EQ(c.scale, 0.5f);
  EXPECT_EQ(c.layout.x_vec16, 1);
}

TEST(GpuKernelArgs, NormVectorisesXWeightAndBiasIndependently) {
  const kernel_params::NormParams all = gpu::norm_params(norm(DType::f16, Shape{4, 128}, true));
  EXPECT_EQ(all.layout.x_vec16, 1);
  EXPECT_EQ(all.layout.y_vec16, 1);
  EXPECT_EQ(all.weight_vec16, 1);
  EXPECT_EQ(all.bias_vec16, 1);

  NormCall rms = norm(DType::f32, Shape{4, 128}, false);
  rms.rms = true;
  const kernel_params::NormParams r = gpu::norm_params(rms);
  EXPECT_EQ(r.layout.x_vec16, 1);
  EXPECT_EQ(r.weight_vec16, 1);
  EXPECT_EQ(r.bias_vec16, 0);  // no bias
  EXPECT_EQ(r.bias, nullptr);
  EXPECT_EQ(r.rms, 1);

  NormCall strided_weight = norm(DType::bf16, Shape{4, 64}, true);
  strided_weight.weight = view(DType::bf16, Shape{128});  // every other element of 128
  strided_weight.weight.shape = Shape{64};
  strided_weight.weight.strides = Strides{2};
  const kernel_params::NormParams w = gpu::norm_params(strided_weight);
  EXPECT_EQ(w.layout.x_vec16, 1);
  EXPECT_EQ(w.weight_vec16, 0);
  EXPECT_EQ(w.weight_stride, 2);
  EXPECT_EQ(w.bias_vec16, 1);

  NormCall shifted_bias = norm(DType::f32, Shape{2, 64}, true);
  shifted_bias.bias->offset = 1;
  EXPECT_EQ(gpu::norm_params(shifted_bias).bias_vec16, 0);
  EXPECT_EQ(gpu::norm_params(shifted_bias).weight_vec16, 1);
}

TEST(GpuKernelArgs, NormKeepsElementPathForMisalignedRows) {
  NormCall odd = norm(DType::bf16, Shape{3, 36}, true);  // rows 72 bytes apart
  const kernel_params::NormParams p = gpu::norm_params(odd);
  EXPECT_EQ(p.layout.x_vec16, 0);
  EXPECT_EQ(p.layout.y_vec16, 0);
  // Chunks of weight / bias are only read next to x's chunks.
  EXPECT_EQ(p.weight_vec16, 0);
  EXPECT_EQ(p.bias_vec16, 0);

  NormCall strided_y = norm(DType::f32, Shape{2, 64}, false);
  strided_y.y = view(DType::f32, Shape{64, 2}).transposed(0, 1);  // column stride 2
  const kernel_params::NormParams q = gpu::norm_params(strided_y);
  EXPECT_EQ(q.layout.x_vec16, 1);
  EXPECT_EQ(q.layout.y_vec16, 0);
  EXPECT_EQ(q.layout.y_col_stride, 2);
}

TEST(GpuKernelArgs, ReduceVectorisesOnlyAContiguousReducedAxis) {
  ReduceCall last{ReduceKind::sum, view(DType::f32, Shape{8, 256}), view(DType::f32, Shape{8}), 1, false};
  const kernel_params::ReduceParams p = gpu::reduce_params(last);
  EXPECT_EQ(p.layout.x_vec16, 1);
  EXPECT_EQ(p.layout.y_vec16, 0);  // y is one element per row
  EXPECT_EQ(p.layout.cols, 256);

  ReduceCall argmax{ReduceKind::argmax, view(DType::bf16, Shape{5, 1000}), view(DType::i64, Shape{5, 1}), 1, true};
  EXPECT_EQ(gpu::reduce_params(argmax).layout.x_vec16, 1);  // 2000-byte rows
  EXPECT_EQ(gpu::reduce_params(argmax).kind, static_cast<int32_t>(ReduceKind::argmax));

  ReduceCall outer{ReduceKind::max, view(DType::f32, Shape{256, 8}), view(DType::f32, Shape{8}), 0, false};
  const kernel_params::ReduceParams o = gpu::reduce_params(outer);
  EXPECT_EQ(o.layout.x_vec16, 0);  // reduced axis has stride 8
  EXPECT_EQ(o.layout.x_col_stride, 8);

  ReduceCall odd{ReduceKind::mean, view(DType::f16, Shape{3, 100}), view(DType::f16, Shape{3}), 1, false};
  EXPECT_EQ(gpu::reduce_params(odd).layout.x_vec16, 0);  // rows 200 bytes apart
}

}  // namespace hal::gpu_test
