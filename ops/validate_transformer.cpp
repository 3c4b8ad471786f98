// Validation of the transformer-specific ops: rope, embedding, attention.
#include <fmt/format.h>

#include <cmath>

#include "hal/error.h"
#include "ops/validate_util.h"

namespace hal::ops::detail {

int check_rope_options(std::string_view op, std::string_view x_name, const Tensor& x, const Tensor& positions,
                       int rotary_dim, float theta, RopeStyle style, const std::optional<Tensor>& inv_freq) {
  const std::int64_t batch = x.shape[0], seq = x.shape[1], head_dim = x.shape[3];
  if (!(positions.shape == Shape{batch, seq}) && !(positions.shape == Shape{seq}))
    throw_invalid_argument(op, "positions", fmt::format("shape [{}, {}] or [{}] ([batch, seq] or [seq])", batch, seq, seq),
                           positions.shape.str());
  if (head_dim % 2 != 0)
    throw_invalid_argument(op, x_name, "an even head_dim (last dim)", x.shape.str());
  int resolved = rotary_dim == 0 ? static_cast<int>(head_dim) : rotary_dim;
  if (resolved < 0 || resolved > head_dim || resolved % 2 != 0 || (resolved == 0 && head_dim > 0))
    throw_invalid_argument(op, "rotary_dim", fmt::format("an even value in (0, {}] (head_dim), or 0 for all", head_dim),
                           std::to_string(rotary_dim));
  if (!(theta > 0) || !std::isfinite(theta))
    throw_invalid_argument(op, "theta", "a finite value > 0", fmt::format("{}", theta));
  if (style != RopeStyle::neox && style != RopeStyle::gptj)
    throw_invalid_argument(op, "style", "neox or gptj", std::to_string(static_cast<int>(style)));
  if (inv_freq) {
    const Tensor& f = *inv_freq;
    if (f.dtype != DType::f32 && !(f.dtype == DType::f64 && x.dtype == DType::f64))
      throw_invalid_argument(op, "inv_freq", fmt::format("dtype f32 (f64 when {} is f64)", x_name), f.str());
    check_shape_equals(op, "inv_freq", f, Shape{resolved / 2}, "[rotary_dim / 2]");
  }
  return resolved;
}

RopeCall validate_rope(const RopeCall& c) {
  const std::string_view op = "rope";
  check_tensor(op, "x", c.x, Role::input);
  check_tensor(op, "positions", c.positions, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"x", &c.x}, {"positions", &c.positions}, {"y", &c.y}});
  check_compute_dtype(op, "x", c.x);
  check_output_dtype(op, c.y, "x", c.x);
  check_dtype_equals(op, "positions", c.positions, DType::i32, "token positions");
  check_rank(op, "x", c.x, 4, 4);
  check_shape_equals(op, "y", c.y, c.x.shape, "same as x");
  RopeCall out = c;
  out.rotary_dim = check_rope_options(op, "x", c.x, c.positions, c.rotary_dim, c.theta, c.style, c.inv_freq);
  if (c.inv_freq) {
    const Tensor& f = *c.inv_freq;
    check_tensor(op, "inv_freq", f, Role::input);
    check_same_device(op, {{"x", &c.x}, {"inv_freq", &f}});
    check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}, {"positions", &c.positions}, {"inv_freq", &f}});
  } else {
    check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}, {"positions", &c.positions}});
  }
  return out;
}

EmbeddingCall validate_embedding(const EmbeddingCall& c) {
  const std::string_view op = "embedding";
  check_tensor(op, "table", c.table, Role::input);
  check_tensor(op, "ids", c.ids, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"table", &c.table}, {"ids", &c.ids}, {"y", &c.y}});
  check_rank(op, "table", c.table, 2, 2);
  if (c.ids.dtype != DType::i32 && c.ids.dtype != DType::i64)
    throw_invalid_argument(op, "ids", "dtype i32 or i64", c.ids.str());
  check_rank(op, "ids", c.ids, 0, kMaxRank - 1);
  check_dtype_equals(op, "y", c.y, c.table.dtype, "same as table");
  Shape want = c.ids.shape;
  want.push_back(c.table.shape[1]);
  check_shape_equals(op, "y", c.y, want, "ids.shape + [dim]");
  check_no_overlap(op, {"y", &c.y}, {{"table", &c.table}, {"ids", &c.ids}});
  return c;
}

float check_attention_inputs(std::string_view op, const Tensor& q, const Tensor& k, const Tensor& v, float scale) {
  check_compute_dtype(op, "q", q);
  check_dtype_equals(op, "k", k, q.dtype, "same as q");
  check_dtype_equals(op, "v", v, q.dtype, "same as q");
  check_rank(op, "q", q, 4, 4);
  check_rank(op, "k", k, 4, 4);
  check_rank(op, "v", v, 4, 4);
  const std::int64_t b = q.shape[0], hq = q.shape[2], d = q.shape[3];
  const std::int64_t sk = k.shape[1], hkv = k.shape[2];
  if (k.shape[0] != b || k.shape[3] != d)
    throw_invalid_argument(op, "k", fmt::format("shape [{}, sk, hkv, {}] (batch and head_dim of q)", b, d),
                           k.shape.str());
  if (hkv == 0 || hq % hkv != 0)
    throw_invalid_argument(op, "k", fmt::format("a kv head count that divides q's {} heads", hq), k.shape.str());
  if (v.shape[0] != b || v.shape[1] != sk || v.shape[2] != hkv)
    throw_invalid_argument(op, "v", fmt::format("shape [{}, {}, {}, dv] (batch, sk and hkv of k)", b, sk, hkv),
                           v.shape.str());
  check_finite(op, "scale", scale);
  if (scale == 0.0f) return d > 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))) : 1.0f;
  return scale;
}

void check_attention_lse(std::string_view op, const Tensor& lse, const Tensor& q) {
  check_dtype_equals(op, "lse", lse, q.dtype == DType::f64 ? DType::f64 : DType::f32,
                     q.dtype == DType::f64 ? "f64 (q is f64)" : "f32 (the row log-sum-exp)");
  check_rank(op, "lse", lse, 3, 3);
  check_shape_equals(op, "lse", lse, Shape{q.shape[0], q.shape[1], q.shape[2]}, "[batch, sq, hq] (q's shape without head_dim)");
}

AttentionCall validate_attention(const AttentionCall& c) {
  const std::string_view op = "attention";
  check_tensor(op, "q", c.q, Role::input);
  check_tensor(op, "k", c.k, Role::input);
  check_tensor(op, "v", c.v, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  if (c.lse) check_tensor(op, "lse", *c.lse, Role::output);
  check_same_device(op, {{"q", &c.q}, {"k", &c.k}, {"v", &c.v}, {"y", &c.y}});
  if (c.lse) check_same_device(op, {{"q", &c.q}, {"lse", &*c.lse}});
  AttentionCall out = c;
  out.scale = check_attention_inputs(op, c.q, c.k, c.v, c.scale);
  check_output_dtype(op, c.y, "q", c.q);
  check_rank(op, "y", c.y, 4, 4);
  check_shape_equals(op, "y", c.y, Shape{c.q.shape[0], c.q.shape[1], c.q.shape[2], c.v.shape[3]}, "[batch, sq, hq, dv]");
  check_no_overlap(op, {"y", &c.y}, {{"q", &c.q}, {"k", &c.k}, {"v", &c.v}});
  if (c.lse) {
    check_attention_lse(op, *c.lse, c.q);
    check_no_overlap(op, {"lse", &*c.lse}, {{"q", &c.q}, {"k", &c.k}, {"v", &c.v}, {"y", &c.y}});
  }
  return out;
}

}  // namespace hal::ops::detail
