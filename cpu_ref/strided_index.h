#pragma once
// Walking N tensor views in step over one logical shape, for elementwise
// kernels.
//
// An elementwise op visits every element of its output shape in row-major
// order; each operand is read through its own strides (zero for a broadcast
// dimension, permuted for a transposed view). StridedLayout holds the shared
// shape and the per-operand strides and offsets, with adjacent dimensions
// merged where every operand allows it (so a contiguous tensor becomes one
// dimension and the walk costs one add per element). StridedCursor starts at
// any logical index, which lets a parallel block begin anywhere.
//
// Offsets and strides count elements (as in hal::Tensor), not bytes.
#include <array>
#include <cstdint>

#include "hal/shape.h"
#include "hal/tensor.h"

namespace hal::cpu_ref {

template <int N>
struct StridedLayout {
  int rank = 0;                                      // after merging; 0 for a scalar
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::array<std::int64_t, kMaxRank>, N> strides{};
  std::array<std::int64_t, N> offsets{};            // element offset of logical index 0
  std::array<bool, N> contiguous{};                 // operand k is laid out row-major, stride 1

  // `views[k]` must already have `shape`'s rank (see broadcast_view below).
  StridedLayout(const Shape& logical_shape, const std::array<const Tensor*, N>& views) {
    for (int k = 0; k < N; ++k) offsets[k] = views[k]->offset;
    // Drop size-1 dimensions (their stride never matters), then merge dimension
    // d into d+1 whenever every operand steps over d exactly as a run of d+1.
    for (int d = 0; d < logical_shape.rank(); ++d) {
      const std::int64_t extent = logical_shape[d];
      if (extent == 1) continue;
      bool mergeable = rank > 0;
      for (int k = 0; k < N && mergeable; ++k)
        mergeable = strides[k][rank - 1] == views[k]->strides[d] * extent;
      if (mergeable) {
        shape[rank - 1] *= extent;
        for (int k = 0; k < N; ++k) strides[k][rank - 1] = views[k]->strides[d];
      } else {
        shape[rank] = extent;
        for (int k = 0; k < N; ++k) strides[k][rank] = views[k]->strides[d];
        ++rank;
      }
    }
    for (int k = 0; k < N; ++k) contiguous[k] = rank == 0 || (rank == 1 && strides[k][0] == 1);
  }
};

template <int N>
class StridedCursor {
 public:
  // Positions the cursor at logical (row-major) index `start`.
  StridedCursor(const StridedLayout<N>& layout, std::int64_t start) : layout_(layout), offsets_(layout.offsets) {
    for (int d = layout.rank - 1; d >= 0; --d) {
      const std::int64_t extent = layout.shape[d];
      coord_[d] = start % extent;
      start /= extent;
      for (int k = 0; k < N; ++k) offsets_[k] += coord_[d] * layout.strides[k][d];
    }
  }

  // Element offset of operand k at the current position.
  std::int64_t offset(int k) const noexcept { return offsets_[k]; }

  // Moves to the next logical index (row-major, last dimension fastest).
  void advance() noexcept {
    for (int d = layout_.rank - 1; d >= 0; --d) {
      for (int k = 0; k < N; ++k) offsets_[k] += layout_.strides[k][d];
      if (++coord_[d] < layout_.shape[d]) return;
      for (int k = 0; k < N; ++k) offsets_[k] -= layout_.shape[d] * layout_.strides[k][d];
      coord_[d] = 0;
    }
  }

 private:
  const StridedLayout<N>& layout_;
  std::array<std::int64_t, N> offsets_;
  std::array<std::int64_t, kMaxRank> coord_{};
};

// `t` viewed with shape `target` (NumPy broadcasting: leading dimensions added,
// size-1 dimensions read with stride 0). Precondition: broadcastable.
inline Tensor broadcast_view(const Tensor& t, const Shape& target) {
  Tensor v = t;
  v.strides = broadcast_strides(t.shape, t.strides, target);
  v.shape = target;
  return v;
}

}  // namespace hal::cpu_ref
