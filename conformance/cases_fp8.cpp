// Scaled-FP8 cases, in each of the four fp8 formats: casts between the OCP
// and FNUZ families, quantize_fp8 (every block kind, a ragged K, M = 1, NaN
// and Inf inputs, an all-zero block, power-of-two scales), dequantize_fp8,
// gemm_fp8 (M = 1, N not a multiple of 128, a ragged K, the epilogue) and
// gemm_fp8_grouped (empty groups, all groups empty). Small shapes: the
// oracle and the bounds are O(M N K) on the host.
#include <cmath>

#include "conformance/cases.h"
#include "ops/ops.h"

namespace hal::conformance::cases {

namespace {

constexpr DType kFp8Types[] = {DType::f8e4m3, DType::f8e5m2, DType::f8e4m3fnuz, DType::f8e5m2fnuz};

std::string fp8_name(std::string_view op, DType dt, std::string_view cls) { return case_name(op, dt, cls); }

void add_casts(std::vector<Case>& out) {
  // Each fnuz format from and to f32 and bf16, and across the families.
  struct Pair {
    DType from, to;
  };
  const Pair pairs[] = {{DType::f32, DType::f8e4m3fnuz},        {DType::f32, DType::f8e5m2fnuz},
                        {DType::bf16, DType::f8e4m3fnuz},       {DType::f8e4m3fnuz, DType::f32},
                        {DType::f8e5m2fnuz, DType::bf16},       {DType::f8e4m3, DType::f8e4m3fnuz},
                        {DType::f8e4m3fnuz, DType::f8e4m3},     {DType::f8e5m2, DType::f8e5m2fnuz},
                        {DType::f8e5m2fnuz, DType::f8e5m2},     {DType::f8e4m3fnuz, DType::f8e5m2fnuz}};
  for (const Pair& p : pairs) {
    auto cast = [&](std::string cls, InputSpec x, float scale) {
      Case c;
      c.op = "cast";
      c.name = fmt::format("cast/{}->{}/{}", dtype_name(p.from), dtype_name(p.to), cls);
      c.dtype = p.from;
      c.inputs = {std::move(x)};
      c.outputs = {{p.to, c.inputs[0].storage, std::nullopt}};
      c.make_call = [scale](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return CastCall{in[0], outs[0], scale};
      };
      out.push_back(std::move(c));
    };
    cast("vec_517", input(p.from, {517}, normal(0.0, 60.0)), 1.0f);
    cast("vec_517_scale", input(p.from, {517}, normal(0.0, 60.0)), is_fp8(p.to) ? 4.0f : 0.75f);
    InputSpec sx = input(p.from, {2, 8});
    sx.gen.specials = special_values(p.from, 0, 1);
    cast("special_2x8", sx, 1.0f);
  }
}

void add_quantize(std::vector<Case>& out, DType fmt_dt) {
  struct Q {
    std::string cls;
    DType x;
    std::int64_t m, k;
    Fp8Block block;
    bool pow2 = false;
    bool specials = false;  // NaN, +-Inf in row 0; row 1's second block all zero
  };
  const Q qs[] = {
      {"1x128_ragged_5x300_special", DType::f32, 5, 300, Fp8Block::row_1x128, false, true},
      {"1x128_m1_1x200", DType::bf16, 1, 200, Fp8Block::row_1x128},
      {"1x128_pow2_3x256", DType::bf16, 3, 256, Fp8Block::row_1x128, true},
      {"128x128_ragged_130x260_special", DType::f32, 130, 260, Fp8Block::block_128x128, false, true},
      {"tensor_7x33_special", DType::f16, 7, 33, Fp8Block::tensor, false, true},
      {"tensor_pow2_4x9", DType::f32, 4, 9, Fp8Block::tensor, true},
      {"tensor_all_zero_3x5", DType::bf16, 3, 5, Fp8Block::tensor},
  };
  for (const Q& q : qs) {
    Case c;
    c.op = "quantize_fp8";
    c.name = fp8_name("quantize_fp8", fmt_dt, q.cls);
    c.dtype = fmt_dt;
    InputSpec x = input(q.x, {q.m, q.k}, q.cls.find("all_zero") != std::string::npos ? normal(0.0, 0.0) : normal(0.0, 3.0));
    if (q.specials) {
      x.gen.specials = {{0, NAN}, {1, INFINITY}, {2, -INFINITY}, {q.k - 1, -0.0}};
      if (q.m > 1 && q.k > 128)
        for (std::int64_t j = 128; j < std::min<std::int64_t>(q.k, 256); ++j) x.gen.specials.push_back({q.k + j, 0.0});
      if (q.block == Fp8Block::block_128x128)  // the ragged corner block (rows 128.., columns 256..) all zero
        for (std::int64_t i = 128; i < q.m; ++i)
          for (std::int64_t j = 256; j < q.k; ++j) x.gen.specials.push_back({i * q.k + j, 0.0});
    }
    c.inputs = {x};
    c.outputs = {{fmt_dt, {q.m, q.k}, std::nullopt}, {DType::f32, ops::fp8_scales_shape(q.block, q.m, q.k), std::nullopt}};
    c.make_call = [q](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
      return QuantizeFp8Call{in[0], outs[0], outs[1], q.block, q.pow2};
    };
    out.push_back(std::move(c));
  }
}

void add_dequantize(std::vector<Case>& out, DType fmt_dt) {
  struct D {
    std::string cls;
    DType x;
    std::int64_t m, k;
    Fp8Block block;
  };
  const D ds[] = {
      {"1x128_ragged_3x260_f32", DType::f32, 3, 260, Fp8Block::row_1x128},
      {"128x128_ragged_130x140_bf16", DType::bf16, 130, 140, Fp8Block::block_128x128},
      {"tensor_4x10_f16", DType::f16, 4, 10, Fp8Block::tensor},
  };
  for (const D& d : ds) {
    Case c;
    c.op = "dequantize_fp8";
    c.name = fp8_name("dequantize_fp8", fmt_dt, d.cls);
    c.dtype = fmt_dt;
    InputSpec y = input(fmt_dt, {d.m, d.k}, normal(0.0, 40.0));
    y.gen.specials = special_values(fmt_dt, 0, 1);
    c.inputs = {y, input(DType::f32, ops::fp8_scales_shape(d.block, d.m, d.k), uniform(1e-3, 4.0))};
    c.outputs = {{d.x, {d.m, d.k}, std::nullopt}};
    c.make_call = [d](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
      return DequantizeFp8Call{in[0], in[1], outs[0], d.block};
    };
    out.push_back(std::move(c));
  }
}

std::int64_t blocks(std::int64_t n) { return (n + kFp8BlockSize - 1) / kFp8BlockSize; }

// fp8 operands spread over most of the format's range, and scales like
// DeepSeek's (amax / max_finite of unit-scale data).
Generator fp8_values(DType dt) { return normal(0.0, dtype_max_finite(dt) / 8); }
Generator scales() { return uniform(1e-4, 2e-2); }

void add_gemm(std::vector<Case>& out, DType a_dt, DType b_dt) {
  struct G {
    std::string cls;
    std::int64_t m, n, k;
    DType c = DType::bf16;
    bool bias = false;
    float alpha = 1.0f, beta = 0.0f;
    Activation act = Activation::none;
  };
  const G gs[] = {
      {"m1_1x200x256", 1, 200, 256},
      {"ragged_k_37x130x300_f32", 37, 130, 300, DType::f32},
      {"epilogue_9x20x128_bias_beta_silu", 9, 20, 128, DType::f32, true, 0.5f, -1.25f, Activation::silu},
      {"bias_relu_5x129x70", 5, 129, 70, DType::bf16, true, 1.0f, 0.0f, Activation::relu},
  };
  const std::string pair = a_dt == b_dt ? std::string(dtype_name(a_dt))
                                        : fmt::format("{}x{}", dtype_name(a_dt), dtype_name(b_dt));
  for (const G& g : gs) {
    Case c;
    c.op = "gemm_fp8";
    c.name = fmt::format("gemm_fp8/{}/{}", pair, g.cls);
    c.dtype = a_dt;
    c.inputs = {input(a_dt, {g.m, g.k}, fp8_values(a_dt)), input(DType::f32, {g.m, blocks(g.k)}, scales()),
                input(b_dt, {g.n, g.k}, fp8_values(b_dt)), input(DType::f32, {blocks(g.n), blocks(g.k)}, scales())};
    if (g.bias) c.inputs.push_back(input(g.c, {g.n}, normal(0.0, 0.5)));
    c.outputs = {{g.c, {g.m, g.n}, std::nullopt}};
    if (g.beta != 0.0f) c.outputs[0].initial = normal();
    c.make_call = [g](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
      GemmFp8Call call{in[0], in[1], in[2], in[3], outs[0], {}};
      call.epilogue.alpha = g.alpha;
      call.epilogue.beta = g.beta;
      call.epilogue.activation = g.act;
      if (g.bias) call.epilogue.bias = in[4];
      return call;
    };
    out.push_back(std::move(c));
  }
}

void add_grouped(std::vector<Case>& out, DType dt) {
  struct G {
    std::string cls;
    std::vector<std::int32_t> offsets;  // G + 1
    std::int64_t n, k;
    bool bias = false;
    Activation act = Activation::none;
  };
  const G gs[] = {
      {"empty_groups_4x17x130x200", {0, 0, 5, 5, 17}, 130, 200},
      {"bias_gelu_3x9x40x128", {0, 2, 8, 9}, 40, 128, true, Activation::gelu_tanh},
      {"all_empty_2x0x16x64", {0, 0, 0}, 16, 64},
  };
  for (const G& g : gs) {
    const std::int64_t groups = static_cast<std::int64_t>(g.offsets.size()) - 1, m = g.offsets.back();
    Case c;
    c.op = "gemm_fp8_grouped";
    c.name = fp8_name("gemm_fp8_grouped", dt, g.cls);
    c.dtype = dt;
    InputSpec offsets = input(DType::i32, {groups + 1}, integers(0, 1));
    for (std::size_t i = 0; i < g.offsets.size(); ++i) offsets.gen.specials.push_back({static_cast<std::int64_t>(i), static_cast<double>(g.offsets[i])});
    c.inputs = {input(dt, {m, g.k}, fp8_values(dt)), input(DType::f32, {m, blocks(g.k)}, scales()),
                input(dt, {groups, g.n, g.k}, fp8_values(dt)),
                input(DType::f32, {groups, blocks(g.n), blocks(g.k)}, scales()), offsets};
    if (g.bias) c.inputs.push_back(input(DType::bf16, {groups, g.n}, normal(0.0, 0.5)));
    c.outputs = {{DType::bf16, {m, g.n}, std::nullopt}};
    c.make_call = [g](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
      GemmFp8GroupedCall call{in[0], in[1], in[2], in[3], in[4], outs[0], {}};
      call.epilogue.activation = g.act;
      if (g.bias) call.epilogue.bias = in[5];
      return call;
    };
    out.push_back(std::move(c));
  }
}

}  // namespace

void add_fp8(std::vector<Case>& out) {
  add_casts(out);
  for (DType dt : kFp8Types) {
    add_quantize(out, dt);
    add_dequantize(out, dt);
    add_gemm(out, dt, dt);
    add_grouped(out, dt);
  }
  // e4m3 activations with e5m2 weights (or gradients), within each family.
  add_gemm(out, DType::f8e4m3, DType::f8e5m2);
  add_gemm(out, DType::f8e4m3fnuz, DType::f8e5m2fnuz);
}

}  // namespace hal::conformance::cases
