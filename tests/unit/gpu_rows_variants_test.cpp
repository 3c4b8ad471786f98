// The host side of issue 24's 16-bit packed kernel variants
// (backends/gpu/rows_variants.h): which calls get them and under which
// kernel names, and the outer-dim merge their row offsets rely on (every row
// keeps its x and y offsets and its innermost coordinate). Runs on the CPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "backends/gpu/kernel_args.h"
#include "backends/gpu/rows_variants.h"

namespace hal::gpu_test {

namespace {

using kernel_params::RowsLayout;

void* aligned_base() { return reinterpret_cast<void*>(std::uintptr_t{1} << 20); }
Tensor view(DType t, const Shape& shape) { return Tensor::contiguous(aligned_base(), nullptr, t, shape); }

struct Offsets {
  std::int64_t x, y, last;
};

// The kernels' row_offsets (ptx/kernels/rows_common.cuh): row-major over the outer dims.
Offsets reference_offsets(const RowsLayout& L, std::int64_t row) {
  Offsets o{0, 0, 0};
  for (int i = L.outer_rank - 1; i >= 0; --i) {
    const std::int64_t c = row % L.outer_shape[i];
    row /= L.outer_shape[i];
    if (i == L.outer_rank - 1) o.last = c;
    o.x += c * L.x_outer_stride[i];
    o.y += c * L.y_outer_stride[i];
  }
  return o;
}

// row_offsets_fast's one- and two-dim forms (32-bit division), else the loop.
Offsets fast_offsets(const RowsLayout& L, std::int64_t row) {
  if (L.outer_rank == 1) return {row * L.x_outer_stride[0], row * L.y_outer_stride[0], row};
  if (L.outer_rank == 2 && L.rows <= 0x7fffffffLL) {
    const auto r = static_cast<std::uint32_t>(row), e = static_cast<std::uint32_t>(L.outer_shape[1]);
    const std::uint32_t c0 = r / e, c1 = r - c0 * e;
    return {c0 * L.x_outer_stride[0] + c1 * L.x_outer_stride[1], c0 * L.y_outer_stride[0] + c1 * L.y_outer_stride[1],
            static_cast<std::int64_t>(c1)};
  }
  return reference_offsets(L, row);
}

void expect_same_rows(const RowsLayout& before, const RowsLayout& after, bool innermost_coordinate) {
  ASSERT_EQ(before.rows, after.rows);
  std::int64_t product = 1;
  for (int i = 0; i < after.outer_rank; ++i) product *= after.outer_shape[i];
  EXPECT_EQ(product, after.rows);
  for (std::int64_t r = 0; r < before.rows; ++r) {
    const Offsets a = reference_offsets(before, r), b = fast_offsets(after, r);
    ASSERT_EQ(a.x, b.x) << "row " << r;
    ASSERT_EQ(a.y, b.y) << "row " << r;
    if (innermost_coordinate) {
      ASSERT_EQ(a.last, b.last) << "row " << r;
    }
  }
}

kernel_params::SoftmaxParams softmax(DType t, const Shape& s, bool causal) {
  SoftmaxCall c;
  c.x = view(t, s);
  c.y = view(t, s);
  c.causal = causal;
  kernel_params::SoftmaxParams p = gpu::softmax_params(c);
  p.layout.cuda_threads_per_row = 128;
  return p;
}

}  // namespace

TEST(GpuRowsVariants, MergesContiguousOuterDimsIntoOne) {
  // [2, 3, 5, 4096] contiguous: three outer dims, one after merging.
  const RowsLayout L = softmax(DType::bf16, Shape{2, 3, 5, 4096}, false).layout;
  ASSERT_EQ(L.outer_rank, 3);
  const RowsLayout m = gpu::merge_outer_dims(L, false);
  EXPECT_EQ(m.outer_rank, 1);
  EXPECT_EQ(m.outer_shape[0], 30);
  EXPECT_EQ(m.x_outer_stride[0], 4096);
  EXPECT_EQ(m.y_outer_stride[0], 4096);
  EXPECT_EQ(m.x_vec16, L.x_vec16);
  EXPECT_EQ(m.y_vec16, L.y_vec16);
  EXPECT_EQ(m.cols, L.cols);
  expect_same_rows(L, m, false);
}

TEST(GpuRowsVariants, CausalKeepsTheQueryDimOnItsOwn) {
  // [batch 2, heads 3, queries 7, keys 2048]: batch and heads merge, queries stay.
  const RowsLayout L = softmax(DType::f16, Shape{2, 3, 7, 2048}, true).layout;
  const RowsLayout m = gpu::merge_outer_dims(L, true);
  EXPECT_EQ(m.outer_rank, 2);
  EXPECT_EQ(m.outer_shape[0], 6);
  EXPECT_EQ(m.outer_shape[1], 7);
  expect_same_rows(L, m, true);
  // A single query row per head: its extent-1 dim is kept (the mask reads it).
  const RowsLayout one = softmax(DType::f16, Shape{4, 1, 2048}, true).layout;
  const RowsLayout m1 = gpu::merge_outer_dims(one, true);
  EXPECT_EQ(m1.outer_rank, 2);
  EXPECT_EQ(m1.outer_shape[1], 1);
  expect_same_rows(one, m1, true);
}

TEST(GpuRowsVariants, LeavesGapsAndDropsUnitDims) {
  // Rows of a [4, 6, 2048] view taken from a [4, 8, 2048] tensor: dim 0's
  // stride (8 rows) is not 6 rows, so the dims stay apart.
  RowsLayout L = softmax(DType::bf16, Shape{4, 6, 2048}, false).layout;
  L.x_outer_stride[0] = 8 * 2048;
  const RowsLayout m = gpu::merge_outer_dims(L, false);
  EXPECT_EQ(m.outer_rank, 2);
  expect_same_rows(L, m, false);
  // y laid out differently from x (y transposed over the outer dims): no merge.
  RowsLayout t = softmax(DType::bf16, Shape{3, 5, 2048}, false).layout;
  t.y_outer_stride[0] = 2048;
  t.y_outer_stride[1] = 3 * 2048;
  const RowsLayout mt = gpu::merge_outer_dims(t, false);
  EXPECT_EQ(mt.outer_rank, 2);
  expect_same_rows(t, mt, false);
  // Extent-1 dims vanish, whatever their strides.
  RowsLayout u = softmax(DType::bf16, Shape{1, 5, 1, 3, 2048}, false).layout;
  u.x_outer_stride[0] = 12345;
  u.x_outer_stride[2] = 77;
  const RowsLayout mu = gpu::merge_outer_dims(u, false);
  EXPECT_EQ(mu.outer_rank, 1);
  EXPECT_EQ(mu.outer_shape[0], 15);
  expect_same_rows(u, mu, false);
  // Every dim of extent 1: one row at offset 0.
  const RowsLayout single = gpu::merge_outer_dims(softmax(DType::bf16, Shape{1, 1, 2048}, false).layout, false);
  EXPECT_EQ(single.outer_rank, 1);
  EXPECT_EQ(single.outer_shape[0], 1);
  EXPECT_EQ(single.x_outer_stride[0], 0);
}

TEST(GpuRowsVariants, SoftmaxKernelPerDtypeGroupAndMask) {
  EXPECT_EQ(std::string(gpu::cuda_softmax_reg16_kernel(softmax(DType::bf16, Shape{8, 4096}, false))),
            "hal_softmax_rows_reg16_bf16_t128");
  EXPECT_EQ(std::string(gpu::cuda_softmax_reg16_kernel(softmax(DType::f16, Shape{8, 4096}, true))),
            "hal_softmax_rows_reg16_f16_causal_t128");
  kernel_params::SoftmaxParams p = softmax(DType::bf16, Shape{8, 4096}, true);
  p.layout.cuda_threads_per_row = 64;
  EXPECT_EQ(std::string(gpu::cuda_softmax_reg16_kernel(p)), "hal_softmax_rows_reg16_bf16_causal_t64");
  p.layout.cuda_threads_per_row = 256;
  EXPECT_EQ(std::string(gpu::cuda_softmax_reg16_kernel(p)), "hal_softmax_rows_reg16_bf16_causal_t256");
  // Not for f32, mixed dtypes, unvectorised rows or other groups: the verified kernels run.
  EXPECT_EQ(gpu::cuda_softmax_reg16_kernel(softmax(DType::f32, Shape{8, 4096}, false)), nullptr);
  SoftmaxCall mixed;
  mixed.x = view(DType::bf16, Shape{8, 4096});
  mixed.y = view(DType::f16, Shape{8, 4096});
  kernel_params::SoftmaxParams m = gpu::softmax_params(mixed);
  m.layout.cuda_threads_per_row = 128;
  EXPECT_EQ(gpu::cuda_softmax_reg16_kernel(m), nullptr);
  p.layout.cuda_threads_per_row = 32;
  EXPECT_EQ(gpu::cuda_softmax_reg16_kernel(p), nullptr);
  p.layout.cuda_threads_per_row = 128;
  p.layout.y_vec16 = 0;
  EXPECT_EQ(gpu::cuda_softmax_reg16_kernel(p), nullptr);
}

TEST(GpuRowsVariants, NormKernelOnlyWhenEveryOperandIsChunked16Bit) {
  const auto norm = [](DType x, DType w, bool bias, bool rms) {
    NormCall c;
    c.x = view(x, Shape{8, 4096});
    c.y = view(x, Shape{8, 4096});
    c.weight = view(w, Shape{4096});
    if (bias) c.bias = view(w, Shape{4096});
    c.rms = rms;
    kernel_params::NormParams p = gpu::norm_params(c);
    p.layout.cuda_threads_per_row = 128;
    return p;
  };
  EXPECT_EQ(std::string(gpu::cuda_norm_reg16_kernel(norm(DType::bf16, DType::bf16, true, false))),
            "hal_norm_rows_reg16_bf16_t128");
  EXPECT_EQ(std::string(gpu::cuda_norm_reg16_kernel(norm(DType::f16, DType::f16, false, true))),
            "hal_norm_rows_reg16_f16_t128");
  EXPECT_EQ(gpu::cuda_norm_reg16_kernel(norm(DType::bf16, DType::f32, true, false)), nullptr);  // f32 weight
  EXPECT_EQ(gpu::cuda_norm_reg16_kernel(norm(DType::f32, DType::f32, true, false)), nullptr);
  kernel_params::NormParams p = norm(DType::bf16, DType::bf16, true, false);
  p.bias_vec16 = 0;  // a misaligned bias
  EXPECT_EQ(gpu::cuda_norm_reg16_kernel(p), nullptr);
  p = norm(DType::bf16, DType::bf16, false, false);
  p.weight_vec16 = 0;
  EXPECT_EQ(gpu::cuda_norm_reg16_kernel(p), nullptr);
  p = norm(DType::f16, DType::f16, true, false);
  p.layout.cuda_threads_per_row = 256;
  EXPECT_EQ(std::string(gpu::cuda_norm_reg16_kernel(p)), "hal_norm_rows_reg16_f16_t256");
}

TEST(GpuRowsVariants, ElementwisePackedKernelsFor16BitVectorCalls) {
  using gpu::ElementwiseFamily;
  EXPECT_EQ(std::string(gpu::cuda_elementwise_packed_kernel(ElementwiseFamily::unary, DType::bf16, 1)),
            "unary_packed_bf16");
  EXPECT_EQ(std::string(gpu::cuda_elementwise_packed_kernel(ElementwiseFamily::swiglu, DType::f16, 1)),
            "swiglu_packed_f16");
  EXPECT_EQ(std::string(gpu::cuda_elementwise_packed_kernel(ElementwiseFamily::binary, DType::bf16, 1)),
            "binary_packed_bf16");
  EXPECT_EQ(gpu::cuda_elementwise_packed_kernel(ElementwiseFamily::unary, DType::bf16, 0), nullptr);
  EXPECT_EQ(gpu::cuda_elementwise_packed_kernel(ElementwiseFamily::unary, DType::f32, 1), nullptr);
  EXPECT_EQ(gpu::cuda_elementwise_packed_kernel(ElementwiseFamily::swiglu, DType::f8e4m3, 1), nullptr);
  // HIP: unary and swiglu only.
  EXPECT_EQ(std::string(gpu::hip_elementwise_packed_kernel(ElementwiseFamily::unary, DType::f16, 1)),
            "hal_unary_packed_f16");
  EXPECT_EQ(std::string(gpu::hip_elementwise_packed_kernel(ElementwiseFamily::swiglu, DType::bf16, 1)),
            "hal_swiglu_packed_bf16");
  EXPECT_EQ(gpu::hip_elementwise_packed_kernel(ElementwiseFamily::binary, DType::bf16, 1), nullptr);
  EXPECT_EQ(gpu::hip_elementwise_packed_kernel(ElementwiseFamily::unary, DType::bf16, 0), nullptr);
  EXPECT_EQ(gpu::hip_elementwise_packed_kernel(ElementwiseFamily::unary, DType::f32, 1), nullptr);
}

}  // namespace hal::gpu_test
