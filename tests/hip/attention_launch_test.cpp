// Host-side tests of the attention launcher's choice between the MFMA flash
// kernel and the general kernel, its launch geometry and argument packing
// (backends/hip/hip_attention.cpp's attention_launch). No GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "backends/hip/hip_launch.h"
#include "backends/hip/hip_ops.h"
#include "hal/error.h"
#include "hip/kernels/attention_geometry.h"

namespace hal::hip_test {

namespace {

hip::HipDeviceCaps mi300x_caps() {
  hip::HipDeviceCaps caps;
  caps.compute_units = 304;
  caps.max_shared_per_block = 64 * 1024;
  return caps;
}

// Contiguous [b, s, h, d] views at a 16-byte-aligned (fake) address.
AttentionCall call(DType t, std::int64_t b, std::int64_t sq, std::int64_t sk, std::int64_t hq, std::int64_t hkv,
                   std::int64_t d, std::int64_t dv) {
  void* base = reinterpret_cast<void*>(std::uintptr_t{1} << 20);
  AttentionCall c;
  c.q = Tensor::contiguous(base, nullptr, t, Shape{b, sq, hq, d});
  c.k = Tensor::contiguous(base, nullptr, t, Shape{b, sk, hkv, d});
  c.v = Tensor::contiguous(base, nullptr, t, Shape{b, sk, hkv, dv});
  c.y = Tensor::contiguous(base, nullptr, t, Shape{b, sq, hq, dv});
  c.scale = 0.125f;
  return c;
}

std::string kernel_of(const AttentionCall& c, bool flash_enabled = true) {
  const char* k = hip::attention_launch(c, mi300x_caps(), flash_enabled).kernel;
  return k ? k : "(none)";
}

}  // namespace

TEST(HipHost, AttentionFlashTakesF16AndBf16HeadDims64And128) {
  EXPECT_EQ(kernel_of(call(DType::f16, 1, 7, 9, 2, 2, 64, 64)), "attention_flash_f16_d64");
  EXPECT_EQ(kernel_of(call(DType::f16, 1, 7, 9, 2, 2, 128, 128)), "attention_flash_f16_d128");
  EXPECT_EQ(kernel_of(call(DType::bf16, 1, 7, 9, 2, 2, 64, 64)), "attention_flash_bf16_d64");
  EXPECT_EQ(kernel_of(call(DType::bf16, 1, 7, 9, 2, 2, 128, 128)), "attention_flash_bf16_d128");
}

// With the lse output the same choice takes the *_lse variant of each kernel;
// dv == 0 still launches (lse is written), without lse it launches nothing.
TEST(HipHost, AttentionLseTakesTheLseVariantOfEitherKernel) {
  float lse_storage[1] = {};
  auto with_lse = [&](AttentionCall c) {
    c.lse = Tensor::contiguous(lse_storage, nullptr, DType::f32, Shape{c.q.shape[0], c.q.shape[1], c.q.shape[2]});
    return c;
  };
  EXPECT_EQ(kernel_of(with_lse(call(DType::f16, 1, 7, 9, 2, 2, 64, 64))), "attention_flash_f16_d64_lse");
  EXPECT_EQ(kernel_of(with_lse(call(DType::bf16, 1, 7, 9, 2, 2, 128, 128))), "attention_flash_bf16_d128_lse");
  EXPECT_EQ(kernel_of(with_lse(call(DType::f32, 1, 7, 9, 2, 2, 64, 64))), "attention_general_lse");
  EXPECT_EQ(kernel_of(with_lse(call(DType::f16, 1, 7, 9, 2, 2, 64, 64)), false), "attention_general_lse");
  EXPECT_EQ(kernel_of(with_lse(call(DType::f32, 1, 7, 9, 2, 2, 16, 0))), "attention_general_lse");
  EXPECT_EQ(kernel_of(call(DType::f32, 1, 7, 9, 2, 2, 16, 0)), "(none)");
}

TEST(HipHost, AttentionFlashGridIsQueryTilesByHeadsByBatch) {
  AttentionCall c = call(DType::bf16, 3, 300, 257, 8, 2, 128, 128);
  c.causal = true;
  const hip::AttentionLaunch l = hip::attention_launch(c, mi300x_caps(), true);
  ASSERT_NE(l.kernel, nullptr);
  EXPECT_EQ(std::string(l.kernel), "attention_flash_bf16_d128");
  EXPECT_EQ(l.shape.grid[0], 3u);  // ceil(300 / 128) query tiles
  EXPECT_EQ(l.shape.grid[1], 8u);  // query heads
  EXPECT_EQ(l.shape.grid[2], 3u);  // batch
  EXPECT_EQ(l.shape.block[0], 256u);
  EXPECT_EQ(l.shape.block[1], 1u);
  EXPECT_EQ(l.shape.shared_bytes, 0u);  // static LDS only
  EXPECT_EQ(hip::kernels::kFlashBlockQ, 128);
  // Arguments: shapes from q/k/v, grouped-query heads, element strides.
  const kernel_params::AttentionParams& p = l.params;
  EXPECT_EQ(p.batch, 3);
  EXPECT_EQ(p.sq, 300);
  EXPECT_EQ(p.sk, 257);
  EXPECT_EQ(p.hq, 8);
  EXPECT_EQ(p.hkv, 2);
  EXPECT_EQ(p.d, 128);
  EXPECT_EQ(p.dv, 128);
  EXPECT_EQ(p.q_stride[0], 300 * 8 * 128);
  EXPECT_EQ(p.q_stride[1], 8 * 128);
  EXPECT_EQ(p.q_stride[2], 128);
  EXPECT_EQ(p.q_stride[3], 1);
  EXPECT_EQ(p.k_stride[0], 257 * 2 * 128);
  EXPECT_EQ(p.k_stride[1], 2 * 128);
  EXPECT_EQ(p.v_stride[2], 128);
  EXPECT_EQ(p.y_stride[1], 8 * 128);
  EXPECT_EQ(p.causal, 1);
  EXPECT_EQ(p.scale, 0.125f);
  EXPECT_EQ(p.qkv_type, static_cast<std::int32_t>(DType::bf16));
  EXPECT_EQ(p.y_type, static_cast<std::int32_t>(DType::bf16));
  EXPECT_EQ(p.q, c.q.first());
  EXPECT_EQ(p.y, c.y.first());
}

TEST(HipHost, AttentionGeneralTakesF32OtherHeadDimsAndMixedDtypes) {
  EXPECT_EQ(kernel_of(call(DType::f32, 1, 7, 9, 2, 2, 64, 64)), "attention_general");
  EXPECT_EQ(kernel_of(call(DType::f16, 1, 7, 9, 2, 2, 96, 96)), "attention_general");
  EXPECT_EQ(kernel_of(call(DType::f16, 1, 7, 9, 2, 2, 256, 256)), "attention_general");
  EXPECT_EQ(kernel_of(call(DType::bf16, 1, 7, 9, 2, 2, 64, 128)), "attention_general");  // d != dv
  AttentionCall mixed = call(DType::bf16, 1, 7, 9, 2, 2, 64, 64);
  mixed.y = Tensor::contiguous(mixed.y.data, nullptr, DType::f32, mixed.y.shape);  // f32 output
  EXPECT_EQ(kernel_of(mixed), "attention_general");
}

TEST(HipHost, AttentionGeneralGridHasOneWavePerRow) {
  const AttentionCall c = call(DType::f32, 2, 5, 9, 3, 1, 72, 72);
  const hip::AttentionLaunch l = hip::attention_launch(c, mi300x_caps(), true);
  ASSERT_NE(l.kernel, nullptr);
  EXPECT_EQ(std::string(l.kernel), "attention_general");
  EXPECT_EQ(l.shape.block[0], 256u);
  EXPECT_EQ(l.shape.grid[0], 8u);  // 2*5*3 = 30 rows, 4 per workgroup
  EXPECT_EQ(l.shape.grid[1], 1u);
  EXPECT_EQ(l.params.hkv, 1);
  EXPECT_EQ(l.params.d, 72);
}

TEST(HipHost, AttentionFlashNeeds16ByteRowsElseGeneral) {
  AttentionCall c = call(DType::f16, 1, 16, 16, 2, 2, 64, 64);
  EXPECT_EQ(kernel_of(c), "attention_flash_f16_d64");
  AttentionCall off = c;
  off.k.offset = 4;  // first element 8 bytes past a 16-byte boundary
  EXPECT_EQ(kernel_of(off), "attention_general");
  AttentionCall off8 = c;
  off8.v.offset = 8;  // 16 bytes: still aligned
  EXPECT_EQ(kernel_of(off8), "attention_flash_f16_d64");
  AttentionCall permuted = c;
  permuted.q.strides = Strides{16 * 64 * 2, 64 * 2, 1, 2};  // [b, s, d, h] storage: channel stride 2
  EXPECT_EQ(kernel_of(permuted), "attention_general");
  AttentionCall odd_row = c;
  odd_row.y.strides = Strides{16 * 2 * 68, 2 * 68, 68, 1};  // head stride 68: 8-byte, not 16-byte rows
  EXPECT_EQ(kernel_of(odd_row), "attention_general");
}

TEST(HipHost, AttentionFlashCanBeSwitchedOffAndNeedsTheLds) {
  const AttentionCall c = call(DType::bf16, 1, 16, 16, 4, 1, 128, 128);
  EXPECT_EQ(kernel_of(c, false), "attention_general");
  hip::HipDeviceCaps small = mi300x_caps();
  small.max_shared_per_block = 16 * 1024;
  EXPECT_EQ(std::string(hip::attention_launch(c, small, true).kernel), "attention_general");
  // Both head dims fit three workgroups in a CU's 64 KiB.
  EXPECT_LE(3 * hip::kernels::flash_lds_bytes(64), 64u * 1024u);
  EXPECT_LE(3 * hip::kernels::flash_lds_bytes(128), 64u * 1024u);
}

TEST(HipHost, AttentionWithNoRowsLaunchesNothingAndHugeHeadsThrow) {
  EXPECT_EQ(kernel_of(call(DType::f16, 1, 0, 9, 2, 2, 64, 64)), "(none)");
  EXPECT_EQ(kernel_of(call(DType::f16, 0, 7, 9, 2, 2, 64, 64)), "(none)");
  try {
    hip::attention_launch(call(DType::f16, 1, 7, 9, 2, 2, 320, 320), mi300x_caps(), true);
    ADD_FAILURE() << "no error for head dim 320";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
  }
}

}  // namespace hal::hip_test
