// gemm cases: every transpose combination, odd and prime sizes, a long K,
// batches (incl. a broadcast batch with stride 0), strided operands,
// bias + activation, alpha/beta, an empty M and planted NaN/Inf.
#include "conformance/cases.h"

namespace hal::conformance::cases {

namespace {

struct GemmShape {
  std::string cls;
  std::int64_t batch = 0;  // 0: unbatched
  std::int64_t m, n, k;
  bool ta = false, tb = false;
  bool broadcast_b = false;  // B has batch stride 0
  bool strided_a = false;    // A is a window of a wider matrix
  float alpha = 1.0f, beta = 0.0f;
  bool bias = false;
  Activation act = Activation::none;
  bool specials = false;
};

Case make(DType dt, const GemmShape& s) {
  Case c;
  c.name = case_name("gemm", dt, s.cls);
  c.op = "gemm";
  c.dtype = dt;
  auto mat = [&](std::int64_t rows, std::int64_t cols, std::int64_t batch) {
    return batch ? Shape{batch, rows, cols} : Shape{rows, cols};
  };
  const std::int64_t ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k;
  const std::int64_t br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
  InputSpec a = input(dt, mat(ar, ac, s.batch));
  if (s.strided_a) {
    // A [ar, ac] read from a [ar + 3, ac + 5] storage at row 2, column 1.
    a.storage = Shape{ar + 3, ac + 5};
    a.view = [ar, ac](const Tensor& t) {
      Tensor v = t;
      v.shape = Shape{ar, ac};
      v.offset = 2 * (ac + 5) + 1;
      return v;
    };
  }
  InputSpec b = input(dt, s.broadcast_b ? Shape{1, br, bc} : mat(br, bc, s.batch));
  if (s.broadcast_b) {
    const std::int64_t batch = s.batch;
    b.view = [batch](const Tensor& t) {
      Tensor v = t;
      v.shape[0] = batch;
      v.strides[0] = 0;
      return v;
    };
  }
  if (s.specials) {
    a.gen.specials = {{0, NAN}, {ac + 1, INFINITY}};  // row 0 NaN; row 1 meets +Inf
    b.gen.specials = {{2 * bc + 3, -INFINITY}};
  }
  c.inputs = {a, b};
  if (s.bias) c.inputs.push_back(input(dt, Shape{s.n}, normal(0.0, 0.5)));
  c.outputs = {{dt, mat(s.m, s.n, s.batch), std::nullopt}};
  if (s.beta != 0.0f) c.outputs[0].initial = normal();
  c.make_call = [s](std::span<const Tensor> in, std::span<const Tensor> outs) -> OpCall {
    GemmCall g{in[0], in[1], outs[0], std::nullopt, s.ta, s.tb, s.alpha, s.beta, s.act};
    if (s.bias) g.bias = in[2];
    return g;
  };
  return c;
}

}  // namespace

void add_gemm(std::vector<Case>& out) {
  const GemmShape shapes[] = {
      {.cls = "nn_1x1x1", .m = 1, .n = 1, .k = 1},
      {.cls = "nn_127x257x61", .m = 127, .n = 257, .k = 61},
      {.cls = "nt_33x65x127", .m = 33, .n = 65, .k = 127, .tb = true},
      {.cls = "tn_31x17x40", .m = 31, .n = 17, .k = 40, .ta = true},
      {.cls = "tt_16x48x80", .m = 16, .n = 48, .k = 80, .ta = true, .tb = true},
      {.cls = "long_k_4x3x16384", .m = 4, .n = 3, .k = 16384},
      {.cls = "batched_3x19x23x29", .batch = 3, .m = 19, .n = 23, .k = 29},
      {.cls = "batched_nt_2x5x7x1021", .batch = 2, .m = 5, .n = 7, .k = 1021, .tb = true},
      {.cls = "bcast_b_stride0_4x13x11x17", .batch = 4, .m = 13, .n = 11, .k = 17, .broadcast_b = true},
      {.cls = "strided_a_29x31x37", .m = 29, .n = 31, .k = 37, .strided_a = true},
      {.cls = "alpha_beta_20x30x40", .m = 20, .n = 30, .k = 40, .alpha = 0.5f, .beta = -1.5f},
      {.cls = "bias_relu_37x45x33", .m = 37, .n = 45, .k = 33, .bias = true, .act = Activation::relu},
      {.cls = "bias_gelu_tanh_37x45x33", .m = 37, .n = 45, .k = 33, .bias = true, .act = Activation::gelu_tanh},
      {.cls = "bias_silu_nt_21x64x96", .m = 21, .n = 64, .k = 96, .tb = true, .bias = true, .act = Activation::silu},
      {.cls = "empty_m_0x7x5", .m = 0, .n = 7, .k = 5},
      {.cls = "special_9x10x11", .m = 9, .n = 10, .k = 11, .specials = true},
  };
  for (DType dt : kFloatTypes)
    for (const GemmShape& s : shapes) out.push_back(make(dt, s));
}

}  // namespace hal::conformance::cases
