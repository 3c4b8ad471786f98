// When the memory-bound kernels of both GPU backends take their 16-byte chunk
// path (vec16 of backends/gpu/kernel_args.h's binary_params and cast_params;
// the CUDA launcher picks its *_contig / cast_contiguous kernels by it): only
// contiguous views of one shape whose first elements are all 16-byte aligned;
// everything else stays on the element-wise paths. Runs on the CPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "backends/gpu/kernel_args.h"

namespace hal::gpu_test {

namespace {

void* aligned_base() { return reinterpret_cast<void*>(std::uintptr_t{1} << 20); }

BinaryCall add(DType t, const Shape& shape) {
  BinaryCall c{BinaryKind::add, {}, {}, {}};
  c.a = Tensor::contiguous(aligned_base(), nullptr, t, shape);
  c.b = Tensor::contiguous(aligned_base(), nullptr, t, shape);
  c.y = Tensor::contiguous(aligned_base(), nullptr, t, shape);
  return c;
}

}  // namespace

TEST(GpuKernelArgs, BinaryUsesChunksForAlignedContiguousOperandsOfAnyLength) {
  const kernel_params::BinaryParams p = gpu::binary_params(add(DType::bf16, Shape{3, 37}));  // 111: 13 chunks + 7 tail
  EXPECT_EQ(p.contiguous, 1);
  EXPECT_EQ(p.vec16, 1);
  EXPECT_EQ(p.n, 111);
  EXPECT_EQ(gpu::binary_params(add(DType::f8e4m3, Shape{5})).vec16, 1);  // shorter than one chunk: all tail
}

TEST(GpuKernelArgs, BinaryKeepsElementPathsForMisalignedBroadcastOrStridedViews) {
  BinaryCall misaligned = add(DType::f32, Shape{64});
  misaligned.b.offset = 2;  // 8 bytes past a 16-byte boundary
  EXPECT_EQ(gpu::binary_params(misaligned).contiguous, 1);
  EXPECT_EQ(gpu::binary_params(misaligned).vec16, 0);

  BinaryCall broadcast = add(DType::f32, Shape{4, 16});
  broadcast.b = Tensor::contiguous(aligned_base(), nullptr, DType::f32, Shape{16});
  EXPECT_EQ(gpu::binary_params(broadcast).contiguous, 0);
  EXPECT_EQ(gpu::binary_params(broadcast).vec16, 0);

  BinaryCall transposed = add(DType::f16, Shape{8, 8});
  transposed.a = transposed.a.transposed(0, 1);
  EXPECT_EQ(gpu::binary_params(transposed).vec16, 0);
}

TEST(GpuKernelArgs, CastUsesChunksOnlyForAlignedContiguousViews) {
  CastCall c;
  c.x = Tensor::contiguous(aligned_base(), nullptr, DType::f32, Shape{2, 50});
  c.y = Tensor::contiguous(aligned_base(), nullptr, DType::f8e4m3, Shape{2, 50});
  EXPECT_EQ(gpu::cast_params(c).vec16, 1);
  CastCall shifted = c;
  shifted.y.offset = 3;  // fp8: 3 bytes off
  EXPECT_EQ(gpu::cast_params(shifted).vec16, 0);
  EXPECT_EQ(gpu::cast_params(shifted).contiguous, 1);
  CastCall permuted = c;
  permuted.x = Tensor::contiguous(aligned_base(), nullptr, DType::f32, Shape{50, 2}).transposed(0, 1);
  EXPECT_EQ(gpu::cast_params(permuted).contiguous, 0);
  EXPECT_EQ(gpu::cast_params(permuted).vec16, 0);
}

}  // namespace hal::gpu_test
