#pragma once
// Shapes and strides: small fixed-capacity vectors (rank <= 8) of int64.
// Strides count elements, not bytes; a zero stride broadcasts a dimension.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace hal {

inline constexpr int kMaxRank = 8;

class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<std::int64_t> values);  // throws if more than kMaxRank
  explicit Dims(std::span<const std::int64_t> values);

  int rank() const noexcept { return rank_; }
  std::int64_t operator[](int i) const noexcept { return v_[static_cast<std::size_t>(i)]; }
  std::int64_t& operator[](int i) noexcept { return v_[static_cast<std::size_t>(i)]; }
  const std::int64_t* begin() const noexcept { return v_.data(); }
  const std::int64_t* end() const noexcept { return v_.data() + rank_; }
  std::span<const std::int64_t> span() const noexcept { return {v_.data(), static_cast<std::size_t>(rank_)}; }
  std::int64_t back() const noexcept { return v_[static_cast<std::size_t>(rank_ - 1)]; }

  void push_back(std::int64_t value);  // throws past kMaxRank
  void erase(int axis);                // removes one entry
  void insert(int axis, std::int64_t value);

  friend bool operator==(const Dims& a, const Dims& b) noexcept;
  std::string str() const;  // "[2, 3, 4]"

 private:
  std::array<std::int64_t, kMaxRank> v_{};
  int rank_ = 0;
};

using Shape = Dims;
using Strides = Dims;

// Product of the dimensions; throws invalid_argument naming `what` when a
// dimension is negative or the product overflows int64.
std::int64_t checked_numel(const Shape& shape, std::string_view what = "shape");
// a*b and a+b for sizes, throwing on overflow ("<what>: size overflow").
std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what);
std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what);
// ceil(a / b) for a >= 0, b > 0: how many blocks of b cover a.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Row-major strides of a contiguous tensor of `shape`.
Strides contiguous_strides(const Shape& shape);
bool is_contiguous(const Shape& shape, const Strides& strides);

// Normalises a possibly negative axis against `rank`; throws invalid_argument
// naming op and argument when out of range.
int normalize_axis(int axis, int rank, std::string_view op, std::string_view arg = "axis");

// NumPy broadcasting of two shapes (aligned at the trailing dimension).
// Throws invalid_argument naming op and the arguments when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);
// Strides to read a tensor of `shape`/`strides` as if it had shape `target`
// (leading dims added, size-1 dims get stride 0). Precondition: broadcastable.
Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& target);

}  // namespace hal
