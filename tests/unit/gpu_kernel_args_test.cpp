// The argument packing both GPU backends share (backends/gpu/kernel_args.h):
// every field a kernel reads, from a validated call. Runs on the CPU; the
// vector-path flags have their own files (gpu_vector_path_test.cpp,
// gpu_rows_vector_path_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "backends/gpu/kernel_args.h"
#include "kernel_params/embedding.h"
#include "hal/error.h"

namespace hal::gpu_test {

// Passed by value through cuLaunchKernel / hipModuleLaunchKernel: bytes only.
template <class... T>
constexpr bool all_plain = ((std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T>) && ...);
static_assert(all_plain<kernel_params::BinaryParams, kernel_params::UnaryParams, kernel_params::SwigluParams,
                        kernel_params::CastParams, kernel_params::CopyParams, kernel_params::FillRandomParams,
                        kernel_params::EmbeddingCheckParams, kernel_params::EmbeddingGatherParams,
                        kernel_params::SoftmaxParams, kernel_params::NormParams, kernel_params::ReduceParams,
                        kernel_params::RopeParams, kernel_params::GemmParams, kernel_params::AttentionParams>,
              "kernel parameter structs must be plain bytes");

TEST(GpuKernelArgs, StridedOffsetFollowsRowMajorLogicalIndex) {
  // A [2, 3, 4] view permuted to strides {1, 8, 2} (any strides are legal).
  const kernel_params::KernelShape shape = gpu::kernel_shape(Shape{2, 3, 4});
  const kernel_params::KernelStrides strides = gpu::kernel_strides(Strides{1, 8, 2});
  // Logical index 23 = (1, 2, 3) -> 1*1 + 2*8 + 3*2 = 23; index 5 = (0, 1, 1) -> 10.
  EXPECT_EQ(kernel_params::strided_offset(shape, strides, 23), 23);
  EXPECT_EQ(kernel_params::strided_offset(shape, strides, 5), 10);
  EXPECT_EQ(kernel_params::strided_offset(shape, strides, 0), 0);
}

TEST(GpuKernelArgs, RowsLayoutMovesTheReducedAxisToColumns) {
  Tensor x = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{2, 5, 3});
  // Reduce axis 1: rows over dims {0, 2} with x strides {15, 1}; columns stride 3.
  const kernel_params::RowsLayout l = gpu::rows_layout(x, Strides{3, 1}, 0, 1);
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

TEST(GpuKernelArgs, GemmParamsDescribeTransposedAndBroadcastOperands) {
  // A^T with A stored [K=4, M=3], batch of 2 broadcast from B stored [N=5, K=4] transposed.
  GemmCall c;
  c.a = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{2, 4, 3});
  c.b = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{5, 4});
  c.c = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{2, 3, 5});
  c.trans_a = true;
  c.trans_b = true;
  const kernel_params::GemmParams p = gpu::gemm_params(c);
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

TEST(GpuKernelArgs, GemmUses16ByteChunksOnlyForAlignedKContiguousOperands) {
  GemmCall c;
  // A real 16-byte-aligned base: alignment is judged from the first element's
  // address, and a null base with an offset stays null (hal::Tensor::first).
  alignas(16) static std::uint16_t a_storage[3 * 16 + 8];
  c.a = Tensor::contiguous(a_storage, nullptr, DType::bf16, Shape{3, 16});  // K-contiguous, rows of 32 bytes
  c.b = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{16, 5});  // N-contiguous
  c.c = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{3, 5});
  EXPECT_EQ(gpu::gemm_params(c).a_vec8, 1);
  EXPECT_EQ(gpu::gemm_params(c).b_vec8, 0);
  c.a.offset = 1;  // first element 2 bytes past a 16-byte boundary
  EXPECT_EQ(gpu::gemm_params(c).a_vec8, 0);
  c.a = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{3, 16});  // f32 goes to the general kernel
  c.b = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{16, 5});
  EXPECT_EQ(gpu::gemm_params(c).a_vec8, 0);
}

TEST(GpuKernelArgs, BinaryBroadcastsOperandsToYsShape) {
  BinaryCall c{BinaryKind::mul, {}, {}, {}};
  c.a = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{4, 16});
  c.b = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{16});  // one row, read by every row of y
  c.y = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{4, 16});
  const kernel_params::BinaryParams p = gpu::binary_params(c);
  EXPECT_EQ(p.op, static_cast<std::int32_t>(BinaryKind::mul));
  EXPECT_EQ(p.dtype, static_cast<std::int32_t>(DType::f32));
  EXPECT_EQ(p.n, 64);
  EXPECT_EQ(p.shape.rank, 2);
  EXPECT_EQ(p.shape.extent[0], 4);
  EXPECT_EQ(p.b_strides.s[0], 0);  // broadcast dimension
  EXPECT_EQ(p.b_strides.s[1], 1);
  EXPECT_EQ(p.a_strides.s[0], 16);
  // Element (2, 5) of y reads b[5].
  EXPECT_EQ(kernel_params::strided_offset(p.shape, p.b_strides, 2 * 16 + 5), 5);
}

TEST(GpuKernelArgs, CopyAndRandomDescribeTheirViews) {
  CopyCall copy;
  copy.x = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{6, 4}).transposed(0, 1);
  copy.y = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{4, 6});
  const kernel_params::CopyParams c = gpu::copy_params(copy);
  EXPECT_EQ(c.elem_bytes, 2);
  EXPECT_EQ(c.contiguous, 0);
  EXPECT_EQ(c.x_strides.s[0], 1);
  EXPECT_EQ(c.x_strides.s[1], 4);

  FillRandomCall r;
  r.y = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{3, 5});
  r.seed = 0x123456789abcdefULL;
  r.distribution = RandomDistribution::normal;
  r.a = 1.5f;
  r.b = 0.25f;
  const kernel_params::FillRandomParams f = gpu::fill_random_params(r);
  EXPECT_EQ(f.seed, 0x123456789abcdefULL);
  EXPECT_EQ(f.normal, 1);
  EXPECT_EQ(f.a, 1.5f);
  EXPECT_EQ(f.b, 0.25f);
  EXPECT_EQ(f.y_type, static_cast<std::int32_t>(DType::f16));
  EXPECT_EQ(f.contiguous, 1);
  EXPECT_EQ(f.n, 15);
}

TEST(GpuKernelArgs, RopeTakesPositionStridesAndOptionalFrequencies) {
  RopeCall c;
  c.x = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{2, 7, 4, 64});
  c.y = c.x;
  c.positions = Tensor::contiguous(nullptr, nullptr, DType::i32, Shape{7});
  c.rotary_dim = 32;
  c.style = RopeStyle::gptj;
  c.theta = 500000.0f;
  const kernel_params::RopeParams p = gpu::rope_params(c);
  EXPECT_EQ(p.pos_batch_stride, 0);  // [seq]: shared by every batch
  EXPECT_EQ(p.pos_seq_stride, 1);
  EXPECT_EQ(p.shape[3], 64);
  EXPECT_EQ(p.x_stride[1], 4 * 64);
  EXPECT_EQ(p.rotary_dim, 32);
  EXPECT_EQ(p.gptj, 1);
  EXPECT_EQ(p.theta, 500000.0f);
  EXPECT_EQ(p.inv_freq, nullptr);

  c.positions = Tensor::contiguous(nullptr, nullptr, DType::i32, Shape{2, 7});
  float freq[32] = {};
  c.inv_freq = Tensor::contiguous(freq, nullptr, DType::f32, Shape{32});
  c.inv_freq->shape = Shape{16};  // every other element
  c.inv_freq->strides = Strides{2};
  const kernel_params::RopeParams q = gpu::rope_params(c);
  EXPECT_EQ(q.pos_batch_stride, 7);
  EXPECT_EQ(q.pos_seq_stride, 1);
  EXPECT_EQ(q.inv_freq, static_cast<const float*>(freq));
  EXPECT_EQ(q.inv_freq_stride, 2);
}

TEST(GpuKernelArgs, GemmEpilogueIsPlainOnlyForAStoreOfAlphaTimesTheProduct) {
  GemmCall c;
  c.a = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{8, 16});
  c.b = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{16, 6});
  c.c = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{8, 6});
  c.alpha = 2.0f;
  EXPECT_EQ(gpu::gemm_params(c).epilogue, kernel_params::kGemmEpiloguePlain);
  EXPECT_EQ(gpu::gemm_params(c).alpha, 2.0f);
  GemmCall accumulate = c;
  accumulate.beta = 1.0f;
  EXPECT_EQ(gpu::gemm_params(accumulate).epilogue, kernel_params::kGemmEpilogueGeneral);
  GemmCall activated = c;
  activated.activation = Activation::gelu_tanh;
  EXPECT_EQ(gpu::gemm_params(activated).epilogue, kernel_params::kGemmEpilogueGeneral);
  EXPECT_EQ(gpu::gemm_params(activated).activation, static_cast<std::int32_t>(Activation::gelu_tanh));
  GemmCall odd_rows = c;
  odd_rows.c = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{8, 7});  // rows of 7: pairs straddle rows
  odd_rows.b = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{16, 7});
  EXPECT_EQ(gpu::gemm_params(odd_rows).epilogue, kernel_params::kGemmEpilogueGeneral);
  GemmCall column_major = c;
  column_major.c = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{6, 8}).transposed(0, 1);
  EXPECT_EQ(gpu::gemm_params(column_major).epilogue, kernel_params::kGemmEpilogueGeneral);
}

TEST(GpuKernelArgs, AttentionSharesOneQkvDtypeAndRefusesHeadCountsBeyondInt32) {
  AttentionCall c;
  c.q = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{2, 5, 8, 64});
  c.k = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{2, 9, 2, 64});
  c.v = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{2, 9, 2, 32});
  c.y = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{2, 5, 8, 32});
  c.scale = 0.125f;
  c.causal = true;
  const kernel_params::AttentionParams p = gpu::attention_params(c, "test");
  EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(p.sq, 5);
  EXPECT_EQ(p.sk, 9);
  EXPECT_EQ(p.hq, 8);
  EXPECT_EQ(p.hkv, 2);
  EXPECT_EQ(p.d, 64);
  EXPECT_EQ(p.dv, 32);
  EXPECT_EQ(p.qkv_type, static_cast<std::int32_t>(DType::f16));
  EXPECT_EQ(p.k_stride[1], 2 * 64);
  EXPECT_EQ(p.v_stride[2], 32);
  EXPECT_EQ(p.causal, 1);
  EXPECT_EQ(p.scale, 0.125f);
  EXPECT_EQ(p.lse, nullptr);  // not asked: the kernels without lse

  // The optional lse output: its pointer and its [b, sq, hq] strides (a view
  // with a batch stride of its own, to tell the fields apart).
  AttentionCall with_lse = c;
  float lse_storage[64] = {};
  Tensor lse = Tensor::contiguous(lse_storage, nullptr, DType::f32, Shape{2, 5, 8});
  lse.strides = {48, 8, 1};
  lse.offset = 3;
  with_lse.lse = lse;
  const kernel_params::AttentionParams pl = gpu::attention_params(with_lse, "test");
  EXPECT_EQ(pl.lse, lse_storage + 3);
  EXPECT_EQ(pl.lse_stride[0], 48);
  EXPECT_EQ(pl.lse_stride[1], 8);
  EXPECT_EQ(pl.lse_stride[2], 1);

  AttentionCall wide = c;
  wide.q = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{1, 1, std::int64_t{1} << 31, 1});
  try {
    gpu::attention_params(wide, "test");
    FAIL() << "a head count of 2^31 fits no int32 field";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("test"), std::string::npos) << e.what();
  }
}

}  // namespace hal::gpu_test
