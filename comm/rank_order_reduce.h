#pragma once
// The host reduction of the CPU engine: `parts` (one buffer per rank, rank
// order) reduced element by element into `out`:
//   acc = part_0[i]; acc = acc (+|max|min) part_r[i] for r = 1 .. P-1
// in fp32 for f32/f16/bf16, f64 for f64, i64 for i32/i64 (stored
// saturated); avg divides the sum by P before the one rounding to the output
// type. max/min propagate NaN. Elements are split among threads, but each
// element's order is fixed, so the bits do not depend on the thread count.
// `out` may alias parts[k] only when every element is read before written
// (the element-wise loop guarantees it).
#include <cstdint>
#include <vector>

#include "comm/collective.h"
#include "hal/dtype.h"

namespace hal::comm {

void rank_order_reduce(const std::vector<const void*>& parts, DType dtype, std::int64_t count, ReduceOp op, void* out);

}  // namespace hal::comm
