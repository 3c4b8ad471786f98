// Ulp error of f32 gelu, per range of x: hal's current vector gelu (NR erfcc form, on the
// vector exp) against a rational erf, gelu = x (1/2 + erf(x/sqrt2)/2), erf ~ xc P(s)/Q(s),
// s = xc^2, xc = x clamped to +-XMAX, evaluated in fp32 with FMA (Horner). Every 5th float in [-6, 6].
// Usage: gelu_rational_ulps XMAX NP NQ P0..P(NP-1) Q0..QNQ (coefficients from fit_erf_rational.py)
// Build: g++ -O2 -ffp-contract=off -std=c++20 -I<repo> gelu_rational_ulps.cpp <build>/libhal.a -ltbb -lfmt
#include "cpu_ref/vector_kernels.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
using namespace hal::cpu_ref;
static double ulp_of(double r) { int e; std::frexp(std::fabs(r), &e); return std::ldexp(1.0, std::max(e - 24, -149)); }
int main(int argc, char** argv) {
  float xmax = atof(argv[1]); int np = atoi(argv[2]), nq = atoi(argv[3]);
  std::vector<float> P(np), Q(nq + 1);
  int a = 4;
  for (int i = 0; i < np; ++i) P[i] = atof(argv[a++]);
  for (int i = 0; i <= nq; ++i) Q[i] = atof(argv[a++]);
  const float edges[] = {-6, -4, -3, -2, -1, 0, 1, 2, 3, 4, 6, 1e30};
  double wold[12] = {0}, wnew[12] = {0}, aold[12] = {0}, anew[12] = {0};
  std::vector<float> xs; xs.reserve(1 << 20);
  auto flush = [&] {
    std::vector<float> yo(xs.size());
    vector_kernels().gelu(xs.data(), yo.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const float x = xs[i];
      const float xc = std::fmin(std::fmax(x, -xmax), xmax), s = xc * xc;
      float p = P[np - 1]; for (int k = np - 2; k >= 0; --k) p = std::fma(p, s, P[k]);
      float q = Q[nq]; for (int k = nq - 1; k >= 0; --k) q = std::fma(q, s, Q[k]);
      const float e = (xc * p) / q;
      const float phi = std::fma(0.5f, e, 0.5f);
      const float y = x * phi;
      const double ref = 0.5 * double(x) * std::erfc(-double(x) / std::sqrt(2.0));
      const double u = ulp_of(ref);
      int b = 0; while (x >= edges[b + 1]) ++b;
      wold[b] = std::max(wold[b], std::fabs(yo[i] - ref) / u); wnew[b] = std::max(wnew[b], std::fabs(y - ref) / u);
      aold[b] = std::max(aold[b], std::fabs(yo[i] - ref)); anew[b] = std::max(anew[b], std::fabs(y - ref));
    }
    xs.clear();
  };
  for (float x = -6.0f; x <= 6.0f; ) { xs.push_back(x); if (xs.size() == (1u << 20)) flush(); for (int k = 0; k < 5; ++k) x = std::nextafter(x, 10.0f); }
  flush();
  for (int b = 0; b < 10; ++b) printf("[%4.0f,%4.0f) old %.2f ulp %.2g abs | new %.2f ulp %.2g abs\n", edges[b], edges[b + 1], wold[b], aold[b], wnew[b], anew[b]);
}
