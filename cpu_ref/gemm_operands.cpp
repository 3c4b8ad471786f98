#include "cpu_ref/gemm_operands.h"

#include <string>

#include "hal/error.h"

namespace hal::cpu_ref {
namespace {

// A rank-2 or rank-3 operand as a (possibly batched) matrix; `transposed`
// swaps its two trailing axes. A batch dim of extent 1 broadcasts.
GemmMatrix as_matrix(const Tensor& t, bool transposed) {
  const int r = t.rank();
  GemmMatrix m;
  m.data = t.data;
  m.dtype = t.dtype;
  m.offset = t.offset;
  m.batch_stride = (r == 3 && t.shape[0] != 1) ? t.strides[0] : 0;
  m.row_stride = t.strides[r - 2];
  m.col_stride = t.strides[r - 1];
  if (transposed) std::swap(m.row_stride, m.col_stride);
  return m;
}

std::int64_t rows(const Tensor& t, bool transposed) { return t.shape[t.rank() - (transposed ? 1 : 2)]; }
std::int64_t cols(const Tensor& t, bool transposed) { return t.shape[t.rank() - (transposed ? 2 : 1)]; }

void require(bool ok, const char* arg, const char* expected, const Tensor& given) {
  if (!ok) throw_invalid_argument("gemm", arg, expected, given.shape.str());
}

}  // namespace

GemmProblem resolve_gemm(const GemmCall& call) {
  const Tensor &a = call.a, &b = call.b, &c = call.c;
  require(a.rank() == 2 || a.rank() == 3, "a", "rank 2 or 3", a);
  require(b.rank() == 2 || b.rank() == 3, "b", "rank 2 or 3", b);
  require(c.rank() == 2 || c.rank() == 3, "c", "rank 2 or 3", c);

  GemmProblem p;
  p.batch = c.rank() == 3 ? c.shape[0] : 1;
  p.m = rows(a, call.trans_a);
  p.k = cols(a, call.trans_a);
  p.n = cols(b, call.trans_b);
  require(rows(b, call.trans_b) == p.k, "b", "K rows of op(B) matching op(A)'s columns", b);
  require(c.shape[c.rank() - 2] == p.m && c.shape[c.rank() - 1] == p.n, "c", "shape [M, N]", c);
  for (const Tensor* t : {&a, &b})
    require(t->rank() == 2 || t->shape[0] == 1 || t->shape[0] == p.batch, t == &a ? "a" : "b",
            "batch 1 or C's batch", *t);

  p.a = as_matrix(a, call.trans_a);
  p.b = as_matrix(b, call.trans_b);
  p.c = as_matrix(c, false);
  if (call.bias) {
    require(call.bias->rank() == 1 && call.bias->shape[0] == p.n, "bias", "shape [N]", *call.bias);
    p.has_bias = true;
    p.bias.data = call.bias->data;
    p.bias.dtype = call.bias->dtype;
    p.bias.offset = call.bias->offset;
    p.bias.col_stride = call.bias->strides[0];
  }
  p.alpha = call.alpha;
  p.beta = call.beta;
  p.activation = call.activation;
  return p;
}

}  // namespace hal::cpu_ref
