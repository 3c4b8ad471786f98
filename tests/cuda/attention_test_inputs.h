#pragma once
// Helpers of the attention kernel tests (attention_flash_test.cpp,
// attention_sm90a_test.cpp): the case geometry and its name, the inputs
// (plain q/k/v, or strided views of one packed buffer), max|v| and the 16-bit
// ulp that the error bounds use.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kern_test_util.h"
#include "ops/ops.h"

namespace hal::cuda_test {

struct AttentionCase {
  std::int64_t b, sq, sk, hq, hkv, d;
  bool causal;
  bool packed = false;  // q, k, v as views of one [b, s, hq + 2 hkv, d] buffer (sq == sk)
};

inline std::string describe(DType t, const AttentionCase& c) {
  return std::string(dtype_name(t)) + " b" + std::to_string(c.b) + " sq" + std::to_string(c.sq) + " sk" +
         std::to_string(c.sk) + " hq" + std::to_string(c.hq) + " hkv" + std::to_string(c.hkv) + " d" +
         std::to_string(c.d) + (c.causal ? " causal" : "") + (c.packed ? " packed" : "");
}

// Spacing of dtype t's values around |x| (f16 / bf16).
inline double ulp_at(DType t, double x) {
  const int mant = t == DType::f16 ? 10 : 7;
  const int min_exp = t == DType::f16 ? -14 : -126;
  int e = 0;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  return std::ldexp(1.0, std::max(e - 1, min_exp) - mant);
}

struct AttentionInputs {
  std::vector<HostTensor> tensors;  // q, k, v; or the one packed buffer
  OpFn op;
};

// Inputs in [-1, 1]: q, k, v from seeds seed, seed + 1, seed + 2; a packed
// buffer from seed + 3 (each test file keeps its own seeds).
inline AttentionInputs make_inputs(DType t, const AttentionCase& c, std::uint64_t seed) {
  const ops::AttentionOptions opts{.scale = 0.0f, .causal = c.causal};
  if (!c.packed) {
    return {{random_tensor(t, Shape{c.b, c.sq, c.hq, c.d}, -1, 1, seed),
             random_tensor(t, Shape{c.b, c.sk, c.hkv, c.d}, -1, 1, seed + 1),
             random_tensor(t, Shape{c.b, c.sk, c.hkv, c.d}, -1, 1, seed + 2)},
            [opts](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
              ops::attention(s, in[0], in[1], in[2], y, opts);
            }};
  }
  const std::int64_t heads = c.hq + 2 * c.hkv;
  return {{random_tensor(t, Shape{c.b, c.sq, heads, c.d}, -1, 1, seed + 3)},
          [opts, c](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
            auto view = [&](std::int64_t h0, std::int64_t nh) {
              Tensor v = in[0];
              v.shape = Shape{c.b, c.sq, nh, c.d};
              v.offset = in[0].offset + h0 * c.d;  // strides stay those of the packed buffer
              return v;
            };
            ops::attention(s, view(0, c.hq), view(c.hq, c.hkv), view(c.hq + c.hkv, c.hkv), y, opts);
          }};
}

inline double max_abs(DType t, const HostTensor& h) {
  double m = 0;
  const std::int64_t n = checked_numel(h.shape);
  for (std::int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(load_element(h.bytes.data(), t, i)));
  return m;
}

}  // namespace hal::cuda_test
