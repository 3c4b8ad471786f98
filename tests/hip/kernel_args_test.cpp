// Host-side tests of argument packing and launch geometry (hip_kernel_args.h,
// hip_gemm.cpp's gemm_params) and of the embedded code-object table. No GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "backends/hip/hip_code_objects.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "hip/kernels/elementwise_params.h"

namespace hal::hip_test {

TEST(HipHost, GridStrideShapeCoversWorkWithinEightWorkgroupsPerCu) {
  const hip::LaunchShape small = hip::grid_stride_shape(1000, 304);
  EXPECT_EQ(small.block[0], 256u);
  EXPECT_EQ(small.grid[0], 4u);  // ceil(1000 / 256)
  const hip::LaunchShape big = hip::grid_stride_shape(std::int64_t{1} << 30, 304);
  EXPECT_EQ(big.grid[0], 304u * 8u);
  EXPECT_EQ(hip::grid_stride_shape(0, 304).grid[0], 1u);
}

TEST(HipHost, StridedOffsetFollowsRowMajorLogicalIndex) {
  // A [2, 3, 4] view permuted to strides {1, 8, 2} (any strides are legal).
  const hip::kernels::KernelShape shape = hip::kernel_shape(Shape{2, 3, 4});
  const hip::kernels::KernelStrides strides = hip::kernel_strides(Strides{1, 8, 2});
  // Logical index 23 = (1, 2, 3) -> 1*1 + 2*8 + 3*2 = 23; index 5 = (0, 1, 1) -> 10.
  EXPECT_EQ(hip::kernels::strided_offset(shape, strides, 23), 23);
  EXPECT_EQ(hip::kernels::strided_offset(shape, strides, 5), 10);
  EXPECT_EQ(hip::kernels::strided_offset(shape, strides, 0), 0);
}

TEST(HipHost, RowsLayoutMovesTheReducedAxisToColumns) {
  Tensor x = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{2, 5, 3});
  // Reduce axis 1: rows over dims {0, 2} with x strides {15, 1}; columns stride 3.
  const hip::kernels::RowsLayout l = hip::rows_layout(x, Strides{3, 1}, 0, 1);
  EXPECT_EQ(l.outer_rank, 2);
  EXPECT_EQ(l.rows, 6);
  EXPECT_EQ(l.cols, 5);
  EXPECT_EQ(l.x_col_stride, 3);
  EXPECT_EQ(l.outer_shape[0], 2);
  EXPECT_EQ(l.outer_shape[1], 3);
  EXPECT_EQ(l.x_outer_stride[0], 15);
  EXPECT_EQ(l.x_outer_stride[1], 1);
  EXPECT_EQ(l.y_outer_stride[0], 3);
}

TEST(HipHost, GemmParamsDescribeTransposedAndBroadcastOperands) {
  // A^T with A stored [K=4, M=3], batch of 2 broadcast from B stored [N=5, K=4] transposed.
  GemmCall c;
  c.a = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{2, 4, 3});
  c.b = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{5, 4});
  c.c = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{2, 3, 5});
  c.trans_a = true;
  c.trans_b = true;
  const hip::kernels::GemmParams p = hip::gemm_params(c);
  EXPECT_EQ(p.m, 3);
  EXPECT_EQ(p.n, 5);
  EXPECT_EQ(p.k, 4);
  EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(p.a_batch_stride, 12);
  EXPECT_EQ(p.a_m_stride, 1);  // op(A)[m][k] = A[k][m]
  EXPECT_EQ(p.a_k_stride, 3);
  EXPECT_EQ(p.b_batch_stride, 0);  // no batch dim: broadcast
  EXPECT_EQ(p.b_k_stride, 1);      // op(B)[k][n] = B[n][k]
  EXPECT_EQ(p.b_n_stride, 4);
  EXPECT_EQ(p.c_batch_stride, 15);
  EXPECT_EQ(p.a_k_major, 0);
  EXPECT_EQ(p.b_k_major, 1);
  EXPECT_EQ(p.a_vec8, 0);  // K is not contiguous in op(A)
  EXPECT_EQ(p.b_vec8, 0);  // K = 4 is not a multiple of 8
}

TEST(HipHost, GemmUses16ByteChunksOnlyForAlignedKContiguousOperands) {
  GemmCall c;
  c.a = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{3, 16});  // K-contiguous, rows of 32 bytes
  c.b = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{16, 5});  // N-contiguous
  c.c = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{3, 5});
  EXPECT_EQ(hip::gemm_params(c).a_vec8, 1);
  EXPECT_EQ(hip::gemm_params(c).b_vec8, 0);
  c.a.offset = 1;  // first element 2 bytes past a 16-byte boundary
  EXPECT_EQ(hip::gemm_params(c).a_vec8, 0);
  c.a = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{3, 16});  // f32 goes to the general kernel
  c.b = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{16, 5});
  EXPECT_EQ(hip::gemm_params(c).a_vec8, 0);
}

TEST(HipHost, EveryKernelFileIsEmbeddedForEveryBuiltTarget) {
  const auto objects = hip::embedded_code_objects();
  ASSERT_GE(objects.size(), 10u);
  bool has_gemm = false;
  for (const auto& o : objects) {
    SCOPED_TRACE(o.file);
    ASSERT_GT(o.size, 24u);
    EXPECT_EQ(std::memcmp(o.data, "__CLANG_OFFLOAD_BUNDLE__", 24), 0);
    EXPECT_NE(o.kernels[0], nullptr) << "no extern \"C\" kernel found in the source";
    // Every CMAKE_HIP_ARCHITECTURES entry (HAL_HIP_ARCHS, comma-separated) is in the bundle.
    const std::string built = HAL_HIP_ARCHS, held = std::string(",") + o.targets + ",";
    for (std::size_t start = 0; start < built.size();) {
      const std::size_t end = std::min(built.find(',', start), built.size());
      std::string needle(1, ',');  // ",gfx940," (built with append: GCC 12 warns falsely on "," + s)
      needle.append(built, start, end - start).push_back(',');
      EXPECT_NE(held.find(needle), std::string::npos) << o.targets;
      start = end + 1;
    }
    if (std::string(o.file) == "gemm_mfma") has_gemm = true;
  }
  EXPECT_TRUE(has_gemm);
}

}  // namespace hal::hip_test
