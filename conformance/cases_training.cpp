// The training ops: softmax / log_softmax backward (causal, scaled, long
// rows, a NaN gradient), the norm backwards (many rows, so dweight sums over
// several row blocks; D = 1), unary backward of every kind with special
// values, swiglu backward, cross_entropy (every reduction, ignore_index,
// label smoothing, V = 128256, i64 targets, all rows ignored, NaN and Inf
// logits), embedding_backward (repeated ids, one id for every position, an
// f32 table for 16-bit gradients, 5000 positions), adamw_step (first and later steps, a
// master copy for 16-bit params), global_norm (several tensors, several
// chunks), rope_backward (neox / gptj, partial, inv_freq), attention_backward
// (causal, grouped-query, sq != sk, decode, a NaN gradient). Shapes are kept
// small: every case runs on every device in CI.
#include <algorithm>
#include <cmath>

#include "conformance/cases.h"

namespace hal::conformance::cases {

void add_training(std::vector<Case>& out) {
  for (DType dt : kFloatTypes) {
    for (bool log : {false, true}) {
      const std::string op = log ? "log_softmax_backward" : "softmax_backward";
      auto softmax = [&](std::string cls, Shape s, float scale, bool causal, std::vector<Special> dy_specials = {}) {
        Case c;
        c.op = op;
        c.name = case_name(op, dt, cls);
        c.dtype = dt;
        // y as the forward leaves it: probabilities (softmax) or log-probabilities.
        c.inputs = {input(dt, s, log ? uniform(-12.0, 0.0) : uniform(0.0, 4.0 / static_cast<double>(s.back()))),
                    input(dt, s, normal(0.0, 1.0))};
        c.inputs[1].gen.specials = std::move(dy_specials);
        c.outputs = {{dt, s, std::nullopt}};
        c.make_call = [scale, causal, log](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
          return SoftmaxBackwardCall{in[0], in[1], outs[0], scale, causal, log};
        };
        out.push_back(std::move(c));
      };
      softmax("rows_5x257", {5, 257}, 1.0f, false);
      softmax("causal_33x65", {33, 65}, 0.125f, true);
      softmax("causal_fully_masked_9x5", {9, 5}, 1.0f, true);  // rows 0..3 see no key
      softmax("long_2x8192", {2, 8192}, 1.0f, false);
      softmax("len1_4x1", {4, 1}, 2.0f, false);
      softmax("nan_dy_3x16", {3, 16}, 1.0f, false, {{16 + 4, NAN}});  // row 1 becomes NaN
    }

    for (bool rms : {false, true}) {
      const std::string op = rms ? "rmsnorm_backward" : "layernorm_backward";
      auto norm = [&](std::string cls, Shape s, bool bias, float eps) {
        Case c;
        c.op = op;
        c.name = case_name(op, dt, cls);
        c.dtype = dt;
        const std::int64_t d = s.back();
        c.inputs = {input(dt, s, normal(0.5, 2.0)), input(dt, {d}, normal(1.0, 0.25)), input(dt, s, normal(0.0, 1.0))};
        c.outputs = {{dt, s, std::nullopt}, {dt, {d}, std::nullopt}};
        if (bias) c.outputs.push_back({dt, {d}, std::nullopt});
        c.make_call = [bias, rms, eps](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
          NormBackwardCall n{in[0], in[1], in[2], outs[0], outs[1], std::nullopt, eps, rms};
          if (bias) n.dbias = outs[2];
          return n;
        };
        out.push_back(std::move(c));
      };
      norm("rows_7x1021", {7, 1021}, !rms, 1e-5f);
      norm("rows_2x3x127", {2, 3, 127}, false, 1e-6f);
      norm("long_2x4096", {2, 4096}, !rms, 1e-5f);
      norm("many_rows_300x17", {300, 17}, !rms, 1e-5f);  // dweight over 10 row blocks
      norm("d1_5x1", {5, 1}, !rms, 1e-5f);
    }

    for (UnaryKind k : {UnaryKind::gelu, UnaryKind::gelu_tanh, UnaryKind::silu, UnaryKind::relu, UnaryKind::sigmoid,
                        UnaryKind::tanh, UnaryKind::exp}) {
      const std::string op(unary_backward_name(k));
      auto unary = [&](std::string cls, Shape s, Generator gx) {
        Case c;
        c.op = op;
        c.name = case_name(op, dt, cls);
        c.dtype = dt;
        c.inputs = {input(dt, s, std::move(gx)), input(dt, s, normal(0.0, 1.0))};
        c.outputs = {{dt, s, std::nullopt}};
        c.make_call = [k](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
          return UnaryBackwardCall{k, in[0], in[1], outs[0]};
        };
        out.push_back(std::move(c));
      };
      unary("n_4099", {4099}, normal(0.0, 4.0));
      // NaN, -0, the smallest subnormal, +-largest finite (x's infinities give
      // 0 * inf in silu' and gelu', NaN as in PyTorch, and are left out).
      Generator special = normal(0.0, 1.0);
      const double big = dtype_max_finite(dt);
      const double sub = dt == DType::f32 ? 0x1p-149 : dt == DType::f16 ? 0x1p-24 : 0x1p-133;
      special.specials = {{0, NAN}, {1, -0.0}, {2, sub}, {3, big}, {4, -big}};
      unary("special_2x8", {2, 8}, special);
    }

    auto swiglu = [&](std::string cls, Shape s) {
      Case c;
      c.op = "swiglu_backward";
      c.name = case_name(c.op, dt, cls);
      c.dtype = dt;
      c.inputs = {input(dt, s, normal(0.0, 3.0)), input(dt, s, normal(0.0, 1.0)), input(dt, s, normal(0.0, 1.0))};
      c.outputs = {{dt, s, std::nullopt}, {dt, s, std::nullopt}};
      c.make_call = [](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return SwigluBackwardCall{in[0], in[1], in[2], outs[0], outs[1]};
      };
      out.push_back(std::move(c));
    };
    swiglu("n_4099", {4099});
    swiglu("rows_3x257", {3, 257});

    auto cross_entropy = [&](std::string cls, std::int64_t n, std::int64_t v, LossReduction red, bool grad,
                             Generator targets, std::int64_t ignore = -100, float smoothing = 0.0f,
                             DType target_type = DType::i32, std::vector<Special> specials = {}) {
      Case c;
      c.op = "cross_entropy";
      c.name = case_name(c.op, dt, cls);
      c.dtype = dt;
      c.inputs = {input(dt, {n, v}, normal(0.0, 3.0)), input(target_type, {n}, std::move(targets))};
      c.inputs[0].gen.specials = std::move(specials);
      c.outputs = {{DType::f32, red == LossReduction::none ? Shape{n} : Shape{}, std::nullopt}};
      if (grad) c.outputs.push_back({dt, {n, v}, std::nullopt});
      c.make_call = [red, grad, ignore, smoothing](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        CrossEntropyCall ce{in[0], in[1], outs[0], std::nullopt, ignore, smoothing, red};
        if (grad) ce.dlogits = outs[1];
        return ce;
      };
      out.push_back(std::move(c));
    };
    cross_entropy("mean_7x1021", 7, 1021, LossReduction::mean, true, integers(0, 1021));
    // Targets in [0, 3) with ignore_index 1: about a third of the rows ignored.
    cross_entropy("sum_ignore_9x257", 9, 257, LossReduction::sum, true, integers(0, 3), 1);
    cross_entropy("none_smoothing_5x127", 5, 127, LossReduction::none, true, integers(0, 127), -100, 0.1f);
    cross_entropy("mean_smoothing_ignore_6x61", 6, 61, LossReduction::mean, true, integers(0, 2), 0, 0.2f);
    cross_entropy("vocab128256_2x128256", 2, 128256, LossReduction::mean, true, integers(0, 128256));
    cross_entropy("i64_no_grad_13x33", 13, 33, LossReduction::mean, false, integers(0, 33), -100, 0.0f, DType::i64);
    cross_entropy("all_ignored_3x17", 3, 17, LossReduction::mean, true, integers(5, 6), 5);  // NaN loss, zero grad
    // Row 0: a NaN logit; row 1: +Inf (Inf - Inf); row 2: -Inf (weight 0); row 3: the largest finite.
    cross_entropy("special_5x33", 5, 33, LossReduction::none, true, integers(0, 33), -100, 0.0f, DType::i32,
                  {{3, NAN}, {33 + 5, INFINITY}, {66 + 7, -INFINITY}, {99 + 9, dtype_max_finite(dt)}});

    auto embedding_backward = [&](std::string cls, DType table_type, DType id_type, Shape ids, Generator id_gen) {
      Case c;
      c.op = "embedding_backward";
      c.name = case_name(c.op, dt, cls);
      c.dtype = dt;
      Shape dy = ids;
      dy.push_back(67);
      c.inputs = {input(id_type, ids, std::move(id_gen)), input(dt, dy, normal(0.0, 1.0))};
      c.outputs = {{table_type, {50, 67}, normal(0.0, 1.0)}};  // accumulated: starts from these
      c.make_call = [](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return EmbeddingBackwardCall{in[0], in[1], outs[0]};
      };
      out.push_back(std::move(c));
    };
    embedding_backward("repeated_i32_3x41", dt, DType::i32, {3, 41}, integers(0, 50));
    embedding_backward("i64_17", dt, DType::i64, {17}, integers(0, 50));
    embedding_backward("one_id_64", dt, DType::i32, {64}, integers(7, 8));  // 64 rows into row 7, in order
    // Past one 2048-key sort chunk and one 2048-index segment tile: the GPU
    // kernels' global bitonic stages and multi-tile segment scan.
    embedding_backward("many_i32_5000", dt, DType::i32, {5000}, integers(0, 50));
    if (dt != DType::f32) embedding_backward("f32_table_2x33", DType::f32, DType::i32, {2, 33}, integers(0, 50));

    auto adamw = [&](std::string cls, std::int64_t n, std::int64_t step, float lr, float wd) {
      Case c;
      c.op = "adamw_step";
      c.name = case_name(c.op, dt, cls);
      c.dtype = dt;
      const bool master = dt != DType::f32;  // a 16-bit param keeps an f32 master copy
      c.inputs = {input(dt, {n}, normal(0.0, 0.1))};
      c.outputs = {{dt, {n}, normal(0.0, 1.0)},
                   {DType::f32, {n}, normal(0.0, 0.01)},
                   {DType::f32, {n}, uniform(0.0, 1e-4)}};
      if (master) c.outputs.push_back({DType::f32, {n}, normal(0.0, 1.0)});
      c.make_call = [master, step, lr, wd](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        AdamwCall a{outs[0], in[0], outs[1], outs[2], std::nullopt, lr, 0.9f, 0.999f, 1e-8f, wd, step};
        if (master) a.master = outs[3];
        return a;
      };
      out.push_back(std::move(c));
    };
    adamw("step1_4099", 4099, 1, 1e-3f, 0.01f);
    adamw("step1000_no_decay_1021", 1021, 1000, 3e-4f, 0.0f);

    auto global_norm = [&](std::string cls, std::vector<Shape> shapes) {
      Case c;
      c.op = "global_norm";
      c.name = case_name(c.op, dt, cls);
      c.dtype = dt;
      for (const Shape& s : shapes) c.inputs.push_back(input(dt, s, normal(0.0, 1.0)));
      c.outputs = {{DType::f32, Shape{}, std::nullopt}};
      c.make_call = [](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return GlobalNormCall{std::vector<Tensor>(in.begin(), in.end()), outs[0]};
      };
      out.push_back(std::move(c));
    };
    global_norm("three_4099_17x33_5", {{4099}, {17, 33}, {5}});
    global_norm("chunks_40000", {{40000}});  // three chunks of the fixed split

    auto rope_backward = [&](std::string cls, Shape x, RopeStyle style, int rotary_dim, bool freqs) {
      Case c;
      c.op = "rope_backward";
      c.name = case_name(c.op, dt, cls);
      c.dtype = dt;
      c.inputs = {input(dt, x), input(DType::i32, {x[1]}, integers(0, 4096))};
      if (freqs) c.inputs.push_back(input(DType::f32, {(rotary_dim > 0 ? rotary_dim : x[3]) / 2}, uniform(1e-4, 1.0)));
      c.outputs = {{dt, x, std::nullopt}};
      c.make_call = [style, rotary_dim, freqs](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        RopeBackwardCall r{in[0], in[1], outs[0], 10000.0f, style, rotary_dim};
        if (freqs) r.inv_freq = in[2];
        return r;
      };
      out.push_back(std::move(c));
    };
    rope_backward("neox_2x17x3x64", {2, 17, 3, 64}, RopeStyle::neox, 0, false);
    rope_backward("gptj_partial_rd16_1x5x2x40", {1, 5, 2, 40}, RopeStyle::gptj, 16, false);
    rope_backward("neox_inv_freq_1x9x2x48", {1, 9, 2, 48}, RopeStyle::neox, 0, true);

    // attention_backward: y, dy and lse are inputs like any other (the
    // gradient is a function of all six), lse drawn around log(sk) so that
    // P = exp(s - lse) has a forward's magnitudes. Shapes: key counts across
    // the CPU's 64-key blocks and query counts across its 16-query blocks
    // (primes), grouped-query heads, sq != sk under the causal mask (rows
    // that see no key when sq > sk), a decode step, dv != d with a scale.
    auto attention_backward = [&](std::string cls, std::int64_t b, std::int64_t sq, std::int64_t sk, std::int64_t hq,
                                  std::int64_t hkv, std::int64_t d, std::int64_t dv, bool causal, float scale,
                                  std::vector<Special> dy_specials = {}) {
      Case c;
      c.op = "attention_backward";
      c.name = case_name(c.op, dt, cls);
      c.dtype = dt;
      const double log_sk = std::log(static_cast<double>(std::max<std::int64_t>(sk, 1)));
      c.inputs = {input(dt, {b, sq, hq, d}), input(dt, {b, sk, hkv, d}), input(dt, {b, sk, hkv, dv}),
                  input(dt, {b, sq, hq, dv}, normal(0.0, 0.5)), input(dt, {b, sq, hq, dv}),
                  input(DType::f32, {b, sq, hq}, uniform(log_sk, log_sk + 1.0))};
      c.inputs[4].gen.specials = std::move(dy_specials);
      c.outputs = {{dt, {b, sq, hq, d}, std::nullopt}, {dt, {b, sk, hkv, d}, std::nullopt},
                   {dt, {b, sk, hkv, dv}, std::nullopt}};
      c.make_call = [causal, scale](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return AttentionBackwardCall{in[0], in[1], in[2], in[3], in[4], in[5], outs[0], outs[1], outs[2], scale, causal};
      };
      out.push_back(std::move(c));
    };
    attention_backward("noncausal_1x17x33_h4_d64", 1, 17, 33, 4, 4, 64, 64, false, 0.0f);
    attention_backward("causal_2x33x33_h4_d64", 2, 33, 33, 4, 4, 64, 64, true, 0.0f);
    attention_backward("gqa_causal_1x37x131_h6kv2_d40", 1, 37, 131, 6, 2, 40, 40, true, 0.0f);
    attention_backward("gqa_noncausal_2x19x67_h4kv1_d32", 2, 19, 67, 4, 1, 32, 32, false, 0.0f);
    attention_backward("decode_1x1x257_h4kv1_d128", 1, 1, 257, 4, 1, 128, 128, true, 0.0f);
    attention_backward("causal_sq_gt_sk_1x9x5_h2_d32", 1, 9, 5, 2, 2, 32, 32, true, 0.0f);  // queries 0..3 see no key
    attention_backward("dv48_scale_1x7x19_h2_d32", 1, 7, 19, 2, 1, 32, 48, false, 0.3f);
    // A NaN in dy of query 2, head 1: its dq and the dk, dv of every key it sees become NaN.
    attention_backward("nan_dy_1x5x9_h2_d16", 1, 5, 9, 2, 2, 16, 16, false, 0.0f, {{(2 * 2 + 1) * 16 + 3, NAN}});
  }
}

}  // namespace hal::conformance::cases
