// Binary ops with broadcasting and zero strides, every unary op (contiguous,
// permuted, special values), swiglu.
#include "conformance/cases.h"

namespace hal::conformance::cases {

namespace {

constexpr BinaryKind kBinary[] = {BinaryKind::add, BinaryKind::sub, BinaryKind::mul,
                                  BinaryKind::div, BinaryKind::maximum, BinaryKind::minimum};
constexpr UnaryKind kUnary[] = {UnaryKind::neg,  UnaryKind::abs,     UnaryKind::exp,  UnaryKind::log,
                                UnaryKind::sqrt, UnaryKind::rsqrt,   UnaryKind::tanh, UnaryKind::sigmoid,
                                UnaryKind::relu, UnaryKind::gelu,    UnaryKind::gelu_tanh, UnaryKind::silu};

Case binary(BinaryKind kind, DType dt, std::string cls, InputSpec a, InputSpec b, Shape y) {
  Case c;
  c.op = std::string(to_string(kind));
  c.name = case_name(c.op, dt, cls);
  c.dtype = dt;
  c.inputs = {std::move(a), std::move(b)};
  c.outputs = {{dt, y, std::nullopt}};
  c.make_call = [kind](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
    return BinaryCall{kind, in[0], in[1], outs[0]};
  };
  return c;
}

Case unary(UnaryKind kind, DType dt, std::string cls, InputSpec x, Shape y) {
  Case c;
  c.op = std::string(to_string(kind));
  c.name = case_name(c.op, dt, cls);
  c.dtype = dt;
  c.inputs = {std::move(x)};
  c.outputs = {{dt, y, std::nullopt}};
  c.make_call = [kind](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
    return UnaryCall{kind, in[0], outs[0]};
  };
  return c;
}

// log, sqrt, rsqrt get positive inputs (their domain); the rest N(0, 2).
Generator unary_gen(UnaryKind k) {
  if (k == UnaryKind::log || k == UnaryKind::sqrt || k == UnaryKind::rsqrt) return uniform(0.01, 20.0);
  return normal(0.0, 2.0);
}

}  // namespace

void add_elementwise(std::vector<Case>& out) {
  for (DType dt : kFloatTypes) {
    for (BinaryKind k : kBinary) {
      out.push_back(binary(k, dt, "bcast_31x1_45", input(dt, {31, 1}), input(dt, {45}), {31, 45}));
      // b is a [7, 9] view with both strides 0 over a single element.
      auto scalar = input(dt, {1}, normal(), [](const Tensor& t) {
        Tensor v = t;
        v.shape = Shape{7, 9};
        v.strides = Strides{0, 0};
        return v;
      });
      out.push_back(binary(k, dt, "zero_stride_7x9", input(dt, {7, 9}), scalar, {7, 9}));
      InputSpec sa = input(dt, {4, 8}), sb = input(dt, {4, 8});
      sa.gen.specials = special_values(dt, 0, 1);
      sb.gen.specials = special_values(dt, 8, 1);  // row 1 of b, meeting finite a
      sb.gen.specials.push_back({1, INFINITY});    // Inf op Inf, Inf - Inf, Inf / Inf
      sb.gen.specials.push_back({3, -0.0});        // -0 op -0
      sb.gen.specials.push_back({5, dtype_max_finite(dt)});  // overflow of max + max, max * max
      out.push_back(binary(k, dt, "special_4x8", sa, sb, {4, 8}));
    }
    out.push_back(binary(BinaryKind::add, dt, "rank4_2x3x5x7_3x1x7", input(dt, {2, 3, 5, 7}), input(dt, {3, 1, 7}), {2, 3, 5, 7}));
    out.push_back(binary(BinaryKind::mul, dt, "prime_1021", input(dt, {1021}), input(dt, {1021}), {1021}));
    out.push_back(binary(BinaryKind::add, dt, "empty_0x5", input(dt, {0, 5}), input(dt, {5}), {0, 5}));

    for (UnaryKind k : kUnary) {
      out.push_back(unary(k, dt, "vec_1021", input(dt, {1021}, unary_gen(k)), {1021}));
      // x is a permuted view: storage [11, 17, 3] read as [17, 3, 11].
      out.push_back(unary(k, dt, "permuted_17x3x11",
                          input(dt, {11, 17, 3}, unary_gen(k), [](const Tensor& t) { return t.permuted(Dims{1, 2, 0}); }),
                          {17, 3, 11}));
      InputSpec sx = input(dt, {2, 8}, unary_gen(k));
      sx.gen.specials = special_values(dt, 0, 1);
      out.push_back(unary(k, dt, "special_2x8", sx, {2, 8}));
    }
    out.push_back(unary(UnaryKind::exp, dt, "empty_3x0", input(dt, {3, 0}), {3, 0}));
    out.push_back(unary(UnaryKind::tanh, dt, "one_1", input(dt, {1}), {1}));

    auto swiglu = [&](std::string cls, Shape s, bool specials) {
      Case c;
      c.op = "swiglu";
      c.name = case_name("swiglu", dt, cls);
      c.dtype = dt;
      c.inputs = {input(dt, s, normal(0.0, 3.0)), input(dt, s)};
      if (specials) c.inputs[0].gen.specials = special_values(dt, 0, 1);
      c.outputs = {{dt, s, std::nullopt}};
      c.make_call = [](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
        return SwigluCall{in[0], in[1], outs[0]};
      };
      out.push_back(std::move(c));
    };
    swiglu("rows_33x257", {33, 257}, false);
    swiglu("one_1", {1}, false);
    swiglu("special_2x8", {2, 8}, true);
  }
}

}  // namespace hal::conformance::cases
