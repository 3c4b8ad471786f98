// The training kernels' host side, shared by both GPU backends: argument
// packing (backends/gpu/kernel_args_training.cpp), the shape-only helpers the
// kernels call (kernel_params/training.h), the launch geometry
// (backends/gpu/training_geometry.h) and the support matrix's unverified-kernel
// switch (HAL_GPU_UNVERIFIED, backends/gpu/unverified.h). Runs on the CPU: the
// kernels themselves have never run on a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "backends/gpu/kernel_args.h"
#include "backends/gpu/support.h"
#include "backends/gpu/training_geometry.h"
#include "backends/gpu/unverified.h"
#include "cpu_ref/row_blocks.h"
#include "kernel_params/training.h"
#include "tests/unverified_switch.h"

namespace hal::gpu_test {

using test::UnverifiedSwitch;

namespace kp = kernel_params;

template <class... T>
constexpr bool all_plain = ((std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T>) && ...);
static_assert(all_plain<kp::UnaryBackwardParams, kp::SwigluBackwardParams, kp::AdamwParams, kp::GlobalNormPartialParams,
                        kp::GlobalNormFinishParams, kp::SoftmaxBackwardParams, kp::NormBackwardParams,
                        kp::CrossEntropyCheckParams, kp::CrossEntropyParams, kp::CrossEntropyReduceParams>,
              "kernel parameter structs must be plain bytes");

Tensor view(DType t, const Shape& shape, const Strides& strides, std::int64_t offset = 0) {
  Tensor x = Tensor::contiguous(reinterpret_cast<void*>(std::uintptr_t{4096}), nullptr, t, shape);
  x.strides = strides;
  x.offset = offset;
  return x;
}


TEST(GpuTrainingArgs, UnaryBackwardKeepsEachTensorsStrides) {
  UnaryBackwardCall c{UnaryKind::gelu_tanh, view(DType::bf16, Shape{3, 4}, Strides{1, 3}),
                      view(DType::bf16, Shape{3, 4}, Strides{8, 1}, 2), view(DType::bf16, Shape{3, 4}, Strides{4, 1})};
  const kp::UnaryBackwardParams p = gpu::unary_backward_params(c);
  EXPECT_EQ(p.n, 12);
  EXPECT_EQ(p.op, static_cast<std::int32_t>(UnaryKind::gelu_tanh));
  EXPECT_EQ(p.dtype, static_cast<std::int32_t>(DType::bf16));
  EXPECT_EQ(p.shape.rank, 2);
  EXPECT_EQ(p.x_strides.s[0], 1);
  EXPECT_EQ(p.x_strides.s[1], 3);
  EXPECT_EQ(p.dy_strides.s[0], 8);
  // dy's offset is in its pointer: 2 bf16 elements past the base.
  EXPECT_EQ(static_cast<const char*>(p.dy) - static_cast<const char*>(p.x), 4);
  // Element (2, 1) of x is at 2*1 + 1*3 = 5, of dy at 2*8 + 1 = 17.
  EXPECT_EQ(kp::strided_offset(p.shape, p.x_strides, 2 * 4 + 1), 5);
  EXPECT_EQ(kp::strided_offset(p.shape, p.dy_strides, 2 * 4 + 1), 17);
}

TEST(GpuTrainingArgs, AdamwScalarsAreTheFp64ExpressionsRoundedOnce) {
  AdamwCall c;
  c.param = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{5});
  c.grad = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{5});
  c.m = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{5});
  c.v = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{5});
  c.master = Tensor::contiguous(reinterpret_cast<void*>(std::uintptr_t{64}), nullptr, DType::f32, Shape{5});
  c.lr = 3e-4f;
  c.beta1 = 0.8f;
  c.beta2 = 0.95f;
  c.weight_decay = 0.1f;
  c.step = 7;
  const kp::AdamwParams p = gpu::adamw_params(c);
  const double b1 = 0.8f, b2 = 0.95f, lr = 3e-4f, wd = 0.1f;
  EXPECT_EQ(p.step_size, static_cast<float>(lr / (1.0 - std::pow(b1, 7.0))));
  EXPECT_EQ(p.inv_sqrt_bc2, static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(b2, 7.0))));
  EXPECT_EQ(p.decay, static_cast<float>(1.0 - lr * wd));
  EXPECT_EQ(p.one_minus_beta2, static_cast<float>(1.0 - b2));
  EXPECT_EQ(p.n, 5);
  EXPECT_NE(p.master, nullptr);
  EXPECT_EQ(p.param_type, static_cast<std::int32_t>(DType::bf16));
  c.master.reset();
  EXPECT_EQ(gpu::adamw_params(c).master, nullptr);
}

TEST(GpuTrainingArgs, RowTensorOffsetsWalkEachTensorsOuterStrides) {
  // [2, 3, 5]: y contiguous, dy with its two outer axes swapped, dx padded rows of 8.
  SoftmaxBackwardCall c;
  c.y = view(DType::f32, Shape{2, 3, 5}, Strides{15, 5, 1});
  c.dy = view(DType::f32, Shape{2, 3, 5}, Strides{5, 10, 1});
  c.dx = view(DType::f32, Shape{2, 3, 5}, Strides{24, 8, 1});
  c.causal = true;
  const kp::SoftmaxBackwardParams p = gpu::softmax_backward_params(c);
  EXPECT_EQ(p.layout.rows, 6);
  EXPECT_EQ(p.layout.cols, 5);
  EXPECT_EQ(p.layout.outer_rank, 2);
  std::int64_t off[kp::kRowTensors], q = -1;
  kp::row_tensor_offsets(p.layout, 5, off, &q);  // row 5 = (1, 2)
  EXPECT_EQ(off[0], 15 + 2 * 5);
  EXPECT_EQ(off[1], 5 + 2 * 10);
  EXPECT_EQ(off[2], 24 + 2 * 8);
  EXPECT_EQ(q, 2);
  // Causal with Lq = 3, Lk = 5: query q sees q + 3 keys.
  EXPECT_EQ(kp::softmax_visible_keys(p.layout, 0, 1), 3);
  EXPECT_EQ(kp::softmax_visible_keys(p.layout, 2, 1), 5);
  EXPECT_EQ(kp::softmax_visible_keys(p.layout, 0, 0), 5);
}

TEST(GpuTrainingArgs, CausalRowsWithMoreQueriesThanKeysSeeNone) {
  const Tensor y = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{4, 2});
  const kp::RowTensors l = gpu::row_tensors(y, y, y);
  EXPECT_EQ(kp::softmax_visible_keys(l, 0, 1), 0);  // 0 + (2 - 4) + 1 < 0
  EXPECT_EQ(kp::softmax_visible_keys(l, 2, 1), 1);
  EXPECT_EQ(kp::softmax_visible_keys(l, 3, 1), 2);
}

TEST(GpuTrainingArgs, NormBackwardUsesTheCpusRowBlocks) {
  for (std::int64_t rows : {0, 1, 31, 32, 33, 8191, 8192, 8193, 100000}) {
    const cpu_ref::rows::RowBlocks cpu(rows);
    EXPECT_EQ(kp::norm_backward_block_rows(rows), cpu.size) << rows;
    EXPECT_EQ(kp::norm_backward_blocks(rows), cpu.count) << rows;
  }
  NormBackwardCall c;
  c.x = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{100, 7});
  c.dy = c.x;
  c.dx = c.x;
  c.weight = view(DType::bf16, Shape{7}, Strides{2});
  c.dweight = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{7});
  c.dbias = Tensor::contiguous(reinterpret_cast<void*>(std::uintptr_t{64}), nullptr, DType::bf16, Shape{7});
  kp::NormBackwardParams p = gpu::norm_backward_params(c);
  EXPECT_EQ(p.block_rows, 32);
  EXPECT_EQ(p.blocks, 4);
  EXPECT_EQ(p.weight_stride, 2);
  EXPECT_NE(p.dbias, nullptr);
  EXPECT_EQ(gpu::norm_backward_scratch_floats(p), 2 * 100 + 2 * 4 * 7);
  c.dbias.reset();
  c.rms = true;
  p = gpu::norm_backward_params(c);
  EXPECT_EQ(p.dbias, nullptr);
  EXPECT_EQ(p.rms, 1);
  EXPECT_EQ(gpu::norm_backward_scratch_floats(p), 2 * 100 + 4 * 7);
}

TEST(GpuTrainingArgs, RopeBackwardIsTheForwardRotationInverted) {
  RopeBackwardCall c;
  c.dy = Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{1, 3, 2, 8});
  c.dx = c.dy;
  c.positions = Tensor::contiguous(nullptr, nullptr, DType::i32, Shape{3});
  c.rotary_dim = 4;
  c.style = RopeStyle::gptj;
  c.theta = 500000.0f;
  const kp::RopeParams p = gpu::rope_backward_params(c);
  const RopeCall fwd{c.dy, c.positions, c.dx, c.theta, c.style, c.rotary_dim, c.inv_freq};
  const kp::RopeParams f = gpu::rope_params(fwd);
  EXPECT_EQ(p.inverse, 1);
  EXPECT_EQ(f.inverse, 0);
  EXPECT_EQ(p.rotary_dim, 4);
  EXPECT_EQ(p.gptj, 1);
  EXPECT_EQ(p.theta, 500000.0f);
  EXPECT_EQ(p.pos_batch_stride, 0);
}

TEST(GpuTrainingArgs, GlobalNormChunkRangesFollowTheTensorSizes) {
  GlobalNormCall c;
  c.xs = {Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{0}),
          Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{128, 128}),
          Tensor::contiguous(nullptr, nullptr, DType::f16, Shape{kp::kGlobalNormChunk + 1})};
  c.y = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{});
  const kp::GlobalNormFinishParams p = gpu::global_norm_finish_params(c, nullptr);
  EXPECT_EQ(p.tensors, 3);
  EXPECT_EQ(p.chunk_begin[0], 0);
  EXPECT_EQ(p.chunk_begin[1], 0);
  EXPECT_EQ(p.chunk_begin[2], 1);
  EXPECT_EQ(p.chunk_begin[3], 3);
  float slots[4];
  EXPECT_EQ(gpu::global_norm_partial_params(c.xs[2], slots + 1).partials, slots + 1);
  EXPECT_EQ(gpu::global_norm_partial_params(c.xs[2], slots).n, kp::kGlobalNormChunk + 1);
}

TEST(GpuTrainingArgs, LaunchGeometryCoversEveryColumnAndRowBlock) {
  EXPECT_EQ(gpu::one_block_per_item(7).x, 7);
  EXPECT_EQ(gpu::one_block_per_item(1000000).x, gpu::kTrainingMaxGridBlocks);
  const gpu::TrainingGrid g = gpu::norm_partials_grid(257, 3);
  EXPECT_EQ(g.x, 2);
  EXPECT_EQ(g.y, 3);
  EXPECT_EQ(gpu::norm_partials_grid(257, 0).x, 0);
  EXPECT_EQ(gpu::norm_finish_grid(256).x, 1);
  EXPECT_EQ(gpu::norm_finish_grid(257).x, 2);
}

TEST(GpuTrainingArgs, CrossEntropyConstantsAreTheCpusFp32Ones) {
  CrossEntropyCall c;
  c.logits = view(DType::bf16, Shape{3, 7}, Strides{1, 3});
  c.targets = view(DType::i32, Shape{3}, Strides{2});
  c.loss = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{3});
  c.label_smoothing = 0.1f;
  c.reduction = LossReduction::none;
  kp::CrossEntropyParams p = gpu::cross_entropy_params(c, 2);
  EXPECT_EQ(p.n, 3);
  EXPECT_EQ(p.vocab, 7);
  EXPECT_EQ(p.logits_row_stride, 1);
  EXPECT_EQ(p.logits_col_stride, 3);
  EXPECT_EQ(p.targets_stride, 2);
  EXPECT_EQ(p.targets_i64, 0);
  EXPECT_EQ(p.dlogits, nullptr);
  EXPECT_EQ(p.keep, 1.0f - 0.1f);
  EXPECT_EQ(p.spread, 0.1f / 7.0f);
  EXPECT_EQ(p.weight, 1.0f);  // none: the gradient of the sum of the rows
  EXPECT_EQ(p.row_loss, c.loss.first());  // none: the rows go straight to loss
  c.reduction = LossReduction::mean;
  c.loss = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{});
  p = gpu::cross_entropy_params(c, 2);
  EXPECT_EQ(p.weight, 0.5f);
  EXPECT_EQ(p.row_loss, nullptr);  // sum / mean: the launcher's scratch
  const kp::CrossEntropyCheckParams k = gpu::cross_entropy_check_params(c);
  EXPECT_EQ(k.n, 3);
  EXPECT_EQ(k.vocab, 7);
  EXPECT_EQ(k.ignore_index, -100);
}

// One op per kernel family, both sides of the switch.
OpCall unary_backward_call(DType t) {
  const Tensor x = Tensor::contiguous(nullptr, nullptr, t, Shape{4});
  return UnaryBackwardCall{UnaryKind::silu, x, x, x};
}
OpCall norm_backward_call(DType t) {
  NormBackwardCall c;
  c.x = c.dy = c.dx = Tensor::contiguous(nullptr, nullptr, t, Shape{2, 4});
  c.weight = c.dweight = Tensor::contiguous(nullptr, nullptr, t, Shape{4});
  return c;
}
OpCall rope_backward_call(DType t) {
  RopeBackwardCall c;
  c.dy = c.dx = Tensor::contiguous(nullptr, nullptr, t, Shape{1, 2, 1, 4});
  c.positions = Tensor::contiguous(nullptr, nullptr, DType::i32, Shape{2});
  c.rotary_dim = 4;
  return c;
}
OpCall cross_entropy_call(DType t) {
  CrossEntropyCall c;
  c.logits = Tensor::contiguous(nullptr, nullptr, t, Shape{2, 5});
  c.targets = Tensor::contiguous(nullptr, nullptr, DType::i64, Shape{2});
  c.loss = Tensor::contiguous(nullptr, nullptr, t == DType::f64 ? DType::f64 : DType::f32, Shape{});
  c.dlogits = c.logits;
  return c;
}
// dy of dtype t into a table of t's dtype (f32 for bf16: the mixed pair ops/ allows).
OpCall embedding_backward_call(DType t) {
  EmbeddingBackwardCall c;
  c.ids = Tensor::contiguous(nullptr, nullptr, DType::i64, Shape{3});
  c.dy = Tensor::contiguous(nullptr, nullptr, t, Shape{3, 4});
  c.dtable = Tensor::contiguous(nullptr, nullptr, t == DType::bf16 ? DType::f32 : t, Shape{9, 4});
  return c;
}
OpCall attention_backward_call(DType t) {
  AttentionBackwardCall c;
  c.q = c.k = c.v = c.y = c.dy = c.dq = c.dk = c.dv = Tensor::contiguous(nullptr, nullptr, t, Shape{1, 1, 2, 8});
  c.lse = Tensor::contiguous(nullptr, nullptr, t == DType::f64 ? DType::f64 : DType::f32, Shape{1, 1, 2});
  return c;
}
OpCall adamw_call(DType t) {
  AdamwCall c;
  c.param = c.grad = Tensor::contiguous(nullptr, nullptr, t, Shape{4});
  c.m = c.v = Tensor::contiguous(nullptr, nullptr, t == DType::f64 ? DType::f64 : DType::f32, Shape{4});
  if (t == DType::bf16) c.master = c.m;
  return c;
}

TEST(GpuTrainingSupport, UnverifiedKernelsAreDeclinedUnlessTheSwitchIsOn) {
  for (const auto make : {unary_backward_call, norm_backward_call, rope_backward_call, adamw_call, cross_entropy_call,
                          embedding_backward_call, attention_backward_call}) {
    for (DType t : {DType::f32, DType::bf16}) {
      const OpCall call = make(t);
      {
        UnverifiedSwitch off(nullptr);
        const Support s = gpu_supports_call("cuda", call);
        EXPECT_FALSE(s.ok) << op_name(call);
        EXPECT_NE(s.reason.find("HAL_GPU_UNVERIFIED=1"), std::string::npos) << s.reason;
        EXPECT_NE(s.reason.find(std::string(op_name(call))), std::string::npos) << s.reason;
      }
      {
        UnverifiedSwitch other("0");
        EXPECT_FALSE(gpu_supports_call("hip", call).ok) << op_name(call);
      }
      {
        UnverifiedSwitch on("1");
        const Support s = gpu_supports_call("hip", call);
        EXPECT_TRUE(s.ok) << op_name(call) << ": " << s.reason;
      }
    }
  }
}

// Attention without lse is a verified kernel (always on); its lse variants are
// behind the switch; the f64 oracle form never runs on a GPU.
TEST(GpuTrainingSupport, AttentionLseIsBehindTheSwitch) {
  auto make = [](DType t, bool with_lse) {
    AttentionCall c;
    c.q = Tensor::contiguous(nullptr, nullptr, t, Shape{1, 5, 2, 16});
    c.k = Tensor::contiguous(nullptr, nullptr, t, Shape{1, 7, 2, 16});
    c.v = c.k;
    c.y = c.q;
    if (with_lse)
      c.lse = Tensor::contiguous(nullptr, nullptr, t == DType::f64 ? DType::f64 : DType::f32, Shape{1, 5, 2});
    return OpCall{c};
  };
  {
    UnverifiedSwitch off(nullptr);
    EXPECT_TRUE(gpu_supports_call("cuda", make(DType::bf16, false)).ok);
    const Support s = gpu_supports_call("cuda", make(DType::bf16, true));
    EXPECT_FALSE(s.ok);
    EXPECT_NE(s.reason.find("lse"), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find("HAL_GPU_UNVERIFIED=1"), std::string::npos) << s.reason;
  }
  UnverifiedSwitch on("1");
  for (DType t : {DType::f32, DType::f16, DType::bf16}) EXPECT_TRUE(gpu_supports_call("hip", make(t, true)).ok);
  EXPECT_FALSE(gpu_supports_call("hip", make(DType::f64, true)).ok);
}

TEST(GpuTrainingSupport, TheSwitchNeverAdmitsF64) {
  UnverifiedSwitch on("1");
  for (const auto make : {unary_backward_call, norm_backward_call, rope_backward_call, adamw_call, cross_entropy_call,
                          embedding_backward_call, attention_backward_call}) {
    const Support s = gpu_supports_call("cuda", make(DType::f64));
    EXPECT_FALSE(s.ok);
    EXPECT_NE(s.reason.find("f64"), std::string::npos) << s.reason;
  }
}

}  // namespace hal::gpu_test
