#pragma once
// The scaled-FP8 op calls, DeepSeek-V3's recipe: activations quantised per
// 1 x 128 group along K, weights per 128 x 128 block, one f32 scale per
// block, products accumulated per block of 128 along K and promoted to fp32
// with the two scales applied there. Part of hal/op.h (included from it).
//
// The fp8 dtype of a tensor is its format: f8e4m3 / f8e5m2 (OCP, NVIDIA) or
// f8e4m3fnuz / f8e5m2fnuz (FNUZ, AMD MI300). Scales are f32 tensors. A
// power-of-two (UE8M0) scale is an f32 scale whose value is a power of two:
// quantize_fp8 makes them with pow2_scales, and every op takes them as any
// other scale (their multiplications are then exact).
//
// Include hal/op.h, not this file: it is included from there, after the
// Activation and TensorRole it uses.
#include <cstdint>
#include <optional>
#include <string_view>

#include "hal/tensor.h"

namespace hal {

inline constexpr std::int64_t kFp8BlockSize = 128;  // the block edge along K (and N / M for 128 x 128)

enum class Fp8Block {
  row_1x128,      // one scale per row and 128 columns: scales [M, ceil(K/128)]
  block_128x128,  // one scale per 128 x 128 tile: scales [ceil(M/128), ceil(K/128)]
  tensor,         // one scale for the whole tensor: scales [1]
};

// y = saturate(RN(x / scale_of_block)), one f32 scale per block.
// x [M, K] f32/f16/bf16; y [M, K] fp8 (its dtype is the format); scales f32,
// shaped by `block` (above). Per block, in fp32:
//   amax  = max |x| over the block's finite elements (0 when none),
//   scale = max(amax / max_finite(y), 2^-126)   (one correctly rounded
//           division; the floor gives an all-zero block a defined, normal
//           scale, and never a subnormal one),
//   pow2_scales: scale = the smallest power of two >= that (UE8M0),
//   y     = RN_y(x / scale), a correctly rounded fp32 division, then the
//           saturating conversion to y's dtype.
// NaN and infinite inputs do not enter amax: a NaN becomes y's NaN, +-Inf
// becomes +-max_finite (the saturation of every fp8 conversion), and the
// block's other elements are quantised as if they were absent.
struct QuantizeFp8Call {
  Tensor x, y, scales;
  Fp8Block block = Fp8Block::row_1x128;
  bool pow2_scales = false;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("y", c.y, TensorRole::output);
    f("scales", c.scales, TensorRole::output);
  }
};

// x = RN_x(y * scale_of_block): one fp32 multiply, rounded once to x's dtype
// (f32, f16, bf16). y [M, K] fp8; scales f32 shaped by `block` as above.
struct DequantizeFp8Call {
  Tensor y, scales, x;
  Fp8Block block = Fp8Block::row_1x128;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("y", c.y, TensorRole::input);
    f("scales", c.scales, TensorRole::input);
    f("x", c.x, TensorRole::output);
  }
};

// The epilogue both fp8 GEMMs share: c = act(alpha * acc + beta * c + bias).
struct Fp8Epilogue {
  std::optional<Tensor> bias;  // [N] (grouped: [G, N]), c's dtype
  float alpha = 1.0f, beta = 0.0f;
  Activation activation = Activation::none;
};

// acc[i, j] = sum over K blocks kb of (a_scales[i, kb] * b_scales[j / 128, kb])
//             * (sum over k in kb of a[i, k] * b[j, k])
// c = act(alpha * acc + beta * c + bias)
// a [M, K] fp8, a_scales [M, ceil(K/128)] f32 (1 x 128 groups);
// b [N, K] fp8 (K-major, the layout of a linear layer's weight),
// b_scales [ceil(N/128), ceil(K/128)] f32 (128 x 128 blocks);
// c [M, N] bf16 or f32. a and b are of one family (both OCP or both FNUZ;
// e4m3 with e5m2 is allowed). A K that is not a multiple of 128 is handled:
// the last block is shorter (its scales cover the columns it has).
// Each block sum is accumulated in the backend's stated precision (fp32 on
// the CPU; docs/accuracy.md), the promotion and the epilogue in fp32.
struct GemmFp8Call {
  Tensor a, a_scales, b, b_scales, c;
  Fp8Epilogue epilogue{};

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("a", c.a, TensorRole::input);
    f("a_scales", c.a_scales, TensorRole::input);
    f("b", c.b, TensorRole::input);
    f("b_scales", c.b_scales, TensorRole::input);
    if (c.epilogue.bias) f("bias", *c.epilogue.bias, TensorRole::input);
    f("c", c.c, c.epilogue.beta != 0.0f ? TensorRole::accumulated : TensorRole::output);
  }
};

// A mixture-of-experts layer in one call (DeepGEMM's "contiguous" layout):
// the rows of a are grouped by expert, group g owning rows
// [offsets[g], offsets[g + 1]), and are multiplied by expert g's weight:
// c[i, :] = gemm_fp8 of row i with b[g], b_scales[g] (and bias[g]).
// a [M, K] fp8, a_scales [M, ceil(K/128)]; b [G, N, K] fp8,
// b_scales [G, ceil(N/128), ceil(K/128)]; offsets i32 [G + 1] with
// offsets[0] = 0, non-decreasing, offsets[G] = M (groups may be empty);
// c [M, N]. The offsets are data: a backend checks them before it writes
// anything and fails with invalid_argument naming them.
struct GemmFp8GroupedCall {
  Tensor a, a_scales, b, b_scales, offsets, c;
  Fp8Epilogue epilogue{};

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("a", c.a, TensorRole::input);
    f("a_scales", c.a_scales, TensorRole::input);
    f("b", c.b, TensorRole::input);
    f("b_scales", c.b_scales, TensorRole::input);
    f("offsets", c.offsets, TensorRole::input);
    if (c.epilogue.bias) f("bias", *c.epilogue.bias, TensorRole::input);
    f("c", c.c, c.epilogue.beta != 0.0f ? TensorRole::accumulated : TensorRole::output);
  }
};

std::string_view to_string(Fp8Block v);  // "1x128", "128x128", "tensor"

}  // namespace hal
