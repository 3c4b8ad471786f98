// The bounds of the accuracy contract, op by op. docs/accuracy.md derives each
// formula; the comments here name the terms.
#include "conformance/contract.h"

#include <algorithm>
#include <cmath>

#include "conformance/fp8_contract.h"
#include "conformance/contract_training.h"
#include "conformance/tensor_util.h"
#include "hal/shape.h"
#include "ops/ops.h"

namespace hal::conformance::contract {

double gamma(double k) {
  const double ku = k * kU32;
  return ku < 1.0 ? ku / (1.0 - ku) : INFINITY;
}

double output_roundoff(DType t) { return is_floating(t) ? dtype_epsilon(t) : 0.0; }

double output_underflow(DType t) {
  switch (t) {
    case DType::f32: return 0x1p-150;
    case DType::f16: return 0x1p-25;
    case DType::bf16: return 0x1p-134;
    case DType::f8e4m3: return 0x1p-10;
    case DType::f8e5m2: return 0x1p-17;
    case DType::f8e4m3fnuz: return 0x1p-11;
    case DType::f8e5m2fnuz: return 0x1p-18;
    // Half the smallest subnormal, as for the others, is 2^-1075: not a
    // double (the literal rounded to 0). The smallest subnormal bounds it.
    case DType::f64: return 0x1p-1074;
    default: return 0.0;
  }
}

namespace {

// Fp32 intermediate results may underflow: each of n operations adds at most
// half the smallest fp32 subnormal (Higham's eta term).
constexpr double kEta32 = 0x1p-150;

struct Finisher {
  DType dt;
  double u = output_roundoff(dt);
  double eta = output_underflow(dt);
  // c * (compute error carried through the final rounding + that rounding).
  double operator()(double compute_err, double ref) const {
    return kSafety * (compute_err * (1.0 + u) + u * std::fabs(ref) + eta);
  }
};

std::vector<double> gemm_bounds(const GemmCall& g, std::span<const double> ref, const Finisher& fin) {
  const std::vector<double> A = gather(g.a), B = gather(g.b);
  const std::vector<double> C0 = g.beta != 0.0f ? gather(g.c) : std::vector<double>{};
  const std::vector<double> bias = g.bias ? gather(*g.bias) : std::vector<double>{};
  const int rc = g.c.rank(), ra = g.a.rank(), rb = g.b.rank();
  const std::int64_t batch = rc == 3 ? g.c.shape[0] : 1, M = g.c.shape[rc - 2], N = g.c.shape[rc - 1];
  const std::int64_t K = g.trans_a ? g.a.shape[ra - 2] : g.a.shape[ra - 1];
  const bool a_batched = ra == 3 && g.a.shape[0] > 1, b_batched = rb == 3 && g.b.shape[0] > 1;
  const double alpha = std::fabs(static_cast<double>(g.alpha)), beta = std::fabs(static_cast<double>(g.beta));
  // Sum of K products, then alpha, beta*C and bias: K + 3 roundings.
  const double gam = gamma(static_cast<double>(K + 3));
  std::vector<double> out(ref.size());
  for (std::int64_t bi = 0; bi < batch; ++bi) {
    const double* a = A.data() + (a_batched ? bi * M * K : 0);
    const double* b = B.data() + (b_batched ? bi * K * N : 0);
    for (std::int64_t m = 0; m < M; ++m) {
      for (std::int64_t n = 0; n < N; ++n) {
        double s = 0, z = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          const double av = g.trans_a ? a[k * M + m] : a[m * K + k];
          const double bv = g.trans_b ? b[n * K + k] : b[k * N + n];
          s += std::fabs(av * bv);
          z += av * bv;
        }
        const std::int64_t o = (bi * M + m) * N + n;
        s *= alpha;
        z *= g.alpha;
        if (!C0.empty()) s += beta * std::fabs(C0[static_cast<std::size_t>(o)]), z += g.beta * C0[static_cast<std::size_t>(o)];
        if (!bias.empty()) s += std::fabs(bias[static_cast<std::size_t>(n)]), z += bias[static_cast<std::size_t>(n)];
        double err = gam * s + static_cast<double>(K + 3) * kEta32;
        const double y = ref[static_cast<std::size_t>(o)];
        if (g.activation == Activation::relu) {
          // relu is 1-Lipschitz and exact.
        } else if (g.activation != Activation::none) {
          // Error in z moves the output by at most L * err; the activation's own
          // math (tanh / exp inside) adds its ulps of |y| and, through 1 + tanh
          // or z * sigmoid, of |z|.
          err = kActivationLipschitz * err + kTranscendentalUlps * kEps32 * (std::fabs(y) + std::fabs(z)) + kFltMin;
        }
        out[static_cast<std::size_t>(o)] = fin(err, y);
      }
    }
  }
  return out;
}

std::vector<double> binary_bounds(const BinaryCall& c, std::span<const double> ref, const Finisher& fin) {
  double ulps = 0.5;  // add, sub, mul: correctly rounded in fp32 (half an ulp)
  if (c.kind == BinaryKind::div) ulps = kDivUlps;
  std::vector<double> out(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (c.kind == BinaryKind::maximum || c.kind == BinaryKind::minimum)
      out[i] = 0.0;  // a selection: exact
    else
      out[i] = fin(ulps * kEps32 * std::fabs(ref[i]), ref[i]);
  }
  return out;
}

std::vector<double> unary_bounds(const UnaryCall& c, std::span<const double> ref, const Finisher& fin) {
  const std::vector<double> x = gather(c.x);
  std::vector<double> out(ref.size());
  const double t = kTranscendentalUlps * kEps32;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double y = std::fabs(ref[i]), ax = std::fabs(x[i]);
    double err = 0;
    switch (c.kind) {
      case UnaryKind::neg:
      case UnaryKind::abs:
      case UnaryKind::relu: out[i] = 0.0; continue;  // exact
      case UnaryKind::exp:
      case UnaryKind::tanh:
      case UnaryKind::sigmoid: err = t * y + kFltMin; break;  // relative; fp32 underflow may flush
      case UnaryKind::log: err = t * (y + 1.0); break;        // absolute near log(1) = 0
      case UnaryKind::sqrt: err = kSqrtUlps * kEps32 * y; break;
      case UnaryKind::rsqrt: err = kDivUlps * kEps32 * y; break;
      // x * (something in [0, 1]) computed through 1 + erf / 1 + tanh / 1 + exp:
      // the inner function's error is absolute, so it scales with |x|.
      case UnaryKind::gelu:
      case UnaryKind::gelu_tanh:
      case UnaryKind::silu: err = t * (y + ax) + kFltMin; break;
    }
    out[i] = fin(err, ref[i]);
  }
  return out;
}

std::vector<double> swiglu_bounds(const SwigluCall& c, std::span<const double> ref, const Finisher& fin) {
  const std::vector<double> g = gather(c.gate), u = gather(c.up);
  std::vector<double> out(ref.size());
  const double t = kTranscendentalUlps * kEps32;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double s = g[i] / (1.0 + std::exp(-g[i]));  // silu(gate), exact enough in fp64
    // silu's error (as in unary) times |up|, then one fp32 multiply.
    const double err = std::fabs(u[i]) * (t * (std::fabs(s) + std::fabs(g[i])) + kFltMin) + 0.5 * kEps32 * std::fabs(ref[i]);
    out[i] = fin(err, ref[i]);
  }
  return out;
}

std::vector<double> reduce_bounds(const ReduceCall& c, std::span<const double> ref, const Finisher& fin) {
  std::vector<double> out(ref.size(), 0.0);
  if (c.kind != ReduceKind::sum && c.kind != ReduceKind::mean) return out;  // max/min/argmax: exact
  const std::vector<double> x = gather(c.x);
  const std::int64_t K = c.x.shape[c.axis];
  std::int64_t inner = 1;
  for (int d = c.axis + 1; d < c.x.rank(); ++d) inner *= c.x.shape[d];
  for (std::size_t o = 0; o < ref.size(); ++o) {
    const std::int64_t outer = static_cast<std::int64_t>(o) / inner, in = static_cast<std::int64_t>(o) % inner;
    double s = 0;
    for (std::int64_t k = 0; k < K; ++k) s += std::fabs(x[static_cast<std::size_t>((outer * K + k) * inner + in)]);
    // Sum of K terms: gamma(K) * sum|x|; mean adds the division by K.
    double err = gamma(static_cast<double>(K)) * s + static_cast<double>(K) * kEta32;
    if (c.kind == ReduceKind::mean && K > 0) err = gamma(static_cast<double>(K + 1)) * s / static_cast<double>(K) + kEta32;
    out[o] = fin(err, ref[o]);
  }
  return out;
}

// Causal visibility of key j for query i (hal/op.h).
bool visible(bool causal, std::int64_t i, std::int64_t j, std::int64_t lq, std::int64_t lk) {
  return !causal || j <= i + (lk - lq);
}

std::vector<double> softmax_bounds(const SoftmaxCall& c, std::span<const double> ref, const Finisher& fin) {
  const std::vector<double> x = gather(c.x);
  const int r = c.x.rank();
  const std::int64_t L = c.x.shape[r - 1], lq = r >= 2 ? c.x.shape[r - 2] : 1;
  const std::int64_t rows = L == 0 ? 0 : static_cast<std::int64_t>(ref.size()) / L;
  const double scale = c.scale, t = kTranscendentalUlps * kEps32;
  std::vector<double> out(ref.size(), 0.0);
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t i = row % lq;
    double amax = 0;
    std::int64_t valid = 0;
    for (std::int64_t j = 0; j < L; ++j) {
      if (!visible(c.causal, i, j, lq, L)) continue;
      const double v = std::fabs(scale * x[static_cast<std::size_t>(row * L + j)]);
      if (std::isfinite(v)) amax = std::max(amax, v);
      ++valid;
    }
    // Each exponent argument scale*x_j - max carries fp32 roundings of size
    // u32 * (|scale*x_j| + |max|) <= u32 * A, which exp turns into relative error.
    const double A = 2.0 * amax;
    const double term_rel = 2.0 * kU32 * A + t;  // one exp term: argument + exp's ulps
    const double sum_rel = gamma(static_cast<double>(valid)) + term_rel;
    for (std::int64_t j = 0; j < L; ++j) {
      const std::size_t e = static_cast<std::size_t>(row * L + j);
      if (!visible(c.causal, i, j, lq, L)) {
        out[e] = fin(0.0, ref[e]);
        continue;
      }
      if (!c.log) {
        // numerator / denominator, then one division.
        out[e] = fin((term_rel + sum_rel + kU32) * std::fabs(ref[e]) + kFltMin, ref[e]);
      } else {
        // scale*x_i - max - log(sum): roundings of the three terms, log's ulps,
        // and the sum's relative error (d log S = dS / S).
        const double xi = std::fabs(scale * x[e]);
        const double T = xi + A + std::fabs(scale * x[e] - ref[e]);
        out[e] = fin(4.0 * kU32 * T + t * (T + 1.0) + sum_rel, ref[e]);
      }
    }
  }
  return out;
}

std::vector<double> norm_bounds(const NormCall& c, std::span<const double> ref, const Finisher& fin) {
  const std::vector<double> x = gather(c.x), w = gather(c.weight);
  const std::vector<double> b = c.bias ? gather(*c.bias) : std::vector<double>{};
  const std::int64_t D = c.x.shape[c.x.rank() - 1];
  const std::int64_t rows = D == 0 ? 0 : static_cast<std::int64_t>(ref.size()) / D;
  const double eps = c.eps, rs = kDivUlps * kEps32;
  std::vector<double> out(ref.size(), 0.0);
  for (std::int64_t row = 0; row < rows; ++row) {
    const double* xr = x.data() + row * D;
    double sum = 0, sum_abs = 0, sum_sq = 0;
    for (std::int64_t j = 0; j < D; ++j) sum += xr[j], sum_abs += std::fabs(xr[j]), sum_sq += xr[j] * xr[j];
    const double Dd = static_cast<double>(D);
    if (c.rms) {
      const double ms = sum_sq / Dd;
      // mean of D squares (all positive: relative gamma(D+2)), + eps, rsqrt's
      // ulps; then x * r * w: two multiplies.
      const double rel_r = 0.5 * gamma(Dd + 2.0) * ms / (ms + eps) + rs + kU32;
      for (std::int64_t j = 0; j < D; ++j) {
        const std::size_t e = static_cast<std::size_t>(row * D + j);
        out[e] = fin((rel_r + 2.0 * kU32) * std::fabs(ref[e]) + kFltMin, ref[e]);
      }
      continue;
    }
    const double mu = sum / Dd;
    double var = 0, sum_abs_d = 0, max_d = 0;
    for (std::int64_t j = 0; j < D; ++j) {
      const double d = xr[j] - mu;
      var += d * d, sum_abs_d += std::fabs(d), max_d = std::max(max_d, std::fabs(d));
    }
    var /= Dd;
    const double mean_abs_d = sum_abs_d / Dd, mean_sq = sum_sq / Dd;
    const double dmu = gamma(Dd + 1.0) * sum_abs / Dd;  // error of the mean
    // Variance: a sum of D squares relative to mean(x^2) (covers one-pass
    // E[x^2] - mu^2 as well as two-pass), plus the mean's error carried in.
    const double e_max = dmu * (1.0 + kU32) + kU32 * max_d;
    const double dvar = gamma(Dd + 3.0) * mean_sq + 2.0 * dmu * (mean_abs_d + std::fabs(mu)) + e_max * e_max;
    const double r = 1.0 / std::sqrt(var + eps);
    const double rel_r = 0.5 * dvar / (var + eps) + rs + kU32;
    for (std::int64_t j = 0; j < D; ++j) {
      const std::size_t e = static_cast<std::size_t>(row * D + j);
      const double d = xr[j] - mu, aw = std::fabs(w[static_cast<std::size_t>(j)]);
      const double e_i = dmu * (1.0 + kU32) + kU32 * std::fabs(d);
      const double bj = b.empty() ? 0.0 : std::fabs(b[static_cast<std::size_t>(j)]);
      const double err = e_i * r * aw + std::fabs(d) * r * aw * (rel_r + 2.0 * kU32) + kU32 * (std::fabs(ref[e]) + bj) + kFltMin;
      out[e] = fin(err, ref[e]);
    }
  }
  return out;
}

std::vector<double> rope_bounds(const RopeCall& c, std::span<const double> ref, const Finisher& fin) {
  const std::vector<double> x = gather(c.x), pos = gather(c.positions);
  const std::int64_t B = c.x.shape[0], S = c.x.shape[1], H = c.x.shape[2], D = c.x.shape[3];
  const std::int64_t rd = c.rotary_dim, half = rd / 2;
  const bool pos_batched = c.positions.rank() == 2;
  const double t = kTranscendentalUlps * kEps32;
  // The angle pos * theta^(-2i/rd) in fp32: pow's ulps, its exponent argument
  // (|ln theta| + 1 scaled by u32 twice) and the product with pos.
  // With inv_freq given, the frequency is an input (exact): only the product.
  const std::vector<double> freq = c.inv_freq ? gather(*c.inv_freq) : std::vector<double>{};
  const double angle_rel =
      c.inv_freq ? kU32 : t + 2.0 * kU32 * (std::fabs(std::log(static_cast<double>(c.theta))) + 1.0) + kU32;
  std::vector<double> out(ref.size(), 0.0);
  for (std::int64_t bi = 0; bi < B; ++bi)
    for (std::int64_t s = 0; s < S; ++s) {
      const double p = pos[static_cast<std::size_t>(pos_batched ? bi * S + s : s)];
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t base = ((bi * S + s) * H + h) * D;
        for (std::int64_t ch = 0; ch < rd; ++ch) {
          std::int64_t i, c1, c2;
          if (c.style == RopeStyle::neox) {
            i = ch % half, c1 = i, c2 = i + half;
          } else {
            i = ch / 2, c1 = 2 * i, c2 = 2 * i + 1;
          }
          const double f = c.inv_freq ? freq[static_cast<std::size_t>(i)]
                                      : std::pow(static_cast<double>(c.theta), -2.0 * static_cast<double>(i) / static_cast<double>(rd));
          const double angle = std::fabs(p * f);
          const double mag = std::fabs(x[static_cast<std::size_t>(base + c1)]) + std::fabs(x[static_cast<std::size_t>(base + c2)]);
          const std::size_t e = static_cast<std::size_t>(base + ch);
          out[e] = fin((angle * angle_rel + t + 2.0 * kU32) * mag + kFltMin, ref[e]);
        }
        // Channels past rotary_dim are copied: exact (bound 0).
      }
    }
  return out;
}

std::vector<double> attention_bounds(const AttentionCall& c, std::span<const double> ref, const Finisher& fin) {
  const std::vector<double> q = gather(c.q), k = gather(c.k), v = gather(c.v);
  const std::int64_t B = c.q.shape[0], sq = c.q.shape[1], hq = c.q.shape[2], d = c.q.shape[3];
  const std::int64_t sk = c.k.shape[1], hkv = c.k.shape[2], dv = c.v.shape[3];
  const std::int64_t group = hkv == 0 ? 1 : hq / hkv;
  const double scale = c.scale, t = kTranscendentalUlps * kEps32;
  const double gdot = gamma(static_cast<double>(d + 1));
  std::vector<double> out(ref.size(), 0.0);
  std::vector<double> s(static_cast<std::size_t>(sk)), dots(static_cast<std::size_t>(sk));
  for (std::int64_t bi = 0; bi < B; ++bi)
    for (std::int64_t i = 0; i < sq; ++i)
      for (std::int64_t h = 0; h < hq; ++h) {
        const std::int64_t kh = h / group;
        const double* qr = q.data() + ((bi * sq + i) * hq + h) * d;
        double amax = 0, dmax = 0, m = -INFINITY;
        std::int64_t valid = 0;
        for (std::int64_t j = 0; j < sk; ++j) {
          if (!visible(c.causal, i, j, sq, sk)) continue;
          const double* kr = k.data() + ((bi * sk + j) * hkv + kh) * d;
          double dot = 0, absdot = 0;
          for (std::int64_t e = 0; e < d; ++e) dot += qr[e] * kr[e], absdot += std::fabs(qr[e] * kr[e]);
          s[static_cast<std::size_t>(j)] = scale * dot;
          amax = std::max(amax, std::fabs(scale * dot));
          dmax = std::max(dmax, gdot * std::fabs(scale) * absdot);  // score error, dot of length d
          m = std::max(m, scale * dot);
          ++valid;
        }
        double denom = 0;
        for (std::int64_t j = 0; j < sk; ++j)
          if (visible(c.causal, i, j, sq, sk)) denom += std::exp(s[static_cast<std::size_t>(j)] - m);
        // Probabilities: score errors (relative 2*max), then softmax of length valid.
        const double rel_p = 2.0 * dmax + 2.0 * (2.0 * kU32 * 2.0 * amax + t) + gamma(static_cast<double>(valid)) + kU32;
        // P @ V: a sum of `valid` terms; an online softmax rescales each partial
        // sum once per step, hence 2 * valid + 2 roundings.
        const double gpv = gamma(static_cast<double>(2 * valid + 2));
        for (std::int64_t ch = 0; ch < dv; ++ch) {
          double pv = 0;
          for (std::int64_t j = 0; j < sk; ++j) {
            if (!visible(c.causal, i, j, sq, sk)) continue;
            const double p = std::exp(s[static_cast<std::size_t>(j)] - m) / denom;
            pv += p * std::fabs(v[static_cast<std::size_t>(((bi * sk + j) * hkv + kh) * dv + ch)]);
          }
          const std::size_t e = static_cast<std::size_t>(((bi * sq + i) * hq + h) * dv + ch);
          out[e] = fin(valid == 0 ? 0.0 : (gpv + rel_p) * pv + kFltMin, ref[e]);
        }
      }
  return out;
}

// attention's optional lse (output 1) = m + log(l), l = sum exp(s_j - m).
// lse does not depend on m in exact arithmetic, so m's error cancels; what
// remains: each score's error (dot of length d, the scale), the subtraction
// s_j - m (u32 * 2 amax) and exp's ulps, per term (relative in l); the sum of
// `valid` terms and up to `valid` online rescales, each an exp of a rounded
// difference of two maxima (kT + 2 u32 * 2 amax relative); log's ulps and the
// final add.
std::vector<double> attention_lse_bounds(const AttentionCall& c, std::span<const double> ref, const Finisher& fin) {
  const std::vector<double> q = gather(c.q), k = gather(c.k);
  const std::int64_t B = c.q.shape[0], sq = c.q.shape[1], hq = c.q.shape[2], d = c.q.shape[3];
  const std::int64_t sk = c.k.shape[1], hkv = c.k.shape[2];
  const std::int64_t group = hkv == 0 ? 1 : hq / hkv;
  const double scale = c.scale, t = kTranscendentalUlps * kEps32;
  const double gdot = gamma(static_cast<double>(d + 1));
  std::vector<double> out(ref.size(), 0.0);
  for (std::int64_t bi = 0; bi < B; ++bi)
    for (std::int64_t i = 0; i < sq; ++i)
      for (std::int64_t h = 0; h < hq; ++h) {
        const std::int64_t kh = h / group;
        const double* qr = q.data() + ((bi * sq + i) * hq + h) * d;
        double amax = 0, dmax = 0;
        std::int64_t valid = 0;
        for (std::int64_t j = 0; j < sk; ++j) {
          if (c.causal && j > i + (sk - sq)) continue;
          const double* kr = k.data() + ((bi * sk + j) * hkv + kh) * d;
          double dot = 0, absdot = 0;
          for (std::int64_t e = 0; e < d; ++e) dot += qr[e] * kr[e], absdot += std::fabs(qr[e] * kr[e]);
          amax = std::max(amax, std::fabs(scale * dot));
          dmax = std::max(dmax, gdot * std::fabs(scale) * absdot);
          ++valid;
        }
        const std::size_t e = static_cast<std::size_t>((bi * sq + i) * hq + h);
        if (valid == 0) continue;  // -inf, exactly
        const double n = static_cast<double>(valid), per_term = 2.0 * kU32 * 2.0 * amax + t;
        const double rel_l = dmax + per_term + gamma(n) + n * (per_term + kU32);
        // |log l| = |lse - m| <= |lse| + amax: log's ulps on that, then the add.
        out[e] = fin(rel_l + t * (std::fabs(ref[e]) + amax) + kU32 * std::fabs(ref[e]) + n * kFltMin, ref[e]);
      }
  return out;
}

}  // namespace

std::vector<double> element_bounds(const OpCall& given, std::size_t output, std::span<const double> ref,
                                   DType out_dtype) {
  const Finisher fin{out_dtype};
  // The forward ops below have a single output (attention: y, then the
  // optional lse); the training ops dispatch on `output`.
  // Resolve defaults the way every backend sees them (rotary_dim 0 -> head_dim,
  // attention scale 0 -> 1/sqrt(d), negative axes).
  const OpCall call = ops::validate(given);
  return std::visit(
      [&](const auto& c) -> std::vector<double> {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, GemmCall>) return gemm_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, BinaryCall>) return binary_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, UnaryCall>) return unary_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, SwigluCall>) return swiglu_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, ReduceCall>) return reduce_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, SoftmaxCall>) return softmax_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, NormCall>) return norm_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, RopeCall>) return rope_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, AttentionCall>)
          return output == 1 ? attention_lse_bounds(c, ref, fin) : attention_bounds(c, ref, fin);
        else if constexpr (std::is_same_v<C, GemmFp8Call>) return gemm_fp8_bounds(c, ref, out_dtype);
        else if constexpr (std::is_same_v<C, GemmFp8GroupedCall>) return gemm_fp8_grouped_bounds(c, ref, out_dtype);
        // training ops (contract_training.cpp)
        else if constexpr (std::is_same_v<C, RopeBackwardCall>)
          return rope_bounds(RopeCall{c.dy, c.positions, c.dx, c.theta, c.style, c.rotary_dim, c.inv_freq}, ref, fin);
        else if constexpr (requires { training_bounds(c, output, ref, Finish(fin)); })
          return training_bounds(c, output, ref, Finish(fin));
        else return std::vector<double>(ref.size(), 0.0);  // cast, embedding, copy, fill_random: exact
      },
      call);
}

bool checks_zero_sign(const OpCall& call) {
  if (const auto* u = std::get_if<UnaryCall>(&call)) return u->kind == UnaryKind::neg || u->kind == UnaryKind::abs;
  return std::holds_alternative<CastCall>(call) || std::holds_alternative<CopyCall>(call) ||
         std::holds_alternative<EmbeddingCall>(call) || std::holds_alternative<FillRandomCall>(call);
}

}  // namespace hal::conformance::contract
