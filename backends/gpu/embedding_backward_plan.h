#pragma once
// The host plan of embedding_backward's GPU kernels (kernel_params/embedding.h
// EmbeddingBackwardParams): the bitonic sort's launches, the scratch layout,
// the accumulate geometry. Host-only and vendor-free, so the CPU tests
// (tests/unit/gpu_embedding_backward_plan_test.cpp) run the same plan on the
// host, with the kernels' own network helpers, and compare it bit for bit with
// cpu_ref.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/gpu/kernel_args.h"
#include "hal/op.h"
#include "kernel_params/embedding.h"

namespace hal::gpu {

// One launch of the sort. local: hal_embedding_backward_sort_local (every
// stage k <= chunk in shared memory); step: hal_embedding_backward_sort_step
// (stage k, distance j >= chunk, in global memory); merge:
// hal_embedding_backward_sort_merge (stage k, distances chunk / 2 .. 1 in
// shared memory).
struct BitonicLaunch {
  enum Kind { local, step, merge } kind;
  std::int64_t k, j;
};

inline std::int64_t next_pow2(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// The keys padded to a power of two, at least one shared-memory chunk.
inline std::int64_t embedding_sort_padded(std::int64_t count) {
  return std::max(next_pow2(count), kernel_params::kEmbeddingSortChunk);
}

inline std::vector<BitonicLaunch> bitonic_plan(std::int64_t padded) {
  const std::int64_t chunk = kernel_params::kEmbeddingSortChunk;
  std::vector<BitonicLaunch> out{{BitonicLaunch::local, chunk, 0}};
  for (std::int64_t k = 2 * chunk; k <= padded; k <<= 1) {
    for (std::int64_t j = k / 2; j >= chunk; j >>= 1) out.push_back({BitonicLaunch::step, k, j});
    out.push_back({BitonicLaunch::merge, k, 0});
  }
  return out;
}

// The scratch of one call, in bytes from its (allocation-aligned) start; every
// part 8-byte aligned.
struct EmbeddingBackwardScratch {
  std::size_t check = 0, keys = 0, tile_counts = 0, tile_offsets = 0, segment_begin = 0, segments = 0, bytes = 0;
};

inline std::int64_t embedding_segment_tiles(std::int64_t count) {
  return (count + kernel_params::kEmbeddingSegmentTile - 1) / kernel_params::kEmbeddingSegmentTile;
}

inline EmbeddingBackwardScratch embedding_backward_scratch(std::int64_t count) {
  const auto n = [](std::int64_t items) { return static_cast<std::size_t>(items) * 8; };
  EmbeddingBackwardScratch s;
  s.check = 0;
  s.keys = sizeof(kernel_params::EmbeddingBackwardCheck);
  s.tile_counts = s.keys + n(embedding_sort_padded(count));
  s.tile_offsets = s.tile_counts + n(embedding_segment_tiles(count));
  s.segment_begin = s.tile_offsets + n(embedding_segment_tiles(count));
  s.segments = s.segment_begin + n(count + 1);
  s.bytes = s.segments + n(1);
  return s;
}

// Threads per segment in the accumulate kernel: the row's columns rounded up
// to a power of two, 32 .. 256 (a block holds 256 / width segments).
inline int embedding_group_width(std::int64_t dim) {
  std::int64_t w = 32;
  while (w < dim && w < kernel_params::kEmbeddingBackwardThreads) w <<= 1;
  return static_cast<int>(w);
}

// The accumulate grid: x strides over the segments (at most min(count,
// vocab) of them; the kernel reads the real number from device memory), y
// over column chunks of group_width.
struct EmbeddingAccumulateGrid {
  std::int64_t x = 0, y = 0;
};
inline constexpr std::int64_t kEmbeddingMaxGridX = 65535;
inline EmbeddingAccumulateGrid embedding_accumulate_grid(std::int64_t count, std::int64_t vocab, std::int64_t dim) {
  const int w = embedding_group_width(dim);
  const std::int64_t groups = kernel_params::kEmbeddingBackwardThreads / w;
  const std::int64_t segments = std::min(count, vocab);
  return {std::min((segments + groups - 1) / groups, kEmbeddingMaxGridX), (dim + w - 1) / w};
}

// Every field that describes the call; the scratch pointers, sort_k / sort_j
// are the launcher's. dy's rows are addressed over ids' shape with dy's
// leading strides.
inline kernel_params::EmbeddingBackwardParams embedding_backward_params(const EmbeddingBackwardCall& call) {
  const Tensor& ids = call.ids;
  const Tensor& dy = call.dy;
  const Tensor& table = call.dtable;
  kernel_params::EmbeddingBackwardParams p{};
  p.ids = ids.first();
  p.dy = dy.first();
  p.dtable = table.first();
  p.count = ids.numel();
  p.padded = embedding_sort_padded(p.count);
  p.tiles = embedding_segment_tiles(p.count);
  p.vocab = table.shape[0];
  p.dim = table.shape[1];
  p.table_row_stride = table.strides[0];
  p.table_col_stride = table.strides[1];
  p.dy_col_stride = dy.strides[dy.rank() - 1];
  p.ids_are_i64 = ids.dtype == DType::i64 ? 1 : 0;
  p.dy_type = elem_type(dy.dtype);
  p.table_type = elem_type(table.dtype);
  p.group_width = embedding_group_width(p.dim);
  p.ids_shape = kernel_shape(ids.shape);
  p.ids_strides = kernel_strides(ids.strides);
  kernel_params::KernelStrides rows{};
  for (int d = 0; d < ids.rank(); ++d) rows.s[d] = dy.strides[d];
  p.dy_row_strides = rows;
  return p;
}

// Points p's scratch fields into one allocation laid out by embedding_backward_scratch.
inline void place_embedding_backward_scratch(kernel_params::EmbeddingBackwardParams& p, void* base) {
  const EmbeddingBackwardScratch s = embedding_backward_scratch(p.count);
  char* b = static_cast<char*>(base);
  p.check = reinterpret_cast<kernel_params::EmbeddingBackwardCheck*>(b + s.check);
  p.keys = reinterpret_cast<std::uint64_t*>(b + s.keys);
  p.tile_counts = reinterpret_cast<std::int64_t*>(b + s.tile_counts);
  p.tile_offsets = reinterpret_cast<std::int64_t*>(b + s.tile_offsets);
  p.segment_begin = reinterpret_cast<std::int64_t*>(b + s.segment_begin);
  p.segments = reinterpret_cast<std::int64_t*>(b + s.segments);
}

}  // namespace hal::gpu
