#pragma once
// hal::Tensor: a non-owning view of memory on one device.
//
// The view does not keep its memory alive: the owner (a hal::Buffer, or the
// caller's own allocation) must outlive every use, including queued work on a
// stream. Element (i0, i1, ...) lives at
//   data + (offset + sum_k i_k * strides[k]) * dtype_size(dtype)   bytes.
// Strides may be zero (broadcast) but not negative.
#include <cstdint>
#include <string>

#include "hal/dtype.h"
#include "hal/shape.h"

namespace hal {

class Device;

struct Tensor {
  void* data = nullptr;      // base address in `device`'s memory space
  Device* device = nullptr;  // where `data` lives
  DType dtype = DType::f32;
  Shape shape;
  Strides strides;           // in elements
  std::int64_t offset = 0;   // in elements, added to `data`

  // A contiguous view of `shape` at `data`.
  static Tensor contiguous(void* data, Device* device, DType dtype, const Shape& shape);

  int rank() const noexcept { return shape.rank(); }
  std::int64_t numel() const { return checked_numel(shape); }
  bool is_contiguous() const { return hal::is_contiguous(shape, strides); }
  // Address of the first element (data + offset).
  void* first() const noexcept;
  // Smallest and one-past-largest element index (relative to `data`) that the
  // view touches; {offset, offset} when empty. Used for bounds checks.
  std::int64_t min_index() const;
  std::int64_t end_index() const;

  // View transformations (no data movement).
  Tensor transposed(int axis0, int axis1) const;
  Tensor permuted(const Dims& perm) const;  // throws unless perm is a permutation
  std::string str() const;  // "bf16[4, 7] strides [7, 1] on cpu"
};

}  // namespace hal
