#pragma once
// The block-parallel driver shared by the elementwise kernels (binary, unary,
// swiglu, cast).
//
// The output's logical index range is cut into fixed blocks of kBlockElements;
// oneTBB runs blocks in any order on any thread, but each output element is
// computed by exactly one block from its own inputs, so the result is bitwise
// the same for every thread count and partition.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "cpu_ref/element_io.h"
#include "cpu_ref/prefetch.h"
#include "cpu_ref/strided_index.h"
#include "hal/tensor.h"

namespace hal::cpu_ref {

// Elements per call of a fused map (map_elements_fused): no scratch to keep
// in L1, so larger than kBlockElements, to make the per-call head, tail and
// fence noise; a multiple of 16 so that blocks of an aligned output stay
// 32-byte aligned for the streaming stores.
inline constexpr std::int64_t kFusedBlockElements = 8192;

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte: a contiguous
// fast path that writes as it reads then gives way to the block-reading one.
inline bool byte_ranges_overlap(const char* a, std::int64_t a_bytes, const char* b, std::int64_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

// Calls body(start, count) for consecutive blocks of `block` elements covering
// [0, numel).
template <class Body>
void parallel_blocks(std::int64_t numel, Body&& body, std::int64_t block = kBlockElements) {
  if (numel <= 0) return;
  const std::int64_t blocks = (numel + block - 1) / block;
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, blocks), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t b = r.begin(); b != r.end(); ++b) {
      const std::int64_t start = b * block;
      body(start, std::min(block, numel - start));
    }
  });
}

// y = compute(inputs) element for element. Every input must already have y's
// shape (use broadcast_view). compute(in, out, n) gets NIn arrays of n values of
// T (gathered and widened) and fills out[0, n); the driver rounds each result
// once into y, with streaming stores when y is far larger than the caches.
template <class T, int NIn, class Compute>
void map_elements(const std::array<const Tensor*, NIn>& inputs, const Tensor& y, Compute&& compute) {
  std::array<const Tensor*, NIn + 1> views{};
  for (int k = 0; k < NIn; ++k) views[k] = inputs[k];
  views[NIn] = &y;
  const StridedLayout<NIn + 1> layout(y.shape, views);
  const bool streaming = streams_output(y);
  std::array<bool, NIn> direct{};
  if constexpr (std::is_same_v<T, float>)
    for (int k = 0; k < NIn; ++k) direct[k] = layout.contiguous[k] && inputs[k]->dtype == DType::f32;
  const std::int64_t numel = y.numel();
  parallel_blocks(numel, [&](std::int64_t start, std::int64_t n) {
    if (std::is_same_v<T, float> && start + n < numel) {
      // The next block's contiguous inputs: in flight while this one computes.
      const std::int64_t next = std::min(kBlockElements, numel - start - n);
      for (int k = 0; k < NIn; ++k)
        if (layout.contiguous[k]) {
          const std::int64_t esize = static_cast<std::int64_t>(dtype_size(inputs[k]->dtype));
          prefetch_for_read(static_cast<const char*>(inputs[k]->data) + (layout.offsets[k] + start + n) * esize,
                            next * esize);
        }
    }
    T in_storage[NIn][kBlockElements];
    std::array<const T*, NIn> in{};
    for (int k = 0; k < NIn; ++k) {
      if (direct[k]) {
        // A contiguous input already in the compute type is read in place.
        in[k] = static_cast<const T*>(inputs[k]->data) + layout.offsets[k] + start;
        continue;
      }
      gather_block(layout, k, *inputs[k], start, n, in_storage[k]);
      in[k] = in_storage[k];
    }
    T out[kBlockElements];
    compute(in, out, n);
    scatter_block(layout, NIn, y, start, n, out, streaming);
  });
}

// A map's operands as plain arrays: the first element of each input and of y.
template <int NIn> struct ContiguousRuns {
  std::array<const char*, NIn> in;
  char* out;
};

// The operands' runs when every one is contiguous in y's shape and of y's
// dtype, so that a loop may run over plain arrays; nullopt otherwise. An
// input partly overlapping y (not the same run) would see such a loop write
// before it reads (the general path reads a block first): nullopt too.
template <int NIn>
std::optional<ContiguousRuns<NIn>> same_dtype_runs(const std::array<const Tensor*, NIn>& inputs, const Tensor& y) {
  for (int k = 0; k < NIn; ++k)
    if (inputs[k]->dtype != y.dtype) return std::nullopt;
  std::array<const Tensor*, NIn + 1> views{};
  for (int k = 0; k < NIn; ++k) views[k] = inputs[k];
  views[NIn] = &y;
  const StridedLayout<NIn + 1> layout(y.shape, views);
  for (int k = 0; k <= NIn; ++k)
    if (!layout.contiguous[k]) return std::nullopt;
  const auto esize = static_cast<std::int64_t>(dtype_size(y.dtype));
  const std::int64_t bytes = y.numel() * esize;
  ContiguousRuns<NIn> runs{};
  runs.out = static_cast<char*>(y.data) + layout.offsets[NIn] * esize;
  for (int k = 0; k < NIn; ++k) {
    runs.in[k] = static_cast<const char*>(inputs[k]->data) + layout.offsets[k] * esize;
    if (runs.in[k] != runs.out && byte_ranges_overlap(runs.in[k], bytes, runs.out, bytes)) return std::nullopt;
  }
  return runs;
}

// The fast path of map_elements<float> for the common case: every operand
// contiguous and of y's dtype (f32, bf16 or f16; same_dtype_runs), with a
// table that has fused maps. Runs the vector kernels' map1_fused / map2_fused
// (widen + op + narrow in registers, bit for bit the general path) over
// blocks of kFusedBlockElements and returns true; returns false, doing
// nothing, when the case does not apply, and the caller takes map_elements.
template <int NIn>
bool map_elements_fused(const std::array<const Tensor*, NIn>& inputs, const Tensor& y, FusedOp op) {
  static_assert(NIn == 1 || NIn == 2);
  const VectorKernels& vk = vector_kernels();
  if ((NIn == 1 ? vk.map1_fused == nullptr : vk.map2_fused == nullptr) || !vector_dtype(y.dtype)) return false;
  const auto runs = same_dtype_runs<NIn>(inputs, y);
  if (!runs) return false;
  const auto esize = static_cast<std::int64_t>(dtype_size(y.dtype));
  const bool streaming = streams_output(y);
  parallel_blocks(
      y.numel(),
      [&](std::int64_t start, std::int64_t n) {
        const std::int64_t skip = start * esize;
        if constexpr (NIn == 1) vk.map1_fused(op, runs->in[0] + skip, y.dtype, runs->out + skip, n, streaming);
        else vk.map2_fused(op, runs->in[0] + skip, runs->in[1] + skip, y.dtype, runs->out + skip, n, streaming);
      },
      kFusedBlockElements);
  return true;
}

// The accuracy contract: fp64 arithmetic when the output is f64 (the oracle),
// and also when an input is f64, so an f64 value is rounded once, not twice.
inline bool computes_in_f64(const Tensor& y) { return y.dtype == DType::f64; }
template <class... Rest>
bool computes_in_f64(const Tensor& y, const Tensor& first, const Rest&... rest) {
  return first.dtype == DType::f64 || computes_in_f64(y, rest...);
}

}  // namespace hal::cpu_ref
