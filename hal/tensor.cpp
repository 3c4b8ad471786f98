#include "hal/tensor.h"

#include <fmt/format.h>

#include "hal/device.h"
#include "hal/error.h"

namespace hal {

Tensor Tensor::contiguous(void* data, Device* device, DType dtype, const Shape& shape) {
  Tensor t;
  t.data = data;
  t.device = device;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = contiguous_strides(shape);
  return t;
}

void* Tensor::first() const noexcept {
  // null + offset is undefined behaviour; an empty view may have both.
  if (data == nullptr) return nullptr;
  return static_cast<char*>(data) + offset * static_cast<std::int64_t>(dtype_size(dtype));
}

// Strides are non-negative, so the first element is the lowest (also when empty).
std::int64_t Tensor::min_index() const { return offset; }

std::int64_t Tensor::end_index() const {
  if (numel() == 0) return offset;
  std::int64_t last = offset;
  for (int i = 0; i < rank(); ++i) last = checked_add(last, checked_mul(shape[i] - 1, strides[i], "tensor"), "tensor");
  return last + 1;
}

Tensor Tensor::transposed(int axis0, int axis1) const {
  Tensor t = *this;
  const int a = normalize_axis(axis0, rank(), "transposed", "axis0");
  const int b = normalize_axis(axis1, rank(), "transposed", "axis1");
  std::swap(t.shape[a], t.shape[b]);
  std::swap(t.strides[a], t.strides[b]);
  return t;
}

Tensor Tensor::permuted(const Dims& perm) const {
  if (perm.rank() != rank())
    throw_invalid_argument("permuted", "perm", fmt::format("{} axes", rank()), perm.str());
  bool seen[kMaxRank] = {};
  Tensor t = *this;
  for (int i = 0; i < rank(); ++i) {
    const std::int64_t p = perm[i];
    if (p < 0 || p >= rank() || seen[p])
      throw_invalid_argument("permuted", "perm", fmt::format("a permutation of 0..{}", rank() - 1), perm.str());
    seen[p] = true;
    t.shape[i] = shape[static_cast<int>(p)];
    t.strides[i] = strides[static_cast<int>(p)];
  }
  return t;
}

std::string Tensor::str() const {
  return fmt::format("{}{} strides {} on {}", dtype_name(dtype), shape.str(), strides.str(),
                     device ? device->name() : std::string("no device"));
}

}  // namespace hal
