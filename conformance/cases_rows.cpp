// Reductions over different axes (keepdim, long, empty), softmax and
// log_softmax (causal, scaled, fully masked rows, long rows), layernorm and
// rmsnorm.
#include "conformance/cases.h"

namespace hal::conformance::cases {

namespace {

constexpr ReduceKind kReduce[] = {ReduceKind::sum, ReduceKind::mean, ReduceKind::max, ReduceKind::min, ReduceKind::argmax};

Shape reduced(Shape s, int axis, bool keepdim) {
  if (keepdim) s[axis] = 1;
  else s.erase(axis);
  return s;
}

}  // namespace

void add_rows(std::vector<Case>& out) {
  for (DType dt : kFloatTypes) {
    for (ReduceKind k : kReduce) {
      auto reduce = [&](std::string cls, Shape s, int axis, bool keepdim, std::vector<Special> specials = {}) {
        Case c;
        c.op = std::string(to_string(k));
        c.name = case_name(c.op, dt, cls);
        c.dtype = dt;
        c.inputs = {input(dt, s)};
        c.inputs[0].gen.specials = std::move(specials);
        c.outputs = {{k == ReduceKind::argmax ? DType::i64 : dt, reduced(s, axis, keepdim), std::nullopt}};
        c.make_call = [k, axis, keepdim](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
          return ReduceCall{k, in[0], outs[0], axis, keepdim};
        };
        out.push_back(std::move(c));
      };
      reduce("last_17x257", {17, 257}, 1, false);
      reduce("first_1021x3", {1021, 3}, 0, false);
      reduce("mid_keepdim_5x127x7", {5, 127, 7}, 1, true);
      reduce("long_3x16384", {3, 16384}, 1, false);
      reduce("len1_9x1", {9, 1}, 1, false);
      reduce("empty_rows_0x5", {0, 5}, 1, false);
      // Row 0 holds a NaN, row 1 +Inf, row 2 -Inf, row 3 the largest finite value.
      reduce("special_4x37", {4, 37}, 1, false,
             {{5, NAN}, {37 + 3, INFINITY}, {74 + 7, -INFINITY}, {111 + 11, dtype_max_finite(dt)}});
    }

    for (bool log : {false, true}) {
      const std::string op = log ? "log_softmax" : "softmax";
      auto softmax = [&](std::string cls, Shape s, float scale, bool causal, std::vector<Special> specials = {}) {
        Case c;
        c.op = op;
        c.name = case_name(op, dt, cls);
        c.dtype = dt;
        c.inputs = {input(dt, s, normal(0.0, 3.0))};
        c.inputs[0].gen.specials = std::move(specials);
        c.outputs = {{dt, s, std::nullopt}};
        c.make_call = [scale, causal, log](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
          return SoftmaxCall{in[0], outs[0], scale, causal, log};
        };
        out.push_back(std::move(c));
      };
      softmax("rows_7x1021", {7, 1021}, 1.0f, false);
      softmax("causal_127x257", {127, 257}, 0.125f, true);
      softmax("causal_fully_masked_9x5", {9, 5}, 1.0f, true);  // rows 0..3 see no key
      softmax("scale_3x4x33", {3, 4, 33}, 2.5f, false);
      softmax("long_2x16384", {2, 16384}, 1.0f, false);
      softmax("len1_5x1", {5, 1}, 1.0f, false);
      softmax("empty_0x7", {0, 7}, 1.0f, false);
      // Row 0: NaN; row 1: +Inf (Inf - Inf = NaN row); row 2: -Inf (weight 0); row 3: max finite.
      softmax("special_4x16", {4, 16}, 1.0f, false,
              {{3, NAN}, {16 + 5, INFINITY}, {32 + 7, -INFINITY}, {48 + 9, dtype_max_finite(dt)}});
    }

    for (bool rms : {false, true}) {
      const std::string op = rms ? "rmsnorm" : "layernorm";
      auto norm = [&](std::string cls, Shape s, bool bias, float eps) {
        Case c;
        c.op = op;
        c.name = case_name(op, dt, cls);
        c.dtype = dt;
        const std::int64_t d = s.back();
        c.inputs = {input(dt, s, normal(0.5, 2.0)), input(dt, {d}, normal(1.0, 0.25))};
        if (bias) c.inputs.push_back(input(dt, {d}, normal(0.0, 0.5)));
        c.outputs = {{dt, s, std::nullopt}};
        c.make_call = [bias, rms, eps](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
          NormCall n{in[0], in[1], std::nullopt, outs[0], eps, rms};
          if (bias) n.bias = in[2];
          return n;
        };
        out.push_back(std::move(c));
      };
      norm("rows_7x1021", {7, 1021}, !rms, 1e-5f);
      norm("rows_nobias_2x3x127", {2, 3, 127}, false, 1e-6f);
      norm("long_2x8192", {2, 8192}, !rms, 1e-5f);
      norm("d1_5x1", {5, 1}, !rms, 1e-5f);
    }
  }
}

}  // namespace hal::conformance::cases
