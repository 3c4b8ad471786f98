#pragma once
// Device helpers shared by the row kernels: row addressing. One workgroup of
// kRowThreads (4 wave64s) per row; rows are grid-strided so any grid works.
#include <hip/hip_runtime.h>

#include "hip/element.h"
#include "hip/wave.h"
#include "rows_params.h"

namespace hal::hip::kernels {

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

}  // namespace hal::hip::kernels
