// reduce (sum, mean, max, min, argmax) of one axis, any stride. One workgroup
// per output element; each thread folds a strided subset in a fixed order,
// then a fixed LDS tree combines the 256 partials: deterministic.
// Vector path (x_vec16: the reduced axis contiguous, every line 16-byte
// aligned, f32/f16/bf16): thread t folds 16-byte chunks t, t + 256, ...
// element by element in column order, then the columns past the last whole
// chunk (rows_common.h). Sums take another order than the element-per-lane
// path (last-bit differences within docs/accuracy.md, still deterministic);
// max, min and argmax (ties and NaN by index) give identical results.
// Special values as cpu_ref/reduce.cpp: NaN makes sum/mean/max/min NaN;
// argmax returns the first NaN's index if any, else the first maximum; an
// empty axis gives sum 0, mean NaN, max -inf, min +inf.
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

struct Partial {
  float v;
  int64_t i;  // argmax: index of v; -1: none yet
};

// Whether candidate (a) should replace current (b) for the reduce kind.
__device__ __forceinline__ Partial combine(int kind, Partial a, Partial b) {
  const bool an = a.v != a.v, bn = b.v != b.v;
  switch (kind) {
    case 0:
    case 1: return {a.v + b.v, 0};
    case 2: return an ? a : (bn ? b : Partial{fmaxf(a.v, b.v), 0});
    case 3: return an ? a : (bn ? b : Partial{fminf(a.v, b.v), 0});
    default: {
      // argmax: a NaN beats any number; ties (and NaN vs NaN) go to the lower index.
      if (a.i < 0) return b;
      if (b.i < 0) return a;
      if (an != bn) return an ? a : b;
      if (an || a.v == b.v) return a.i < b.i ? a : b;
      return a.v > b.v ? a : b;
    }
  }
}

__device__ __forceinline__ Partial identity(int kind) {
  switch (kind) {
    case 2: return {-INFINITY, 0};
    case 3: return {INFINITY, 0};
    case 4: return {-INFINITY, -1};
  }
  return {0.0f, 0};
}

// This thread's partial over a contiguous, 16-byte-aligned line of kSize-byte elements.
template <int kSize>
__device__ __forceinline__ Partial fold_vec16(const ReduceParams& p, int64_t x_offset) {
  constexpr int kPer = kChunkElems<kSize>;
  const int64_t cols = p.layout.cols, chunks = cols / kPer;
  const Chunk16* xc = chunk_row<kSize>(p.x, x_offset);
  Partial acc = identity(p.kind);
  for (int64_t c = threadIdx.x; c < chunks; c += kRowThreads) {
    const Chunk16 chunk = xc[c];
#pragma unroll
    for (int e = 0; e < kPer; ++e) acc = combine(p.kind, acc, Partial{chunk_f32<kSize>(chunk, p.x_type, e), c * kPer + e});
  }
  for (int64_t j = chunks * kPer + threadIdx.x; j < cols; j += kRowThreads)
    acc = combine(p.kind, acc, Partial{load_f32(p.x, p.x_type, x_offset + j), j});
  return acc;
}

}  // namespace

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_reduce(ReduceParams p) {
  __shared__ float vals[kRowThreads];
  __shared__ int64_t idxs[kRowThreads];
  const RowsLayout& l = p.layout;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const RowOffsets o = row_offsets(l, r);
    Partial acc = identity(p.kind);
    if (l.x_vec16) {
      acc = elem_size(p.x_type) == 4 ? fold_vec16<4>(p, o.x) : fold_vec16<2>(p, o.x);
    } else {
      for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads)
        acc = combine(p.kind, acc, Partial{load_f32(p.x, p.x_type, o.x + j * l.x_col_stride), j});
    }
    __syncthreads();
    vals[threadIdx.x] = acc.v;
    idxs[threadIdx.x] = acc.i;
    __syncthreads();
    for (int s = kRowThreads / 2; s > 0; s /= 2) {
      if (static_cast<int>(threadIdx.x) < s) {
        const Partial c = combine(p.kind, Partial{vals[threadIdx.x], idxs[threadIdx.x]},
                                  Partial{vals[threadIdx.x + s], idxs[threadIdx.x + s]});
        vals[threadIdx.x] = c.v;
        idxs[threadIdx.x] = c.i;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (p.kind == 4) {
        static_cast<int64_t*>(p.y)[o.y] = idxs[0] < 0 ? 0 : idxs[0];
      } else {
        const float v = p.kind == 1 ? vals[0] / static_cast<float>(l.cols) : vals[0];
        store_f32(p.y, p.y_type, o.y, v);
      }
    }
  }
}
