// attention_backward's GPU host side, shared by both backends: argument
// packing (attention_backward_params, backends/gpu/kernel_args_training.cpp),
// the kernel plan (backends/gpu/attention_backward_plan.cpp) and the support
// matrix's unverified switch for it. Runs on the CPU; the kernels themselves
// have never run on a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "backends/gpu/attention_backward_plan.h"
#include "backends/gpu/kernel_args.h"
#include "backends/gpu/support.h"
#include "backends/gpu/unverified.h"
#include "hal/error.h"
#include "hip/kernels/attention_backward_geometry.h"
#include "ptx/kernels/attention_backward_geometry.h"
#include "tests/unverified_switch.h"

namespace hal::gpu_test {

namespace kp = kernel_params;

static_assert(std::is_trivially_copyable_v<kp::AttentionBackwardParams> &&
                  std::is_standard_layout_v<kp::AttentionBackwardParams>,
              "kernel parameter structs must be plain bytes");

namespace {

using test::UnverifiedSwitch;

// Contiguous tensors at a 16-byte-aligned fake address.
AttentionBackwardCall call(DType t, std::int64_t b, std::int64_t sq, std::int64_t sk, std::int64_t hq, std::int64_t hkv,
                           std::int64_t d, std::int64_t dv, bool causal = false) {
  void* base = reinterpret_cast<void*>(std::uintptr_t{1} << 20);
  AttentionBackwardCall c;
  c.q = c.dq = Tensor::contiguous(base, nullptr, t, Shape{b, sq, hq, d});
  c.k = c.dk = Tensor::contiguous(base, nullptr, t, Shape{b, sk, hkv, d});
  c.v = c.dv = Tensor::contiguous(base, nullptr, t, Shape{b, sk, hkv, dv});
  c.y = c.dy = Tensor::contiguous(base, nullptr, t, Shape{b, sq, hq, dv});
  c.lse = Tensor::contiguous(base, nullptr, DType::f32, Shape{b, sq, hq});
  c.scale = 0.125f;
  c.causal = causal;
  return c;
}

gpu::AttentionBackwardTarget cuda_target() {
  gpu::AttentionBackwardTarget t;
  t.warp_size = 32;
  t.tensor_cores = true;
  t.max_shared_per_block = 227 * 1024;
  return t;
}

gpu::AttentionBackwardPlan plan_of(const AttentionBackwardCall& c, const gpu::AttentionBackwardTarget& t = cuda_target()) {
  return gpu::plan_attention_backward(c, gpu::attention_backward_params(c, "test"), t, "test");
}

std::string name(const gpu::AttentionBackwardStep& s) { return s.kernel ? s.kernel : "(none)"; }


}  // namespace

TEST(GpuAttentionBackward, ParamsCarryEveryTensorsPointerAndStrides) {
  AttentionBackwardCall c = call(DType::bf16, 2, 5, 9, 8, 2, 64, 32, true);
  float lse_storage[200] = {};
  c.lse = Tensor::contiguous(lse_storage, nullptr, DType::f32, Shape{2, 5, 8});
  c.lse.strides = {80, 16, 2};
  c.lse.offset = 1;
  c.dk = Tensor::contiguous(reinterpret_cast<void*>(std::uintptr_t{1} << 24), nullptr, DType::bf16, Shape{2, 9, 2, 64});
  c.dk.strides = {9 * 2 * 128, 2 * 128, 128, 2};  // every other channel
  const kp::AttentionBackwardParams p = gpu::attention_backward_params(c, "test");
  EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(p.sq, 5);
  EXPECT_EQ(p.sk, 9);
  EXPECT_EQ(p.hq, 8);
  EXPECT_EQ(p.hkv, 2);
  EXPECT_EQ(p.d, 64);
  EXPECT_EQ(p.dv_dim, 32);
  EXPECT_EQ(p.dtype, static_cast<std::uint8_t>(DType::bf16));
  EXPECT_EQ(p.causal, 1);
  EXPECT_EQ(p.scale, 0.125f);
  EXPECT_EQ(p.lse, lse_storage + 1);
  EXPECT_EQ(p.lse_stride[0], 80);
  EXPECT_EQ(p.lse_stride[1], 16);
  EXPECT_EQ(p.lse_stride[2], 2);
  EXPECT_EQ(p.dk_stride[3], 2);
  EXPECT_EQ(p.dk_stride[2], 128);
  EXPECT_EQ(p.v_stride[1], 2 * 32);
  EXPECT_EQ(p.dy_stride[2], 32);
  EXPECT_EQ(p.delta, nullptr);  // the launcher's scratch

  AttentionBackwardCall wide = c;
  wide.q = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{1, 1, std::int64_t{1} << 31, 1});
  try {
    gpu::attention_backward_params(wide, "test");
    FAIL() << "a head count of 2^31 fits no int32 field";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("attention_backward"), std::string::npos) << e.what();
  }
}

// The masks the kernels share (kernel_params/attention_backward.h), against
// the forward's rule: key j is masked for query i when j > i + (sk - sq).
TEST(GpuAttentionBackward, CausalRangesMatchTheForwardsMask) {
  for (auto [sq, sk] : {std::pair<std::int64_t, std::int64_t>{9, 5}, {5, 9}, {7, 7}, {1, 257}}) {
    const kp::AttentionBackwardParams p = gpu::attention_backward_params(call(DType::f32, 1, sq, sk, 1, 1, 4, 4, true), "t");
    for (std::int64_t i = 0; i < sq; ++i)
      for (std::int64_t j = 0; j < sk; ++j) {
        const bool visible = j <= i + (sk - sq);
        EXPECT_EQ(j < kp::keys_of_query(p, i), visible) << sq << "x" << sk << " i=" << i << " j=" << j;
        EXPECT_EQ(i >= kp::first_query_of_key(p, j), visible) << sq << "x" << sk << " i=" << i << " j=" << j;
      }
  }
  const kp::AttentionBackwardParams full = gpu::attention_backward_params(call(DType::f32, 1, 9, 5, 1, 1, 4, 4), "t");
  EXPECT_EQ(kp::keys_of_query(full, 0), 5);
  EXPECT_EQ(kp::first_query_of_key(full, 4), 0);
}

TEST(GpuAttentionBackward, TensorCoresTakeF16AndBf16HeadDims64And128) {
  const gpu::AttentionBackwardPlan p = plan_of(call(DType::bf16, 3, 300, 257, 8, 2, 128, 128, true));
  EXPECT_TRUE(p.tensor_cores);
  EXPECT_EQ(name(p.delta), "hal_attention_bwd_delta_bf16");
  EXPECT_EQ(p.delta_floats, 3 * 300 * 8);
  EXPECT_EQ(p.delta.grid[0], (3 * 300 * 8 + 7) / 8);  // 8 warps of 32 per block
  EXPECT_EQ(p.delta.block, 256);
  EXPECT_EQ(name(p.dkdv), "hal_attention_bwd_dkdv_mma_bf16_d128");
  EXPECT_EQ(p.dkdv.grid[0], (257 + ptx::kBwdBlockKeys - 1) / ptx::kBwdBlockKeys);
  EXPECT_EQ(p.dkdv.grid[1], 2);  // kv heads
  EXPECT_EQ(p.dkdv.grid[2], 3);
  EXPECT_EQ(p.dkdv.block, 32 * 8);  // d = 128: a dV warp and a dK warp per 16 keys
  EXPECT_EQ(p.dkdv.shared_bytes, ptx::bwd_dkdv_shared_bytes(128));
  EXPECT_EQ(p.dq.block, 32 * ptx::kBwdWarps);
  EXPECT_EQ(plan_of(call(DType::bf16, 1, 7, 9, 2, 2, 64, 64)).dkdv.block, 32 * 4);
  EXPECT_EQ(name(p.dq), "hal_attention_bwd_dq_mma_bf16_d128");
  EXPECT_EQ(p.dq.grid[0], (300 + ptx::kBwdBlockQueries - 1) / ptx::kBwdBlockQueries);
  EXPECT_EQ(p.dq.grid[1], 8);  // query heads
  EXPECT_EQ(p.dq.shared_bytes, ptx::bwd_dq_shared_bytes(128));
  EXPECT_EQ(name(plan_of(call(DType::f16, 1, 7, 9, 2, 2, 64, 64)).dkdv), "hal_attention_bwd_dkdv_mma_f16_d64");
  EXPECT_EQ(name(plan_of(call(DType::f16, 1, 7, 9, 2, 2, 64, 64)).dq), "hal_attention_bwd_dq_mma_f16_d64");
  // The shared memory of both head dims as the kernels lay it out.
  EXPECT_EQ(ptx::bwd_dkdv_shared_bytes(64), (64 + 64 + 64 + 64) * 64 * 2 + 2 * 64 * 4);
  EXPECT_EQ(ptx::bwd_dkdv_shared_bytes(128), (64 + 64 + 32 + 32) * 128 * 2 + 2 * 32 * 4);
  EXPECT_EQ(ptx::bwd_dq_shared_bytes(128), (64 + 64 + 32 + 32) * 128 * 2 + 2 * 64 * 4);
}

TEST(GpuAttentionBackward, OtherShapesTakeTheGeneralKernels) {
  auto general = [](const AttentionBackwardCall& c, const gpu::AttentionBackwardTarget& t = cuda_target()) {
    const gpu::AttentionBackwardPlan p = plan_of(c, t);
    EXPECT_FALSE(p.tensor_cores);
    return name(p.dkdv) + " " + name(p.dq);
  };
  EXPECT_EQ(general(call(DType::f32, 1, 7, 9, 2, 2, 64, 64)),
            "hal_attention_bwd_dkdv_general_f32 hal_attention_bwd_dq_general_f32");
  EXPECT_EQ(general(call(DType::f16, 1, 7, 9, 2, 2, 96, 96)),
            "hal_attention_bwd_dkdv_general_f16 hal_attention_bwd_dq_general_f16");
  EXPECT_EQ(general(call(DType::bf16, 1, 7, 9, 2, 2, 64, 128)),  // d != dv
            "hal_attention_bwd_dkdv_general_bf16 hal_attention_bwd_dq_general_bf16");
  AttentionBackwardCall odd = call(DType::bf16, 1, 7, 9, 2, 2, 64, 64);
  odd.dq = Tensor::contiguous(reinterpret_cast<void*>((std::uintptr_t{1} << 20) + 8), nullptr, DType::bf16,
                              Shape{1, 7, 2, 64});  // 8-byte-aligned rows only
  EXPECT_EQ(general(odd), "hal_attention_bwd_dkdv_general_bf16 hal_attention_bwd_dq_general_bf16");
  gpu::AttentionBackwardTarget off = cuda_target();
  off.tensor_cores = false;
  EXPECT_EQ(general(call(DType::f16, 1, 7, 9, 2, 2, 64, 64), off),
            "hal_attention_bwd_dkdv_general_f16 hal_attention_bwd_dq_general_f16");
  gpu::AttentionBackwardTarget small = cuda_target();
  small.max_shared_per_block = 48 * 1024;  // the dq kernel needs more at d = 128
  EXPECT_EQ(general(call(DType::f16, 1, 7, 9, 2, 2, 128, 128), small),
            "hal_attention_bwd_dkdv_general_f16 hal_attention_bwd_dq_general_f16");
  EXPECT_TRUE(plan_of(call(DType::f16, 1, 7, 9, 2, 2, 64, 64), small).tensor_cores);

  // Rows per block follow the warp size: 8 warps of 32, 4 waves of 64.
  gpu::AttentionBackwardTarget hip;
  hip.warp_size = 64;
  const gpu::AttentionBackwardPlan p = plan_of(call(DType::f32, 2, 5, 9, 4, 2, 16, 16), hip);
  EXPECT_EQ(p.dkdv.grid[0], (2 * 9 * 2 + 3) / 4);
  EXPECT_EQ(p.dq.grid[0], (2 * 5 * 4 + 3) / 4);
  EXPECT_EQ(p.delta.grid[0], (2 * 5 * 4 + 3) / 4);
  EXPECT_EQ(name(p.dkdv), "hal_attention_bwd_dkdv_general_f32");
}

// HIP's MFMA pair: 4 wave64s of 32 keys / queries, static LDS.
TEST(GpuAttentionBackward, MfmaKernelsOnHip) {
  gpu::AttentionBackwardTarget hip;
  hip.warp_size = 64;
  hip.tensor_cores = true;
  hip.mfma = true;
  hip.max_shared_per_block = 64 * 1024;
  const gpu::AttentionBackwardPlan p = plan_of(call(DType::f16, 2, 300, 257, 8, 2, 128, 128, true), hip);
  EXPECT_TRUE(p.tensor_cores);
  EXPECT_EQ(name(p.dkdv), "hal_attention_bwd_dkdv_mfma_f16_d128");
  EXPECT_EQ(name(p.dq), "hal_attention_bwd_dq_mfma_f16_d128");
  EXPECT_EQ(p.dkdv.grid[0], (257 + hip::kernels::kMfmaBwdBlockKeys - 1) / hip::kernels::kMfmaBwdBlockKeys);
  EXPECT_EQ(p.dq.grid[0], (300 + hip::kernels::kMfmaBwdBlockQueries - 1) / hip::kernels::kMfmaBwdBlockQueries);
  EXPECT_EQ(p.dkdv.block, hip::kernels::kMfmaBwdThreads);
  EXPECT_EQ(p.dkdv.shared_bytes, 0u);
  EXPECT_EQ(p.dq.shared_bytes, 0u);
  EXPECT_EQ(p.delta.grid[0], (2 * 300 * 8 + 3) / 4);  // 4 waves per block
  EXPECT_EQ(name(plan_of(call(DType::bf16, 1, 7, 9, 2, 2, 64, 64), hip).dq), "hal_attention_bwd_dq_mfma_bf16_d64");
  EXPECT_FALSE(plan_of(call(DType::f32, 1, 7, 9, 2, 2, 64, 64), hip).tensor_cores);
}

// No keys: dq is still written (zeros), dk/dv are empty; no queries: dk and dv
// are still written (zeros), there is no D and no dq.
TEST(GpuAttentionBackward, EmptySidesStillWriteTheOtherGradients) {
  for (DType t : {DType::f32, DType::bf16}) {
    const gpu::AttentionBackwardPlan no_keys = plan_of(call(t, 1, 5, 0, 2, 2, 64, 64));
    EXPECT_EQ(no_keys.dkdv.kernel, nullptr);
    EXPECT_NE(no_keys.dq.kernel, nullptr);
    EXPECT_NE(no_keys.delta.kernel, nullptr);  // the dq kernels read D of every row
    const gpu::AttentionBackwardPlan no_queries = plan_of(call(t, 1, 0, 9, 2, 2, 64, 64));
    EXPECT_NE(no_queries.dkdv.kernel, nullptr);
    EXPECT_EQ(no_queries.dq.kernel, nullptr);
    EXPECT_EQ(no_queries.delta.kernel, nullptr);
    EXPECT_EQ(no_queries.delta_floats, 0);
  }
  const gpu::AttentionBackwardPlan none = plan_of(call(DType::f32, 0, 5, 9, 2, 2, 16, 16));
  EXPECT_EQ(none.dkdv.kernel, nullptr);
  EXPECT_EQ(none.dq.kernel, nullptr);
  EXPECT_EQ(none.delta.kernel, nullptr);
}

TEST(GpuAttentionBackward, IsBehindTheUnverifiedSwitch) {
  const OpCall c = call(DType::bf16, 1, 5, 9, 2, 1, 64, 64, true);
  {
    UnverifiedSwitch off(nullptr);
    const Support s = gpu_supports_call("cuda", c);
    EXPECT_FALSE(s.ok);
    EXPECT_NE(s.reason.find("attention_backward"), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find("HAL_GPU_UNVERIFIED=1"), std::string::npos) << s.reason;
  }
  UnverifiedSwitch on("1");
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    EXPECT_TRUE(gpu_supports_call("hip", call(t, 1, 5, 9, 2, 1, 64, 64)).ok) << dtype_name(t);
  AttentionBackwardCall f64 = call(DType::f64, 1, 5, 9, 2, 1, 64, 64);
  f64.lse.dtype = DType::f64;
  EXPECT_FALSE(gpu_supports_call("cuda", f64).ok);
}

}  // namespace hal::gpu_test
