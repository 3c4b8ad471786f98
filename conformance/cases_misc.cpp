// rope (neox/gptj, partial rotary), cast between every float dtype pair (fp8
// with scale and saturation), embedding (i32/i64 ids), attention (causal,
// GQA, sq != sk, decode), copy of permuted/transposed/broadcast views,
// fill_random.
#include "conformance/cases.h"

namespace hal::conformance::cases {

namespace {

constexpr DType kCastTypes[] = {DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2};

}  // namespace

void add_misc(std::vector<Case>& out) {
  for (DType dt : kFloatTypes) {
    // With inv_freq: frequencies given per pair (Llama 3's rope_scaling), here
    // spread over (0, 1] like theta's and read from a strided view.
    auto rope = [&](std::string cls, Shape x, bool pos_batched, RopeStyle style, int rotary_dim, bool freqs = false,
                    std::int64_t max_pos = 512) {
      Case c;
      c.op = "rope";
      c.name = case_name("rope", dt, cls);
      c.dtype = dt;
      const Shape pos = pos_batched ? Shape{x[0], x[1]} : Shape{x[1]};
      c.inputs = {input(dt, x), input(DType::i32, pos, integers(0, static_cast<double>(max_pos)))};
      const std::int64_t half = (rotary_dim > 0 ? rotary_dim : x[3]) / 2;
      if (freqs) {
        InputSpec f = input(DType::f32, {2 * half}, uniform(1e-4, 1.0));
        f.view = [half](const Tensor& t) {
          Tensor v = t;
          v.shape = Shape{half};
          v.strides = Strides{2};
          v.offset = 1;
          return v;
        };
        c.inputs.push_back(f);
      }
      c.outputs = {{dt, x, std::nullopt}};
      c.make_call = [style, rotary_dim, freqs](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        RopeCall r{in[0], in[1], outs[0], 10000.0f, style, rotary_dim};
        if (freqs) r.inv_freq = in[2];
        return r;
      };
      out.push_back(std::move(c));
    };
    rope("neox_2x17x3x64", {2, 17, 3, 64}, true, RopeStyle::neox, 0);
    rope("gptj_2x17x3x64", {2, 17, 3, 64}, true, RopeStyle::gptj, 0);
    rope("neox_partial_rd32_1x9x4x96", {1, 9, 4, 96}, false, RopeStyle::neox, 32);
    rope("gptj_partial_rd16_1x5x2x40", {1, 5, 2, 40}, false, RopeStyle::gptj, 16);
    rope("neox_inv_freq_2x17x3x64", {2, 17, 3, 64}, true, RopeStyle::neox, 0, true, 8192);
    rope("gptj_inv_freq_partial_rd32_1x9x2x48", {1, 9, 2, 48}, false, RopeStyle::gptj, 32, true);

    auto embedding = [&](std::string cls, DType id_type, Shape ids, bool specials) {
      Case c;
      c.op = "embedding";
      c.name = case_name("embedding", dt, cls);
      c.dtype = dt;
      c.inputs = {input(dt, {1000, 67}), input(id_type, ids, integers(0, 1000))};
      if (specials) c.inputs[0].gen.specials = special_values(dt, 0, 1);  // row 0
      Shape y = ids;
      y.push_back(67);
      c.outputs = {{dt, y, std::nullopt}};
      c.make_call = [](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return EmbeddingCall{in[0], in[1], outs[0]};
      };
      out.push_back(std::move(c));
    };
    embedding("i32_3x17", DType::i32, {3, 17}, false);
    embedding("i64_41", DType::i64, {41}, false);
    // ids cover [0, 3) only, so row 0 (special values) is certainly read.
    {
      embedding("special_i32_64", DType::i32, {64}, true);
      out.back().inputs[1].gen = integers(0, 3);
    }

    auto attention = [&](std::string cls, std::int64_t b, std::int64_t sq, std::int64_t sk, std::int64_t hq,
                         std::int64_t hkv, std::int64_t d, std::int64_t dv, bool causal, float scale) {
      Case c;
      c.op = "attention";
      c.name = case_name("attention", dt, cls);
      c.dtype = dt;
      c.inputs = {input(dt, {b, sq, hq, d}), input(dt, {b, sk, hkv, d}), input(dt, {b, sk, hkv, dv})};
      c.outputs = {{dt, {b, sq, hq, dv}, std::nullopt}};
      c.make_call = [causal, scale](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return AttentionCall{in[0], in[1], in[2], outs[0], scale, causal};
      };
      out.push_back(std::move(c));
    };
    attention("noncausal_1x17x33_h4_d64", 1, 17, 33, 4, 4, 64, 64, false, 0.0f);
    attention("causal_2x33x33_h4_d64", 2, 33, 33, 4, 4, 64, 64, true, 0.0f);
    attention("gqa_causal_1x16x40_h8kv2_d64", 1, 16, 40, 8, 2, 64, 64, true, 0.0f);
    attention("decode_1x1x257_h4kv1_d128", 1, 1, 257, 4, 1, 128, 128, true, 0.0f);
    // Few rows per kv head (the CPU's row path): a decode step without
    // grouped heads over two batch entries, two speculative queries on four
    // heads per kv head whose causal masks differ by one key, and more queries
    // than keys.
    attention("decode_2x1x300_h6kv6_d64", 2, 1, 300, 6, 6, 64, 64, false, 0.0f);
    attention("spec_causal_1x2x129_h8kv2_d64", 1, 2, 129, 8, 2, 64, 64, true, 0.0f);
    attention("rows_causal_sq_gt_sk_1x4x3_h4kv2_d32", 1, 4, 3, 4, 2, 32, 32, true, 0.0f);
    attention("causal_sq_gt_sk_1x9x5_h2_d32", 1, 9, 5, 2, 2, 32, 32, true, 0.0f);
    attention("dv48_scale_1x7x19_h2_d32", 1, 7, 19, 2, 1, 32, 48, false, 0.3f);
    // Non-finite scores, one kind per head (kernel_math/online_softmax.h):
    // every query is e0 = (1, 0, ...), so head h's score of key j is
    // k[j][h][0] * scale, and k's column 0 is planted per head: h0 -inf for
    // keys 0..39 then finite (a finite row), h1 NaN everywhere (NaN), h2 -inf
    // everywhere (NaN, as softmax), h3 -inf for keys 0..39 with a NaN at key 5
    // (NaN). 80 keys: the CUDA general kernel's blocks of 32 are all -inf, part
    // -inf, finite. sq = 1: the CPU's row path; sq = 9: its blocked path;
    // d = 16: the general kernels on CUDA and HIP (no flash path takes it).
    for (std::int64_t sq : {1, 9}) {
      const std::int64_t sk = 80, h = 4, d = 16;
      attention(fmt::format("nonfinite_scores_1x{}x{}_h4_d16", sq, sk), 1, sq, sk, h, h, d, d, false, 0.0f);
      Case& c = out.back();
      std::vector<Special>& q = c.inputs[0].gen.specials;
      for (std::int64_t i = 0; i < sq * h; ++i)
        for (std::int64_t ch = 0; ch < d; ++ch) q.push_back({i * d + ch, ch == 0 ? 1.0 : 0.0});
      std::vector<Special>& k = c.inputs[1].gen.specials;
      const auto col0 = [&](std::int64_t j, std::int64_t head) { return (j * h + head) * d; };
      for (std::int64_t j = 0; j < sk; ++j) {
        if (j < 40) k.push_back({col0(j, 0), -INFINITY});
        k.push_back({col0(j, 1), NAN});
        k.push_back({col0(j, 2), -INFINITY});
        if (j < 40) k.push_back({col0(j, 3), j == 5 ? NAN : -INFINITY});
      }
    }
    // With the optional lse output (f32, [b, sq, hq]), on the blocked path,
    // the row path (decode, and sq > sk with rows that see no key: -inf) and
    // the grouped-query blocked path.
    auto attention_lse = [&](std::string cls, std::int64_t b, std::int64_t sq, std::int64_t sk, std::int64_t hq,
                             std::int64_t hkv, std::int64_t d) {
      attention(std::move(cls), b, sq, sk, hq, hkv, d, d, true, 0.0f);
      Case& c = out.back();
      c.outputs.push_back({DType::f32, {b, sq, hq}, std::nullopt});
      c.make_call = [](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        AttentionCall a{in[0], in[1], in[2], outs[0], 0.0f, true};
        a.lse = outs[1];
        return a;
      };
    };
    attention_lse("lse_causal_2x33x33_h4_d64", 2, 33, 33, 4, 4, 64);
    attention_lse("lse_gqa_causal_1x16x70_h8kv2_d64", 1, 16, 70, 8, 2, 64);
    attention_lse("lse_decode_1x1x257_h4kv1_d128", 1, 1, 257, 4, 1, 128);
    attention_lse("lse_rows_causal_sq_gt_sk_1x4x3_h4kv2_d32", 1, 4, 3, 4, 2, 32);
    attention_lse("lse_causal_sq_gt_sk_1x9x5_h2_d32", 1, 9, 5, 2, 2, 32);

    auto copy = [&](std::string cls, InputSpec x, Shape y) {
      Case c;
      c.op = "copy";
      c.name = case_name("copy", x.dtype, cls);
      c.dtype = x.dtype;
      c.inputs = {std::move(x)};
      c.outputs = {{c.inputs[0].dtype, y, std::nullopt}};
      c.make_call = [](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return CopyCall{in[0], outs[0]};
      };
      out.push_back(std::move(c));
    };
    copy("transposed_127x257", input(dt, {257, 127}, normal(), [](const Tensor& t) { return t.transposed(0, 1); }), {127, 257});
    copy("permuted_5x7x11x13", input(dt, {11, 5, 13, 7}, normal(), [](const Tensor& t) { return t.permuted(Dims{1, 3, 0, 2}); }),
         {5, 7, 11, 13});
    copy("broadcast_stride0_17x33", input(dt, {1, 33}, normal(), [](const Tensor& t) {
           Tensor v = t;
           v.shape[0] = 17;
           v.strides[0] = 0;
           return v;
         }), {17, 33});
    InputSpec sx = input(dt, {3, 8});
    sx.gen.specials = special_values(dt, 1, 2);
    copy("special_3x8", sx, {3, 8});

    for (RandomDistribution dist : {RandomDistribution::uniform, RandomDistribution::normal}) {
      for (Shape s : {Shape{1021}, Shape{33, 65}}) {
        Case c;
        c.op = "fill_random";
        c.name = case_name("fill_random", dt, fmt::format("{}_{}", to_string(dist), s[0] * (s.rank() > 1 ? s[1] : 1)));
        c.dtype = dt;
        c.outputs = {{dt, s, std::nullopt}};
        c.make_call = [dist](std::span<const Tensor>, std::span<const Tensor> outs) -> OpCall {
          return FillRandomCall{outs[0], 0x5eed1234, dist, dist == RandomDistribution::uniform ? -2.0f : 1.0f, 3.0f};
        };
        out.push_back(std::move(c));
      }
    }
  }
  {
    // An integer copy through a permuted view.
    Case c;
    c.op = "copy";
    c.name = case_name("copy", DType::i32, "permuted_7x5x3");
    c.dtype = DType::i32;
    c.inputs = {input(DType::i32, {3, 7, 5}, integers(-1000, 1000), [](const Tensor& t) { return t.permuted(Dims{1, 2, 0}); })};
    c.outputs = {{DType::i32, {7, 5, 3}, std::nullopt}};
    c.make_call = [](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
      return CopyCall{in[0], outs[0]};
    };
    out.push_back(std::move(c));
  }

  for (DType from : kCastTypes)
    for (DType to : kCastTypes) {
      // A scale that pushes some values past fp8's range (saturation).
      const float scale = is_fp8(to) ? 8.0f : 0.75f;
      auto cast = [&](std::string cls, InputSpec x) {
        Case c;
        c.op = "cast";
        c.name = fmt::format("cast/{}->{}/{}", dtype_name(from), dtype_name(to), cls);
        c.dtype = from;
        c.inputs = {std::move(x)};
        c.outputs = {{to, c.inputs[0].storage, std::nullopt}};
        c.make_call = [scale](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
          return CastCall{in[0], outs[0], scale};
        };
        out.push_back(std::move(c));
      };
      cast("vec_1021_scale", input(from, {1021}, normal(0.0, 40.0)));
      InputSpec sx = input(from, {2, 8});
      sx.gen.specials = special_values(from, 0, 1);
      cast("special_2x8", sx);
    }
}

}  // namespace hal::conformance::cases
