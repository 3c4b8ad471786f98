// Shared argument checks for ops/validate*.cpp.
#include "ops/validate_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "hal/device.h"
#include "hal/error.h"

namespace hal::ops::detail {

namespace {

// checked_mul/checked_add report the overflow against a generic "what"; the
// caller wants the argument named, so the overflow is caught and re-thrown.
template <typename F>
std::int64_t checked_or_throw(std::string_view op, std::string_view arg, std::string_view expected,
                              const std::string& given, F&& compute) {
  try {
    return compute();
  } catch (const Error&) {
    throw_invalid_argument(op, arg, expected, given);
  }
}

std::string describe(const Tensor& t) {
  return fmt::format("{}{} strides {} offset {}", dtype_name(t.dtype), t.shape.str(), t.strides.str(), t.offset);
}

// Byte range [lo, hi) that a non-empty, already checked tensor touches.
std::pair<std::uintptr_t, std::uintptr_t> byte_range(const Tensor& t) {
  const auto size = static_cast<std::int64_t>(dtype_size(t.dtype));
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  return {base + static_cast<std::uintptr_t>(t.min_index() * size),
          base + static_cast<std::uintptr_t>(t.end_index() * size)};
}

// An output must not write two logical elements to one address. Sorting the
// non-trivial dims by stride, each stride must exceed the span covered by all
// smaller ones; this accepts every contiguous, padded or permuted layout.
void check_output_layout(std::string_view op, std::string_view arg, const Tensor& t) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, size)
  for (int i = 0; i < t.rank(); ++i) {
    if (t.shape[i] <= 1) continue;
    if (t.strides[i] == 0)
      throw_invalid_argument(op, arg,
                             fmt::format("an output without zero strides on dimensions of size > 1 "
                                         "(dim {} would write {} elements to one address)",
                                         i, t.shape[i]),
                             describe(t));
    dims.emplace_back(t.strides[i], t.shape[i]);
  }
  std::sort(dims.begin(), dims.end());
  std::int64_t span = 0;  // largest index offset reached by the smaller-stride dims
  for (const auto& [stride, size] : dims) {
    if (stride <= span)
      throw_invalid_argument(op, arg, "an output whose strides do not make elements overlap", describe(t));
    span += stride * (size - 1);
  }
}

}  // namespace

void check_tensor(std::string_view op, std::string_view arg, const Tensor& t, Role role) {
  // An out-of-range DType value has no element size; every size below would
  // be 0 (and the alignment test a division by it).
  if (dtype_size(t.dtype) == 0)
    throw_invalid_argument(op, arg, "a tensor of a valid hal::DType",
                           fmt::format("DType value {}", static_cast<int>(t.dtype)));
  if (t.device == nullptr)
    throw_invalid_argument(op, arg, "a tensor on a device (device is null)", describe(t));
  if (t.strides.rank() != t.shape.rank())
    throw_invalid_argument(op, arg, fmt::format("{} strides (one per dimension of shape {})", t.rank(), t.shape.str()),
                           fmt::format("strides {}", t.strides.str()));
  for (int i = 0; i < t.rank(); ++i) {
    if (t.shape[i] < 0) throw_invalid_argument(op, arg, "non-negative dimensions", fmt::format("shape {}", t.shape.str()));
  }
  for (int i = 0; i < t.rank(); ++i) {
    if (t.strides[i] < 0)
      throw_invalid_argument(op, arg, "non-negative strides", fmt::format("strides {}", t.strides.str()));
  }
  if (t.offset < 0) throw_invalid_argument(op, arg, "a non-negative offset", fmt::format("offset {}", t.offset));

  const std::int64_t numel =
      checked_or_throw(op, arg, "a shape whose element count fits in int64", fmt::format("shape {}", t.shape.str()),
                       [&] { return checked_numel(t.shape, op); });
  if (numel == 0) return;

  const auto elem = static_cast<std::int64_t>(dtype_size(t.dtype));
  checked_or_throw(op, arg, "a tensor whose byte extent fits in int64", describe(t), [&] {
    std::int64_t end = t.offset;
    for (int i = 0; i < t.rank(); ++i) end = checked_add(end, checked_mul(t.shape[i] - 1, t.strides[i], op), op);
    return checked_mul(checked_add(end, 1, op), elem, op);
  });

  if (t.data == nullptr) throw_invalid_argument(op, arg, "non-null data for a non-empty tensor", t.str());
  if (reinterpret_cast<std::uintptr_t>(t.data) % static_cast<std::uintptr_t>(elem) != 0)
    throw_invalid_argument(op, arg, fmt::format("data aligned to {} bytes (the size of {})", elem, dtype_name(t.dtype)),
                           fmt::format("address {} ({})", t.data, t.str()));
  if (role == Role::output) check_output_layout(op, arg, t);
}

void check_same_device(std::string_view op, std::initializer_list<Named> tensors) {
  const Named* first = nullptr;
  for (const Named& n : tensors) {
    if (first == nullptr) {
      first = &n;
      continue;
    }
    if (n.tensor->device != first->tensor->device)
      throw_invalid_argument(op, n.name,
                             fmt::format("a tensor on the same device as '{}' ({})", first->name,
                                         first->tensor->device ? first->tensor->device->name() : "none"),
                             n.tensor->str());
  }
}

void check_no_overlap(std::string_view op, Named output, std::initializer_list<Named> inputs) {
  const Tensor& y = *output.tensor;
  if (y.numel() == 0) return;
  const auto [y_lo, y_hi] = byte_range(y);
  for (const Named& in : inputs) {
    const Tensor& x = *in.tensor;
    if (x.device != y.device || x.numel() == 0) continue;
    const auto [x_lo, x_hi] = byte_range(x);
    if (y_lo < x_hi && x_lo < y_hi)
      throw_invalid_argument(op, output.name,
                             fmt::format("memory that does not overlap input '{}' (bytes [{:#x}, {:#x}))", in.name,
                                         x_lo, x_hi),
                             fmt::format("{} at bytes [{:#x}, {:#x})", y.str(), y_lo, y_hi));
  }
}

void check_compute_dtype(std::string_view op, std::string_view arg, const Tensor& t) {
  switch (t.dtype) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
    case DType::f64: return;
    default: throw_invalid_argument(op, arg, "dtype f32, f16, bf16 or f64", t.str());
  }
}

void check_dtype_equals(std::string_view op, std::string_view arg, const Tensor& t, DType want, std::string_view why) {
  if (t.dtype != want)
    throw_invalid_argument(op, arg, fmt::format("dtype {} ({})", dtype_name(want), why), t.str());
}

void check_rank(std::string_view op, std::string_view arg, const Tensor& t, int min_rank, int max_rank) {
  if (t.rank() < min_rank || t.rank() > max_rank) {
    const std::string want = min_rank == max_rank ? fmt::format("rank {}", min_rank)
                                                  : fmt::format("rank {} to {}", min_rank, max_rank);
    throw_invalid_argument(op, arg, want, fmt::format("rank {} ({})", t.rank(), t.str()));
  }
}

void check_shape_equals(std::string_view op, std::string_view arg, const Tensor& t, const Shape& want,
                        std::string_view why) {
  if (!(t.shape == want)) throw_invalid_argument(op, arg, fmt::format("shape {} ({})", want.str(), why), t.shape.str());
}

void check_output_dtype(std::string_view op, const Tensor& y, std::string_view ref_name, const Tensor& ref) {
  check_dtype_equals(op, "y", y, ref.dtype, fmt::format("same as {}", ref_name));
}

void check_finite(std::string_view op, std::string_view arg, float value) {
  if (!std::isfinite(value)) throw_invalid_argument(op, arg, "a finite value", fmt::format("{}", value));
}

}  // namespace hal::ops::detail
