#pragma once
// Device helpers shared by the row kernels: row addressing and the 16-byte
// vector path. One workgroup of kRowThreads (4 wave64s) per row; rows are
// grid-strided so any grid works.
//
// Vector path (RowsLayout::x_vec16): lane t reads 16-byte chunks t, t + 256,
// t + 512, ... of its row (4 x f32 or 8 x f16/bf16 each, one
// global_load_dwordx4), folds a chunk's elements in column order into fp32
// partials, then the columns past the last whole chunk one by one; the wave64
// butterfly and the wave-ordered LDS combine (hip/wave.h) finish. This is a
// different summation order from the element-per-lane path (lane t there
// holds columns t, t + 256, ...), so sums can differ in the last bits: both
// are within docs/accuracy.md's contract, and both are deterministic: the
// order depends only on the row length and the launch shape, never on timing.
#include <hip/hip_runtime.h>

#include "hip/element.h"
#include "hip/wave.h"
#include "kernel_params/rows.h"
#include "rows_geometry.h"

namespace hal::hip::kernels {

using kernel_params::NormParams;
using kernel_params::ReduceParams;
using kernel_params::RopeParams;
using kernel_params::RowsLayout;
using kernel_params::SoftmaxParams;

inline constexpr int kRowWaves = kRowThreads / kWaveSize;
static_assert(kRowThreads % kWaveSize == 0, "rows: a row's workgroup is a whole number of wave64s");

struct RowOffsets {
  int64_t x, y;
  int64_t last_coord;  // the row's last outer coordinate (the query index for causal softmax)
};

__device__ __forceinline__ RowOffsets row_offsets(const RowsLayout& l, int64_t r) {
  RowOffsets o{0, 0, 0};
  for (int d = l.outer_rank - 1; d >= 0; --d) {
    const int64_t e = l.outer_shape[d];
    const int64_t q = r / e, c = r - q * e;
    if (d == l.outer_rank - 1) o.last_coord = c;
    o.x += c * l.x_outer_stride[d];
    o.y += c * l.y_outer_stride[d];
    r = q;
  }
  return o;
}

// Bytes-per-element switch of the vector path: the launcher sets x_vec16 only
// for f32 (4 bytes) and f16/bf16 (2 bytes).
template <int kSize>
inline constexpr int kChunkElems = 16 / kSize;

// Address of a row's element `offset` (in elements) for a dtype of kSize bytes.
template <int kSize>
__device__ __forceinline__ const Chunk16* chunk_row(const void* base, int64_t offset) {
  return reinterpret_cast<const Chunk16*>(static_cast<const char*>(base) + offset * kSize);
}
template <int kSize>
__device__ __forceinline__ Chunk16* chunk_row(void* base, int64_t offset) {
  return reinterpret_cast<Chunk16*>(static_cast<char*>(base) + offset * kSize);
}

// Element e of a chunk of dtype t (kSize bytes), as fp32.
template <int kSize>
__device__ __forceinline__ float chunk_f32(const Chunk16& c, int32_t t, int e) {
  return decode_sized<kSize>(t, chunk_get<kSize>(c, e));
}

}  // namespace hal::hip::kernels
