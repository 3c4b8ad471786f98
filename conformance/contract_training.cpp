// The bounds of the training ops, op by op. docs/accuracy.md ("Training
// ops") derives each formula; the comments here name the terms. Each is a
// composition of what the forward bounds already state: fixed-length sums
// (gamma(K) times the sum of |terms|, for any order of summation), the stated
// ulps of fp32 math functions, and one correctly rounded fp32 operation per
// add or multiply (u32 relative).
#include "conformance/contract_training.h"

#include <algorithm>
#include <cmath>

#include "conformance/contract.h"
#include "conformance/tensor_util.h"

namespace hal::conformance::contract {

namespace {

constexpr double kT = kTranscendentalUlps * kEps32;  // exp, log, erf, sigmoid: stated ulps
constexpr double kEta32 = 0x1p-150;                  // fp32 underflow per operation

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Causal visibility of key j for query i (hal/op.h).
bool visible(bool causal, std::int64_t i, std::int64_t j, std::int64_t lq, std::int64_t lk) {
  return !causal || j <= i + (lk - lq);
}

// |error| of silu'(x) = s(x) (1 + x s(-x)) in fp32: s carries its ulps, x s(-x)
// one more multiply, 1 + ... and the outer product one rounding each.
double silu_derivative_error(double x) {
  const double s = sigmoid(x), xs = x * sigmoid(-x);
  return s * (kT + 2.0 * kU32) * (std::fabs(xs) + std::fabs(1.0 + xs)) + (1.0 + std::fabs(x)) * kFltMin;
}

// |error| of f'(x) in fp32 for unary_backward's kinds (without the dy factor).
double derivative_error(UnaryKind kind, double x) {
  const double ax = std::fabs(x);
  switch (kind) {
    case UnaryKind::exp: return (kT + kU32) * std::exp(x) + kFltMin;  // exp flushes below FLT_MIN
    case UnaryKind::sigmoid: return (2.0 * kT + 2.0 * kU32) * sigmoid(x) * sigmoid(-x) + 2.0 * kFltMin;
    case UnaryKind::tanh:  // 4 s(2x) s(-2x): 2x and 4* are exact
      return (2.0 * kT + 2.0 * kU32) * 4.0 * sigmoid(2.0 * x) * sigmoid(-2.0 * x) + 8.0 * kFltMin;
    case UnaryKind::silu: return silu_derivative_error(x);
    case UnaryKind::gelu: {
      // Phi = erfc(-x c)/2: erfc's ulps, and its argument's two roundings
      // (the constant and the product) moved by Phi' = phi; phi = k exp(-x^2/2):
      // exp's ulps, the argument's rounding (relative u32 x^2 / 2), the
      // constant and the product; x phi and the sum one rounding each.
      const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
      const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
      const double d = cdf + x * pdf;
      return kT * cdf + 2.0 * kU32 * ax * pdf + ax * pdf * (kT + kU32 * x * x + 3.0 * kU32) + kU32 * std::fabs(d) +
             (1.0 + ax) * kFltMin;
    }
    case UnaryKind::gelu_tanh: {
      // a = k (x + c x^3) in fp32: seven roundings relative to its terms; s(a)
      // moves by s s(-a) per unit of a; x s s(-a) a' is a product of four
      // values with their errors (a' = k (1 + 3 c x^2): six roundings). s(a)
      // flushes to 0 once exp(-a) overflows (a < -88.7): an absolute FLT_MIN in
      // s, multiplied by the factor 1 + x s(-a) a' it carries.
      const double k = 1.59576912160573071176, c = 0.044715;
      const double a = k * (x + c * x * x * x), da = 7.0 * kU32 * k * (ax + c * ax * ax * ax);
      const double s = sigmoid(a), sm = sigmoid(-a), ap = k * (1.0 + 3.0 * c * x * x);
      const double term = ax * s * sm * ap;
      return s * (kT + sm * da) + term * (2.0 * kT + da + 9.0 * kU32) + kU32 * std::fabs(s + x * s * sm * ap) +
             (1.0 + ax * ap) * kFltMin;
    }
    default: return 0.0;
  }
}

}  // namespace

std::vector<double> training_bounds(const SoftmaxBackwardCall& c, std::size_t, std::span<const double> ref,
                                    const Finish& fin) {
  const std::vector<double> y = gather(c.y), dy = gather(c.dy);
  const int r = c.y.rank();
  const std::int64_t L = c.y.shape[r - 1], lq = r >= 2 ? c.y.shape[r - 2] : 1;
  const std::int64_t rows = L == 0 ? 0 : static_cast<std::int64_t>(ref.size()) / L;
  const double scale = std::fabs(static_cast<double>(c.scale));
  std::vector<double> out(ref.size(), 0.0);
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t i = row % lq;
    double s = 0, s_abs = 0, t = 0, t_abs = 0;
    std::int64_t valid = 0;
    for (std::int64_t j = 0; j < L; ++j) {
      if (!visible(c.causal, i, j, lq, L)) continue;
      const std::size_t e = static_cast<std::size_t>(row * L + j);
      s += dy[e] * y[e], s_abs += std::fabs(dy[e] * y[e]), t += dy[e], t_abs += std::fabs(dy[e]);
      ++valid;
    }
    const double Lv = static_cast<double>(valid);
    for (std::int64_t j = 0; j < L; ++j) {
      const std::size_t e = static_cast<std::size_t>(row * L + j);
      if (!visible(c.causal, i, j, lq, L)) continue;  // masked: exactly 0
      double err;
      if (!c.log) {
        // S = sum dy y (L products and sums), dy_j - S, then * y_j, * scale.
        err = scale * std::fabs(y[e]) * gamma(Lv + 3.0) * (s_abs + std::fabs(dy[e])) + 2.0 * kU32 * std::fabs(ref[e]) +
              kFltMin;
      } else {
        // T = sum dy (L terms), exp(y_j) (its ulps), the product, dy_j - ..., * scale.
        const double p = std::exp(y[e]);
        err = scale * (p * (gamma(Lv) * t_abs + (kT + 2.0 * kU32) * std::fabs(t)) +
                       kU32 * (std::fabs(dy[e]) + p * std::fabs(t))) +
              kU32 * std::fabs(ref[e]) + kFltMin;
      }
      out[e] = fin(err, ref[e]);
    }
  }
  return out;
}

std::vector<double> training_bounds(const NormBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& fin) {
  const std::vector<double> x = gather(c.x), w = gather(c.weight), dy = gather(c.dy);
  const std::int64_t D = c.x.shape[c.x.rank() - 1];
  const std::int64_t R = D == 0 ? 0 : static_cast<std::int64_t>(x.size()) / D;
  const double Dd = static_cast<double>(D), eps = c.eps, rs = kDivUlps * kEps32;
  // Output 0 is dx (per element); 1 dweight and 2 dbias sum over rows.
  std::vector<double> out(ref.size(), 0.0);
  std::vector<double> col_err(static_cast<std::size_t>(D), 0.0), col_abs(static_cast<std::size_t>(D), 0.0);
  std::vector<double> xhat(static_cast<std::size_t>(D)), xi(static_cast<std::size_t>(D)), g(static_cast<std::size_t>(D));
  for (std::int64_t row = 0; row < R; ++row) {
    const double* xr = x.data() + row * D;
    const double* dr = dy.data() + row * D;
    double sum = 0, sum_abs = 0, sum_sq = 0;
    for (std::int64_t j = 0; j < D; ++j) sum += xr[j], sum_abs += std::fabs(xr[j]), sum_sq += xr[j] * xr[j];
    double r, rel_r, mu = 0, dmu = 0;
    if (c.rms) {
      const double ms = sum_sq / Dd;
      r = 1.0 / std::sqrt(ms + eps);
      rel_r = 0.5 * gamma(Dd + 2.0) * ms / (ms + eps) + rs + kU32;  // as the forward rmsnorm
    } else {
      // As the forward layernorm: the mean's error dmu, the variance's dvar.
      mu = sum / Dd;
      double var = 0, sum_abs_d = 0, max_d = 0;
      for (std::int64_t j = 0; j < D; ++j) {
        const double d = xr[j] - mu;
        var += d * d, sum_abs_d += std::fabs(d), max_d = std::max(max_d, std::fabs(d));
      }
      var /= Dd;
      dmu = gamma(Dd + 1.0) * sum_abs / Dd;
      const double e_max = dmu * (1.0 + kU32) + kU32 * max_d;
      const double dvar = gamma(Dd + 3.0) * sum_sq / Dd + 2.0 * dmu * (sum_abs_d / Dd + std::fabs(mu)) + e_max * e_max;
      r = 1.0 / std::sqrt(var + eps);
      rel_r = 0.5 * dvar / (var + eps) + rs + kU32;
    }
    // xhat_j and its absolute error xi_j (the centring's error e_j, r's).
    double a = 0, a_abs = 0, b = 0, b_abs = 0, b_err = 0;
    for (std::int64_t j = 0; j < D; ++j) {
      const double d = xr[j] - mu;
      xhat[j] = d * r;
      xi[j] = c.rms ? std::fabs(xhat[j]) * (rel_r + kU32)
                    : (dmu * (1.0 + kU32) + kU32 * std::fabs(d)) * r + std::fabs(d) * r * (rel_r + 2.0 * kU32);
      g[j] = dr[j] * w[static_cast<std::size_t>(j)];
      a += g[j], a_abs += std::fabs(g[j]);
      b += g[j] * xhat[j], b_abs += std::fabs(g[j] * xhat[j]), b_err += std::fabs(g[j]) * xi[j];
    }
    a /= Dd, a_abs /= Dd, b /= Dd, b_abs /= Dd, b_err /= Dd;
    // mean(g) and mean(g xhat): D + 1 roundings of their terms (g's own and
    // the product's included), plus xhat's error carried into the second.
    const double da = c.rms ? 0.0 : (gamma(Dd + 1.0) + kU32) * a_abs;
    const double db = b_err + (gamma(Dd + 1.0) + 2.0 * kU32) * b_abs;
    for (std::int64_t j = 0; j < D; ++j) {
      const std::size_t e = static_cast<std::size_t>(row * D + j);
      if (output == 0) {
        const double terms = std::fabs(g[j]) + (c.rms ? 0.0 : std::fabs(a)) + std::fabs(xhat[j] * b);
        const double err = r * (da + std::fabs(xhat[j]) * db + xi[j] * std::fabs(b) + (2.0 * rel_r + 4.0 * kU32) * terms) +
                           kU32 * std::fabs(ref[e]) + kFltMin;
        out[e] = fin(err, ref[e]);
      } else if (output == 1) {
        // Each term dy xhat: xhat's error, one product.
        col_err[j] += std::fabs(dr[j]) * xi[j] + kU32 * std::fabs(dr[j] * xhat[j]);
        col_abs[j] += std::fabs(dr[j] * xhat[j]);
      } else {
        col_abs[j] += std::fabs(dr[j]);
      }
    }
  }
  if (output != 0) {
    // A sum over R rows in any fixed order (blocked): gamma(R) sum |terms|.
    const double gr = gamma(static_cast<double>(R)), eta = static_cast<double>(R) * kEta32;
    for (std::int64_t j = 0; j < D; ++j)
      out[static_cast<std::size_t>(j)] = fin(col_err[j] + gr * col_abs[j] + eta, ref[static_cast<std::size_t>(j)]);
  }
  return out;
}

std::vector<double> training_bounds(const UnaryBackwardCall& c, std::size_t, std::span<const double> ref,
                                    const Finish& fin) {
  std::vector<double> out(ref.size(), 0.0);
  if (c.kind == UnaryKind::relu) return out;  // a selection: exact
  const std::vector<double> x = gather(c.x), dy = gather(c.dy);
  for (std::size_t i = 0; i < ref.size(); ++i)
    // f'(x)'s error times |dy|, then the product's rounding.
    out[i] = fin(std::fabs(dy[i]) * derivative_error(c.kind, x[i]) + kU32 * std::fabs(ref[i]) + kFltMin, ref[i]);
  return out;
}

std::vector<double> training_bounds(const SwigluBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& fin) {
  const std::vector<double> g = gather(c.gate), u = gather(c.up), dy = gather(c.dy);
  std::vector<double> out(ref.size(), 0.0);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    double err;
    if (output == 0) {
      // dgate = (dy up) silu'(gate): silu''s error times |dy up|, two products.
      err = std::fabs(dy[i] * u[i]) * silu_derivative_error(g[i]) + 2.0 * kU32 * std::fabs(ref[i]) + kFltMin;
    } else {
      // dup = dy silu(gate): the forward silu's bound times |dy|, one product.
      const double s = g[i] * sigmoid(g[i]);
      err = std::fabs(dy[i]) * (kT * (std::fabs(s) + std::fabs(g[i])) + kFltMin) + kU32 * std::fabs(ref[i]) + kFltMin;
    }
    out[i] = fin(err, ref[i]);
  }
  return out;
}

std::vector<double> training_bounds(const CrossEntropyCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& fin) {
  const std::vector<double> z = gather(c.logits), tg = gather(c.targets);
  const std::int64_t N = c.logits.shape[0], V = c.logits.shape[1];
  const double s = c.label_smoothing, keep = 1.0 - s, Vd = static_cast<double>(V);
  std::int64_t counted = 0;
  for (double t : tg) counted += static_cast<std::int64_t>(t) != c.ignore_index;
  const double w = c.reduction == LossReduction::mean ? 1.0 / static_cast<double>(counted) : 1.0;
  std::vector<double> out(ref.size(), 0.0);
  double loss_err = 0, loss_abs = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    const auto t = static_cast<std::int64_t>(tg[static_cast<std::size_t>(i)]);
    if (t == c.ignore_index || V == 0) continue;  // loss and dlogits exactly 0
    const double* zr = z.data() + i * V;
    double m = -INFINITY, amax = 0, sum_abs_z = 0, sum_z = 0;
    for (std::int64_t j = 0; j < V; ++j) {
      m = std::max(m, zr[j]);
      if (std::isfinite(zr[j])) amax = std::max(amax, std::fabs(zr[j]));
      sum_abs_z += std::fabs(zr[j]), sum_z += zr[j];
    }
    double S = 0;
    for (std::int64_t j = 0; j < V; ++j) S += std::exp(zr[j] - m);
    // As softmax: each exponent argument z_j - max is off by u32 * A, which
    // exp turns into relative error; the sum of V positive terms.
    const double term_rel = 2.0 * kU32 * (2.0 * amax) + kT;
    const double sum_rel = gamma(Vd) + term_rel;
    const double log_s = std::log(S), lse = m + log_s;
    // lse = max + log(S): S's relative error is log's absolute one, log's ulps, the add.
    const double e_lse = sum_rel + kT * (std::fabs(log_s) + 1.0) + kU32 * std::fabs(lse);
    const double nll = lse - zr[t];
    double loss = nll, e_loss = e_lse + kU32 * std::fabs(nll);
    if (s != 0.0) {
      // The mean of the row (V + 1 roundings), lse - mean, then the blend:
      // 1 - s, two products and a sum.
      const double smooth = lse - sum_z / Vd;
      const double e_smooth = e_lse + gamma(Vd + 1.0) * sum_abs_z / Vd + kU32 * std::fabs(smooth);
      loss = keep * nll + s * smooth;
      e_loss = keep * (e_loss + 2.0 * kU32 * std::fabs(nll)) + s * (e_smooth + 2.0 * kU32 * std::fabs(smooth)) +
               kU32 * std::fabs(loss);
    }
    loss_err += e_loss, loss_abs += std::fabs(loss);
    if (output == 0 && c.reduction == LossReduction::none)
      out[static_cast<std::size_t>(i)] = fin(e_loss, ref[static_cast<std::size_t>(i)]);
    if (output == 1) {
      // p_j = exp(z_j - max) / S as softmax (terms, sum, one division), minus
      // the rounded constants (1 - s) and s / V, times the rounded weight.
      const double spread = s / Vd;
      for (std::int64_t j = 0; j < V; ++j) {
        const std::size_t e = static_cast<std::size_t>(i * V + j);
        const double p = std::exp(zr[j] - m) / S;
        const double err = w * (p * (term_rel + sum_rel + kU32) + 3.0 * kU32 * (p + (j == t ? keep : 0.0) + spread)) +
                           2.0 * kU32 * std::fabs(ref[e]) + kFltMin;
        out[e] = fin(err, ref[e]);
      }
    }
  }
  if (output == 0 && c.reduction != LossReduction::none) {
    // The per-row errors, then a sum of N terms (mean: and the division).
    const double n = static_cast<double>(N);
    double err = loss_err + gamma(n) * loss_abs + n * kEta32;
    if (c.reduction == LossReduction::mean) err = (loss_err + gamma(n + 1.0) * loss_abs) / static_cast<double>(counted);
    out[0] = fin(err, ref[0]);
  }
  return out;
}

std::vector<double> training_bounds(const EmbeddingBackwardCall& c, std::size_t, std::span<const double> ref,
                                    const Finish& fin) {
  // ref = the prior row + its dy rows; the oracle call's dtable holds the prior values.
  const std::vector<double> ids = gather(c.ids), dy = gather(c.dy), d0 = gather(c.dtable);
  const std::int64_t V = c.dtable.shape[0], D = c.dtable.shape[1];
  std::vector<double> count(static_cast<std::size_t>(V), 0.0), mag(d0.size());
  for (std::size_t e = 0; e < d0.size(); ++e) mag[e] = std::fabs(d0[e]);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto r = static_cast<std::int64_t>(ids[i]);
    count[static_cast<std::size_t>(r)] += 1.0;
    for (std::int64_t j = 0; j < D; ++j) mag[static_cast<std::size_t>(r * D + j)] += std::fabs(dy[i * static_cast<std::size_t>(D) + static_cast<std::size_t>(j)]);
  }
  std::vector<double> out(ref.size(), 0.0);
  for (std::int64_t r = 0; r < V; ++r)
    for (std::int64_t j = 0; j < D; ++j) {
      // n additions to the prior value in fp32: gamma(n) times the magnitudes.
      const std::size_t e = static_cast<std::size_t>(r * D + j);
      const double n = count[static_cast<std::size_t>(r)];
      out[e] = fin(gamma(n) * mag[e] + n * kEta32, ref[e]);
    }
  return out;
}

std::vector<double> training_bounds(const AdamwCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& fin) {
  // The oracle call holds the prior values of param (or master), m and v.
  const std::vector<double> g = gather(c.grad), m0 = gather(c.m), v0 = gather(c.v);
  const std::vector<double> p0 = gather(c.master ? *c.master : c.param);
  const double b1 = c.beta1, b2 = c.beta2, t = static_cast<double>(c.step);
  const double step_size = c.lr / (1.0 - std::pow(b1, t)), isb = 1.0 / std::sqrt(1.0 - std::pow(b2, t));
  const double decay = 1.0 - static_cast<double>(c.lr) * static_cast<double>(c.weight_decay), eps = c.eps;
  std::vector<double> out(ref.size(), 0.0);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    // m, v: the rounded constants (beta, 1 - beta), the products and the sum.
    const double m = b1 * m0[i] + (1.0 - b1) * g[i], v = b2 * v0[i] + (1.0 - b2) * g[i] * g[i];
    const double e_m = 3.0 * kU32 * (b1 * std::fabs(m0[i]) + (1.0 - b1) * std::fabs(g[i]));
    const double e_v = 4.0 * kU32 * (b2 * v0[i] + (1.0 - b2) * g[i] * g[i]);
    double err;
    if (output == 1) {
      err = e_m;
    } else if (output == 2) {
      err = e_v;
    } else {
      // sqrt(v): v's error through sqrt (|sqrt(a + e) - sqrt(a)| <= min(e / 2 sqrt(a), sqrt(e))), its ulp;
      // the denominator: times the rounded 1/sqrt(bc2), plus eps; the update: m's
      // and the denominator's errors, a division, the rounded step size;
      // p * decay - update: the rounded decay, a product, a subtraction.
      const double sq = std::sqrt(v);
      const double e_sq = (v > 0 ? std::min(e_v / (2.0 * sq), std::sqrt(e_v)) : std::sqrt(e_v)) + kSqrtUlps * kEps32 * sq;
      const double den = sq * isb + eps, e_den = isb * e_sq + 3.0 * kU32 * den;
      const double upd = step_size * m / den;
      const double e_upd = step_size * (e_m / den + std::fabs(m) * e_den / (den * den)) +
                           (kDivUlps * kEps32 + 2.0 * kU32) * std::fabs(upd);
      err = e_upd + 2.0 * kU32 * std::fabs(p0[i] * decay) + kU32 * std::fabs(p0[i] * decay - upd) + kFltMin;
    }
    out[i] = fin(err, ref[i]);
  }
  return out;
}

std::vector<double> training_bounds(const GlobalNormCall& c, std::size_t, std::span<const double> ref,
                                    const Finish& fin) {
  // N squares (one rounding each) summed in any fixed order: relative
  // gamma(N + 1), halved by sqrt, plus sqrt's ulp; squares below FLT_MIN may
  // lose N * 2^-150 in all, sqrt(N * 2^-150) after the sqrt.
  double n = 0;
  for (const Tensor& x : c.xs) n += static_cast<double>(x.numel());
  const double y = std::fabs(ref[0]);
  return {fin((0.5 * gamma(n + 1.0) + kSqrtUlps * kEps32) * y + std::sqrt(n * kEta32), ref[0])};
}

std::vector<double> training_bounds(const AttentionBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& fin) {
  // Per (query, head, visible key): the score s (a dot of length d and the
  // scale: gamma(d + 1) |scale| sum |q k|), P = exp(s - lse) (s's error, the
  // subtraction's rounding and exp's ulps, relative in P; lse is an input),
  // dp = dy . v and D = dy . y (gamma(dv) sum |terms| each), g = dp - D (one
  // rounding), dS = P g (P's relative error on |P g|, g's error times P, one
  // rounding). Then each output is a sum of products in some fixed order:
  //   dv_j = sum P dy:            gamma(n + 1) sum |P dy| + sum |dy| err(P)
  //   dk_j = scale sum dS q:      |scale| (gamma(n + 1) sum |dS q| + sum |q| err(dS)) + u32 |dk|
  //   dq_i = scale sum_j dS k:    likewise over the query's visible keys
  // with n the number of terms; P below FLT_MIN may flush to 0 (kFltMin each).
  const std::vector<double> q = gather(c.q), k = gather(c.k), v = gather(c.v), y = gather(c.y), dy = gather(c.dy),
                            lse = gather(c.lse);
  const std::int64_t B = c.q.shape[0], sq = c.q.shape[1], hq = c.q.shape[2], d = c.q.shape[3];
  const std::int64_t sk = c.k.shape[1], hkv = c.k.shape[2], dv = c.v.shape[3];
  const std::int64_t group = hkv == 0 ? 1 : hq / hkv;
  const double scale = c.scale, as = std::fabs(scale);
  const double gd = gamma(static_cast<double>(d + 1)), gv = gamma(static_cast<double>(dv));
  // Per output element: sum of |terms| and sum of propagated errors, and the term count.
  std::vector<double> mag(ref.size(), 0.0), err(ref.size(), 0.0), terms(ref.size(), 0.0);
  for (std::int64_t bi = 0; bi < B; ++bi)
    for (std::int64_t h = 0; h < hq; ++h) {
      const std::int64_t kh = h / group;
      for (std::int64_t i = 0; i < sq; ++i) {
        const std::size_t row = static_cast<std::size_t>((bi * sq + i) * hq + h);
        const double* qr = q.data() + row * static_cast<std::size_t>(d);
        const double* dyr = dy.data() + row * static_cast<std::size_t>(dv);
        const double* yr = y.data() + row * static_cast<std::size_t>(dv);
        double D = 0, D_abs = 0;
        for (std::int64_t e = 0; e < dv; ++e) D += dyr[e] * yr[e], D_abs += std::fabs(dyr[e] * yr[e]);
        const double e_D = gv * D_abs;
        for (std::int64_t j = 0; j < sk; ++j) {
          if (!visible(c.causal, i, j, sq, sk)) continue;
          const std::size_t key = static_cast<std::size_t>((bi * sk + j) * hkv + kh);
          const double* kr = k.data() + key * static_cast<std::size_t>(d);
          const double* vr = v.data() + key * static_cast<std::size_t>(dv);
          double dot = 0, absdot = 0, dp = 0, dp_abs = 0;
          for (std::int64_t e = 0; e < d; ++e) dot += qr[e] * kr[e], absdot += std::fabs(qr[e] * kr[e]);
          for (std::int64_t e = 0; e < dv; ++e) dp += dyr[e] * vr[e], dp_abs += std::fabs(dyr[e] * vr[e]);
          const double x = scale * dot - lse[row];
          const double P = std::exp(x);
          const double rel_P = gd * as * absdot + kU32 * std::fabs(x) + kT;
          const double e_P = P * rel_P + kFltMin;
          const double g = dp - D, e_g = gv * dp_abs + e_D + kU32 * std::fabs(g);
          const double ds = P * g, e_ds = e_P * std::fabs(g) + P * e_g + kU32 * std::fabs(ds);
          if (output == 2) {
            for (std::int64_t e = 0; e < dv; ++e) {
              const std::size_t o = key * static_cast<std::size_t>(dv) + static_cast<std::size_t>(e);
              mag[o] += P * std::fabs(dyr[e]), err[o] += e_P * std::fabs(dyr[e]), terms[o] += 1;
            }
          } else if (output == 1) {
            for (std::int64_t e = 0; e < d; ++e) {
              const std::size_t o = key * static_cast<std::size_t>(d) + static_cast<std::size_t>(e);
              mag[o] += std::fabs(ds * qr[e]), err[o] += e_ds * std::fabs(qr[e]), terms[o] += 1;
            }
          } else {
            for (std::int64_t e = 0; e < d; ++e) {
              const std::size_t o = row * static_cast<std::size_t>(d) + static_cast<std::size_t>(e);
              mag[o] += std::fabs(ds * kr[e]), err[o] += e_ds * std::fabs(kr[e]), terms[o] += 1;
            }
          }
        }
      }
    }
  std::vector<double> out(ref.size(), 0.0);
  for (std::size_t o = 0; o < ref.size(); ++o) {
    if (terms[o] == 0) continue;  // no term: exactly 0
    const double sum_err = gamma(terms[o] + 1.0) * mag[o] + err[o] + terms[o] * kEta32;
    const double e = output == 2 ? sum_err : as * sum_err + kU32 * std::fabs(ref[o]);
    out[o] = fin(e, ref[o]);
  }
  return out;
}

}  // namespace hal::conformance::contract
