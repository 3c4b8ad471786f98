// Issue 24: does the sm_90a attention forward need P split into 16-bit parts?
// Emulates the kernels' numerics on the CPU (attention_sm90a.cu, as
// attention_flash.cu): fp32 scores (products of 16-bit inputs, fp32 sums),
// log2-domain online softmax over 128-key blocks (exp2f, fp32 row max / sum,
// O rescaled once per block), O += P V in fp32 with P either
//   split: hi + mid (+ lo) 16-bit parts, each times V (ours: 2 parts f16, 3 bf16)
//   once:  P rounded once to the 16-bit type (FlashAttention-3)
// and y = round16(O / l). Each result is scored against the fp64 oracle with
// the conformance bound of attention (conformance/contract.cpp
// attention_bounds, Finisher: c = 2, the output type's epsilon and underflow),
// as fraction of the bound (max over outputs; > 1 fails) and as ulps of the
// output type at |ref|. Rows are sampled (every query of short sequences,
// 48 spread over long ones, the last included) to keep the fp64 work small.
// Build: g++ -O2 -std=c++20 attention_p_split.cpp -o attention_p_split
// (self-contained: the 16-bit roundings are written out here; x86-64 GCC's
// _Float16 gives f16's).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

enum class T16 { f16, bf16 };

float round16(float x, T16 t) {
  if (t == T16::f16) return static_cast<float>(static_cast<_Float16>(x));
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return x;  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);                 // round to nearest even
  u &= 0xffff0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

double eps16(T16 t) { return t == T16::f16 ? 0x1p-10 : 0x1p-7; }
double eta16(T16 t) { return t == T16::f16 ? 0x1p-25 : 0x1p-134; }
int parts16(T16 t) { return t == T16::f16 ? 2 : 3; }

// ulp of the 16-bit type at |x| (normal range; f16 subnormals: 2^-24).
double ulp16(double x, T16 t) {
  const int mant = t == T16::f16 ? 10 : 7;
  const int emin = t == T16::f16 ? -14 : -126;
  int e = x == 0 ? emin : std::ilogb(x);
  if (e < emin) e = emin;
  return std::ldexp(1.0, e - mant);
}

constexpr double kU32 = 0x1p-24, kEps32 = 0x1p-23, kFltMin = 0x1p-126, kSafety = 2.0;
double gamma(double k) { return k * kU32 < 1 ? k * kU32 / (1 - k * kU32) : INFINITY; }

struct Shape {
  const char* name;
  int sq, sk, d;
  bool causal;
};

struct Score {
  double frac = 0, ulps = 0;
  void add(double err, double bound, double ulp) {
    frac = std::max(frac, err / bound);
    ulps = std::max(ulps, err / ulp);
  }
};

// One query row of one head: the kernel's y for both P forms, the oracle and
// the bound, folded into the scores.
void row(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int i, const Shape& s,
         T16 t, Score& split, Score& once) {
  const int d = s.d, sk = s.sk;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float scale_log2 = scale * 1.4426950408889634f;
  const float* qr = q.data() + static_cast<std::size_t>(i) * d;
  auto visible = [&](int j) { return !s.causal || j <= i + (sk - s.sq); };
  // Kernel emulation, both forms side by side (same scores, same l).
  std::vector<float> o_split(d, 0.0f), o_once(d, 0.0f), p(128);
  float row_m = -INFINITY, row_l = 0.0f;
  for (int n0 = 0; n0 < sk; n0 += 128) {
    const int n1 = std::min(sk, n0 + 128);
    float tile_max = -INFINITY;
    for (int j = n0; j < n1; ++j) {
      float dot = 0.0f;
      for (int e = 0; e < d; ++e) dot = std::fma(qr[e], k[static_cast<std::size_t>(j) * d + e], dot);
      const float x = visible(j) ? dot * scale_log2 : -INFINITY;
      p[j - n0] = x;
      tile_max = std::max(tile_max, x);
    }
    const float m_new = std::max(row_m, tile_max);
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;
    const float corr = std::exp2(row_m - m_use);
    row_m = m_new;
    row_l *= corr;
    for (int c = 0; c < d; ++c) o_split[c] *= corr, o_once[c] *= corr;
    for (int j = n0; j < n1; ++j) {
      const float pj = std::exp2(p[j - n0] - m_use);
      row_l += pj;
      float part[3], rest = pj;
      for (int z = 0; z < parts16(t); ++z) part[z] = round16(rest, t), rest -= part[z];
      const float p1 = round16(pj, t);
      const float* vr = v.data() + static_cast<std::size_t>(j) * d;
      for (int c = 0; c < d; ++c) {
        for (int z = 0; z < parts16(t); ++z) o_split[c] = std::fma(part[z], vr[c], o_split[c]);
        o_once[c] = std::fma(p1, vr[c], o_once[c]);
      }
    }
  }
  const float inv = row_l == 0.0f ? 0.0f : 1.0f / row_l;
  // Oracle and bound (fp64), as conformance/contract.cpp attention_bounds.
  std::vector<double> sc(sk);
  double amax = 0, dmax = 0, m = -INFINITY;
  int valid = 0;
  for (int j = 0; j < sk; ++j) {
    if (!visible(j)) continue;
    double dot = 0, absdot = 0;
    for (int e = 0; e < d; ++e) {
      const double a = static_cast<double>(qr[e]) * k[static_cast<std::size_t>(j) * d + e];
      dot += a, absdot += std::fabs(a);
    }
    sc[j] = static_cast<double>(scale) * dot;
    amax = std::max(amax, std::fabs(sc[j]));
    dmax = std::max(dmax, gamma(d + 1) * scale * absdot);
    m = std::max(m, sc[j]);
    ++valid;
  }
  double denom = 0;
  for (int j = 0; j < sk; ++j)
    if (visible(j)) denom += std::exp(sc[j] - m);
  const double t32 = 4 * kEps32;
  const double rel_p = 2 * dmax + 2 * (2 * kU32 * 2 * amax + t32) + gamma(valid) + kU32;
  const double gpv = gamma(2.0 * valid + 2);
  for (int c = 0; c < d; ++c) {
    double ref = 0, pv = 0;
    for (int j = 0; j < sk; ++j) {
      if (!visible(j)) continue;
      const double pj = std::exp(sc[j] - m) / denom;
      ref += pj * v[static_cast<std::size_t>(j) * d + c];
      pv += pj * std::fabs(v[static_cast<std::size_t>(j) * d + c]);
    }
    const double u = eps16(t);
    const double bound = kSafety * (((gpv + rel_p) * pv + kFltMin) * (1 + u) + u * std::fabs(ref) + eta16(t));
    const double ulp = ulp16(std::fabs(ref), t);
    const double y_split = round16(o_split[c] * inv, t), y_once = round16(o_once[c] * inv, t);
    split.add(std::fabs(y_split - ref), bound, ulp);
    once.add(std::fabs(y_once - ref), bound, ulp);
  }
}

}  // namespace

int main() {
  const Shape shapes[] = {
      {"conf noncausal 17x33 d64", 17, 33, 64, false}, {"conf causal 33x33 d64", 33, 33, 64, true},
      {"conf decode 1x257 d128", 1, 257, 128, true},   {"1024 d64", 1024, 1024, 64, false},
      {"1024 d64 causal", 1024, 1024, 64, true},       {"1024 d128", 1024, 1024, 128, false},
      {"1024 d128 causal", 1024, 1024, 128, true},     {"4096 d64", 4096, 4096, 64, false},
      {"4096 d64 causal", 4096, 4096, 64, true},       {"4096 d128", 4096, 4096, 128, false},
      {"4096 d128 causal", 4096, 4096, 128, true},
  };
  // Inputs uniform in [-1, 1] (the conformance default) and a sharper softmax
  // (q times 8: scores up to ~|8 d / sqrt(d)|, a few keys carry the row).
  std::printf("%-26s %-5s %-6s %12s %10s %12s %10s\n", "shape", "type", "q", "split/bound", "split ulp",
              "once/bound", "once ulp");
  for (const T16 t : {T16::bf16, T16::f16})
    for (const float qs : {1.0f, 8.0f})
      for (const Shape& s : shapes) {
        std::mt19937 gen(1234 + s.sk + s.d);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> q(static_cast<std::size_t>(s.sq) * s.d), k(static_cast<std::size_t>(s.sk) * s.d),
            v(static_cast<std::size_t>(s.sk) * s.d);
        for (auto& x : q) x = round16(qs * u(gen), t);
        for (auto& x : k) x = round16(u(gen), t);
        for (auto& x : v) x = round16(u(gen), t);
        Score split, once;
        const int rows = std::min(s.sq, 48);
        for (int r = 0; r < rows; ++r) {
          const int i = rows == s.sq ? r : static_cast<int>((static_cast<long>(r) * (s.sq - 1)) / (rows - 1));
          row(q, k, v, i, s, t, split, once);
        }
        std::printf("%-26s %-5s %-6g %12.4f %10.2f %12.4f %10.2f\n", s.name, t == T16::f16 ? "f16" : "bf16", qs,
                    split.frac, split.ulps, once.frac, once.ulps);
        std::fflush(stdout);
      }
  return 0;
}
