#include "hal/shape.h"

#include <fmt/format.h>

#include <algorithm>

#include "hal/error.h"

namespace hal {

Dims::Dims(std::initializer_list<std::int64_t> values) : Dims(std::span<const std::int64_t>(values.begin(), values.size())) {}

Dims::Dims(std::span<const std::int64_t> values) {
  if (values.size() > static_cast<std::size_t>(kMaxRank)) {
    throw_invalid_argument("Dims", "rank", fmt::format("at most {}", kMaxRank), std::to_string(values.size()));
  }
  for (std::int64_t v : values) v_[static_cast<std::size_t>(rank_++)] = v;
}

void Dims::push_back(std::int64_t value) {
  if (rank_ == kMaxRank) throw_invalid_argument("Dims", "rank", fmt::format("at most {}", kMaxRank), "one more");
  v_[static_cast<std::size_t>(rank_++)] = value;
}

void Dims::erase(int axis) {
  if (axis < 0 || axis >= rank_)
    throw_invalid_argument("Dims::erase", "axis", fmt::format("an axis in [0, {}]", rank_ - 1), std::to_string(axis));
  for (int i = axis; i + 1 < rank_; ++i) v_[static_cast<std::size_t>(i)] = v_[static_cast<std::size_t>(i + 1)];
  --rank_;
}

void Dims::insert(int axis, std::int64_t value) {
  if (rank_ == kMaxRank) throw_invalid_argument("Dims", "rank", fmt::format("at most {}", kMaxRank), "one more");
  if (axis < 0 || axis > rank_)
    throw_invalid_argument("Dims::insert", "axis", fmt::format("a position in [0, {}]", rank_), std::to_string(axis));
  for (int i = rank_; i > axis; --i) v_[static_cast<std::size_t>(i)] = v_[static_cast<std::size_t>(i - 1)];
  v_[static_cast<std::size_t>(axis)] = value;
  ++rank_;
}

bool operator==(const Dims& a, const Dims& b) noexcept {
  if (a.rank_ != b.rank_) return false;
  for (int i = 0; i < a.rank_; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

std::string Dims::str() const { return fmt::format("[{}]", fmt::join(span(), ", ")); }

std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw_invalid_argument(what, "size", "a size that fits in int64", fmt::format("{} * {} (overflow)", a, b));
  return r;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw_invalid_argument(what, "size", "a size that fits in int64", fmt::format("{} + {} (overflow)", a, b));
  return r;
}

std::int64_t checked_numel(const Shape& shape, std::string_view what) {
  std::int64_t n = 1;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape[i] < 0)
      throw_invalid_argument(what, "shape", "non-negative dimensions", shape.str());
  }
  // An empty tensor has no elements whatever its other dimensions are, so a
  // zero anywhere wins over an overflowing product of the rest.
  for (int i = 0; i < shape.rank(); ++i)
    if (shape[i] == 0) return 0;
  for (int i = 0; i < shape.rank(); ++i) n = checked_mul(n, shape[i], what);
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides s;
  for (int i = 0; i < shape.rank(); ++i) s.push_back(0);
  std::int64_t acc = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    s[i] = acc;
    acc = checked_mul(acc, std::max<std::int64_t>(shape[i], 1), "contiguous_strides");
  }
  return s;
}

bool is_contiguous(const Shape& shape, const Strides& strides) {
  // An empty tensor is trivially contiguous, whatever its strides (a zero
  // anywhere, not just before the first mismatching stride).
  for (int i = 0; i < shape.rank(); ++i)
    if (shape[i] == 0) return true;
  std::int64_t acc = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != acc) return false;
    acc *= shape[i];
  }
  return true;
}

int normalize_axis(int axis, int rank, std::string_view op, std::string_view arg) {
  int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw_invalid_argument(op, arg, fmt::format("an axis in [{}, {}]", -rank, rank - 1), std::to_string(axis));
  return a;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    const std::int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw_invalid_argument(op, "b", fmt::format("a shape broadcastable with a's {}", a.str()), b.str());
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& target) {
  Strides out;
  const int lead = target.rank() - shape.rank();
  for (int i = 0; i < target.rank(); ++i) {
    const int j = i - lead;
    out.push_back(j < 0 || shape[j] == 1 ? 0 : strides[j]);
  }
  return out;
}

}  // namespace hal
