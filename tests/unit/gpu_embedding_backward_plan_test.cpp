// embedding_backward's GPU plan on the CPU (backends/gpu/embedding_backward_plan.h,
// kernel_params/embedding.h): the kernels have never run on a GPU, so these
// tests run the same algorithm on the host -- the launcher's bitonic plan with
// the kernels' network helpers, the tiled segment count / scan / write, the
// accumulate -- reading the very parameters the launcher packs, and compare
// the result bit for bit with cpu_ref through hal::ops on the cpu device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "backends/gpu/embedding_backward_plan.h"
#include "backends/gpu/training_launcher.h"
#include "hal/dtype.h"
#include "hal/stream.h"
#include "ops/training.h"
#include "unit/test_helpers.h"

namespace hal::gpu_test {

namespace kp = kernel_params;
using namespace hal::gpu;
using hal::test::cpu;
using hal::test::view_of;

static_assert(std::is_trivially_copyable_v<kp::EmbeddingBackwardParams> &&
                  std::is_standard_layout_v<kp::EmbeddingBackwardParams>,
              "kernel parameter structs must be plain bytes");
static_assert(sizeof(kp::EmbeddingBackwardParams) <= 4096, "kernel parameters fit the launch limit");

std::int64_t host_load_id(const kp::EmbeddingBackwardParams& p, std::int64_t pos) {
  const std::int64_t off = kp::strided_offset(p.ids_shape, p.ids_strides, pos);
  return p.ids_are_i64 ? static_cast<const std::int64_t*>(p.ids)[off] : static_cast<const std::int32_t*>(p.ids)[off];
}

// The kernels, one host function each, on the parameters the launcher passes.
namespace host_kernel {

void check(const kp::EmbeddingBackwardParams& p) {
  p.check->bad_pos = -1;
  p.check->bad_value = 0;
  for (std::int64_t i = 0; i < p.count; ++i) {
    const std::int64_t id = host_load_id(p, i);
    if (id < 0 || id >= p.vocab) {
      p.check->bad_pos = i;
      p.check->bad_value = id;
      return;
    }
  }
}

void keys(const kp::EmbeddingBackwardParams& p) {
  for (std::int64_t i = 0; i < p.padded; ++i)
    p.keys[i] = i < p.count ? kp::embedding_key(host_load_id(p, i), i) : kp::kEmbeddingPadKey;
}

void shared_stages(const kp::EmbeddingBackwardParams& p, std::int64_t base, std::int64_t k, std::int64_t j_first) {
  for (std::int64_t j = j_first; j > 0; j >>= 1)
    for (std::int64_t q = 0; q < kp::kEmbeddingSortChunk / 2; ++q) {
      const std::int64_t low = kp::bitonic_low(q, j);
      kp::bitonic_exchange(p.keys[base + low], p.keys[base + low + j], kp::bitonic_ascending(base + low, k));
    }
}
void sort_local(const kp::EmbeddingBackwardParams& p) {
  for (std::int64_t base = 0; base < p.padded; base += kp::kEmbeddingSortChunk)
    for (std::int64_t k = 2; k <= kp::kEmbeddingSortChunk; k <<= 1) shared_stages(p, base, k, k / 2);
}
void sort_step(const kp::EmbeddingBackwardParams& p) {
  for (std::int64_t q = 0; q < p.padded / 2; ++q) {
    const std::int64_t low = kp::bitonic_low(q, p.sort_j);
    kp::bitonic_exchange(p.keys[low], p.keys[low + p.sort_j], kp::bitonic_ascending(low, p.sort_k));
  }
}
void sort_merge(const kp::EmbeddingBackwardParams& p) {
  for (std::int64_t base = 0; base < p.padded; base += kp::kEmbeddingSortChunk)
    shared_stages(p, base, p.sort_k, kp::kEmbeddingSortChunk / 2);
}

// The segment kernels a tile at a time, the threads' items in thread order.
std::int64_t thread_starts(const kp::EmbeddingBackwardParams& p, std::int64_t first) {
  std::int64_t n = 0;
  for (std::int64_t e = 0; e < kp::kEmbeddingSegmentItems; ++e)
    if (first + e < p.count && kp::embedding_segment_starts(p.keys, first + e)) ++n;
  return n;
}
void segments_count(const kp::EmbeddingBackwardParams& p) {
  for (std::int64_t t = 0; t < p.tiles; ++t) {
    std::int64_t n = 0;
    for (std::int64_t th = 0; th < kp::kEmbeddingBackwardThreads; ++th)
      n += thread_starts(p, t * kp::kEmbeddingSegmentTile + th * kp::kEmbeddingSegmentItems);
    p.tile_counts[t] = n;
  }
}
void segments_scan(const kp::EmbeddingBackwardParams& p) {
  std::int64_t carry = 0;
  for (std::int64_t t = 0; t < p.tiles; ++t) {
    p.tile_offsets[t] = carry;
    carry += p.tile_counts[t];
  }
  *p.segments = carry;
  p.segment_begin[carry] = p.count;
}
void segments_write(const kp::EmbeddingBackwardParams& p) {
  for (std::int64_t t = 0; t < p.tiles; ++t) {
    std::int64_t at = p.tile_offsets[t];
    for (std::int64_t i = t * kp::kEmbeddingSegmentTile; i < std::min(p.count, (t + 1) * kp::kEmbeddingSegmentTile); ++i)
      if (kp::embedding_segment_starts(p.keys, i)) p.segment_begin[at++] = i;
  }
}

void accumulate(const kp::EmbeddingBackwardParams& p) {
  const auto dt = static_cast<DType>(p.dy_type), tt = static_cast<DType>(p.table_type);
  for (std::int64_t k = 0; k < *p.segments; ++k) {
    const std::int64_t begin = p.segment_begin[k], end = p.segment_begin[k + 1];
    const std::int64_t id = kp::embedding_key_id(p.keys[begin]);
    for (std::int64_t j = 0; j < p.dim; ++j) {
      const std::int64_t at = id * p.table_row_stride + j * p.table_col_stride;
      float acc = load_element_f32(p.dtable, tt, at);
      for (std::int64_t e = begin; e < end; ++e) {
        const std::int64_t pos = kp::embedding_key_pos(p.keys[e]);
        acc += load_element_f32(p.dy, dt, kp::strided_offset(p.ids_shape, p.dy_row_strides, pos) + j * p.dy_col_stride);
      }
      store_element_f32(p.dtable, tt, at, acc);
    }
  }
}

}  // namespace host_kernel

void host_sort(kp::EmbeddingBackwardParams& p) {
  for (const BitonicLaunch& b : bitonic_plan(p.padded)) {
    p.sort_k = b.k;
    p.sort_j = b.j;
    switch (b.kind) {
      case BitonicLaunch::local: host_kernel::sort_local(p); break;
      case BitonicLaunch::step: host_kernel::sort_step(p); break;
      case BitonicLaunch::merge: host_kernel::sort_merge(p); break;
    }
  }
}

// A backend whose "device" is host memory and whose launches run the host
// kernels above, so gpu::run_embedding_backward itself (its launch order,
// scratch placement, the check's read-back and error) runs on the CPU.
namespace fake {

struct Device {
  std::int64_t live = 0;  // allocations not yet freed
  void* allocate(std::size_t bytes) {
    ++live;
    return ::operator new(bytes);
  }
  void deallocate(void* p) {
    --live;
    ::operator delete(p);
  }
};
struct Stream {
  Device dev;
  std::vector<std::string> launched;
  int syncs = 0;
  Device& device() { return dev; }
  void synchronize() { ++syncs; }
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind) { std::memcpy(dst, src, bytes); }
};
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
};
struct Backend {
  using Stream = fake::Stream;
  using LaunchShape = fake::LaunchShape;
  static constexpr const char* name = "fake";
  static LaunchShape grid(std::int64_t work, Stream&) {
    LaunchShape s;
    s.block[0] = 256;
    s.grid[0] = static_cast<unsigned>(std::min<std::int64_t>((work + 255) / 256, 1024));
    return s;
  }
};

void launch(Stream& s, const char* kernel, const LaunchShape& shape, const kp::EmbeddingBackwardParams& p) {
  EXPECT_EQ(shape.block[0], static_cast<unsigned>(kp::kEmbeddingBackwardThreads)) << kernel;
  EXPECT_GE(shape.grid[0], 1u) << kernel;
  const std::string k = kernel;
  s.launched.push_back(k);
  if (k == "hal_embedding_backward_check") {
    EXPECT_EQ(shape.grid[0], 1u);
    host_kernel::check(p);
  } else if (k == "hal_embedding_backward_keys") host_kernel::keys(p);
  else if (k == "hal_embedding_backward_sort_local") host_kernel::sort_local(p);
  else if (k == "hal_embedding_backward_sort_step") host_kernel::sort_step(p);
  else if (k == "hal_embedding_backward_sort_merge") host_kernel::sort_merge(p);
  else if (k == "hal_embedding_backward_segments_count") host_kernel::segments_count(p);
  else if (k == "hal_embedding_backward_segments_scan") {
    EXPECT_EQ(shape.grid[0], 1u);
    host_kernel::segments_scan(p);
  } else if (k == "hal_embedding_backward_segments_write") host_kernel::segments_write(p);
  else if (k == "hal_embedding_backward_accumulate") {
    // The grid covers every column; its x axis grid-strides over the segments.
    EXPECT_GE(static_cast<std::int64_t>(shape.grid[1]) * p.group_width, p.dim);
    host_kernel::accumulate(p);
  } else ADD_FAILURE() << "unknown kernel " << k;
}

}  // namespace fake

// The whole GPU launcher on the fake backend, into call.dtable.
fake::Stream host_embedding_backward(const EmbeddingBackwardCall& call) {
  fake::Stream s;
  run_embedding_backward<fake::Backend>(s, call);
  EXPECT_EQ(s.dev.live, 0) << "scratch not freed";
  return s;
}

TEST(GpuEmbeddingBackwardPlan, TheBitonicPlanSortsAnyCountLikeStdSort) {
  std::mt19937_64 rng(7);
  for (std::int64_t count : {1, 2, 5, 2047, 2048, 2049, 4096, 4097, 9000, 33000}) {
    for (std::int64_t vocab : {1, 3, 1000, 1 << 30}) {
      kp::EmbeddingBackwardParams p{};
      p.count = count;
      p.padded = embedding_sort_padded(count);
      ASSERT_EQ(p.padded & (p.padded - 1), 0);
      ASSERT_GE(p.padded, std::max<std::int64_t>(count, kp::kEmbeddingSortChunk));
      std::vector<std::uint64_t> keys(static_cast<std::size_t>(p.padded));
      for (std::int64_t i = 0; i < p.padded; ++i)
        keys[i] = i < count ? kp::embedding_key(static_cast<std::int64_t>(rng() % vocab), i) : kp::kEmbeddingPadKey;
      std::vector<std::uint64_t> want = keys;
      std::sort(want.begin(), want.end());
      p.keys = keys.data();
      host_sort(p);
      ASSERT_EQ(keys, want) << "count " << count << ", vocab " << vocab;
    }
  }
}

TEST(GpuEmbeddingBackwardPlan, PlanLaunchesEveryStageOnce) {
  // padded = 2^n: the local launch covers stages 2 .. chunk, then each larger
  // stage k has its global distances k / 2 .. chunk and one merge.
  EXPECT_EQ(bitonic_plan(kp::kEmbeddingSortChunk).size(), 1u);
  const std::int64_t padded = kp::kEmbeddingSortChunk * 8;  // stages 2C, 4C, 8C
  const std::vector<BitonicLaunch> plan = bitonic_plan(padded);
  std::size_t steps = 0, merges = 0;
  for (const BitonicLaunch& b : plan) {
    if (b.kind == BitonicLaunch::step) {
      ++steps;
      EXPECT_GE(b.j, kp::kEmbeddingSortChunk);
      EXPECT_LT(b.j, b.k);
    }
    merges += b.kind == BitonicLaunch::merge;
  }
  EXPECT_EQ(steps, 1u + 2u + 3u);
  EXPECT_EQ(merges, 3u);
  EXPECT_EQ(plan.back().kind, BitonicLaunch::merge);
  EXPECT_EQ(plan.back().k, padded);
}

TEST(GpuEmbeddingBackwardPlan, ScratchPartsAreAlignedAndDisjoint) {
  for (std::int64_t count : {1, 2048, 2049, 100000}) {
    const EmbeddingBackwardScratch s = embedding_backward_scratch(count);
    const std::int64_t tiles = embedding_segment_tiles(count);
    EXPECT_EQ(tiles, (count + kp::kEmbeddingSegmentTile - 1) / kp::kEmbeddingSegmentTile);
    const std::size_t parts[] = {s.check, s.keys, s.tile_counts, s.tile_offsets, s.segment_begin, s.segments, s.bytes};
    for (std::size_t x : parts) EXPECT_EQ(x % 8, 0u);
    EXPECT_EQ(s.keys - s.check, sizeof(kp::EmbeddingBackwardCheck));
    EXPECT_EQ(s.tile_counts - s.keys, static_cast<std::size_t>(embedding_sort_padded(count)) * 8);
    EXPECT_EQ(s.tile_offsets - s.tile_counts, static_cast<std::size_t>(tiles) * 8);
    EXPECT_EQ(s.segment_begin - s.tile_offsets, static_cast<std::size_t>(tiles) * 8);
    EXPECT_EQ(s.segments - s.segment_begin, static_cast<std::size_t>(count + 1) * 8);
    EXPECT_EQ(s.bytes - s.segments, 8u);
  }
}

TEST(GpuEmbeddingBackwardPlan, AccumulateGeometry) {
  EXPECT_EQ(embedding_group_width(1), 32);
  EXPECT_EQ(embedding_group_width(32), 32);
  EXPECT_EQ(embedding_group_width(33), 64);
  EXPECT_EQ(embedding_group_width(200), 256);
  EXPECT_EQ(embedding_group_width(4096), 256);
  // 8 segments of 32 columns a block; x at most min(count, vocab) segments' worth.
  EmbeddingAccumulateGrid g = embedding_accumulate_grid(100, 17, 20);
  EXPECT_EQ(g.x, 3);
  EXPECT_EQ(g.y, 1);
  g = embedding_accumulate_grid(1 << 20, 128256, 64);  // 4 segments a block
  EXPECT_EQ(g.x, 128256 / 4);
  EXPECT_EQ(g.y, 1);
  g = embedding_accumulate_grid(1 << 20, 128256, 4096);  // grid-strided past the cap
  EXPECT_EQ(g.x, kEmbeddingMaxGridX);
  EXPECT_EQ(g.y, 16);
  g = embedding_accumulate_grid(1 << 20, 1 << 20, 4096);
  EXPECT_EQ(g.x, kEmbeddingMaxGridX);
}

TEST(GpuEmbeddingBackwardPlan, ParamsDescribeStridedViews) {
  std::vector<std::int32_t> ids(12);
  std::vector<float> dy(3 * 4 * 5 * 2), table(7 * 8);
  EmbeddingBackwardCall c;
  c.ids = Tensor::contiguous(ids.data(), nullptr, DType::i32, Shape{3, 4});
  c.dy = Tensor::contiguous(dy.data(), nullptr, DType::f32, Shape{3, 4, 5});
  c.dy.strides = Strides{40, 10, 2};
  c.dtable = Tensor::contiguous(table.data(), nullptr, DType::bf16, Shape{7, 5});
  c.dtable.strides = Strides{8, 1};
  const kp::EmbeddingBackwardParams p = embedding_backward_params(c);
  EXPECT_EQ(p.count, 12);
  EXPECT_EQ(p.padded, kp::kEmbeddingSortChunk);
  EXPECT_EQ(p.tiles, 1);
  EXPECT_EQ(p.vocab, 7);
  EXPECT_EQ(p.dim, 5);
  EXPECT_EQ(p.table_row_stride, 8);
  EXPECT_EQ(p.table_col_stride, 1);
  EXPECT_EQ(p.dy_col_stride, 2);
  EXPECT_EQ(p.dy_row_strides.s[0], 40);
  EXPECT_EQ(p.dy_row_strides.s[1], 10);
  EXPECT_EQ(p.ids_shape.rank, 2);
  EXPECT_EQ(p.ids_are_i64, 0);
  EXPECT_EQ(p.dy_type, static_cast<int>(DType::f32));
  EXPECT_EQ(p.table_type, static_cast<int>(DType::bf16));
  EXPECT_EQ(p.group_width, 32);
}

struct Case {
  const char* name;
  DType id_type, dy_type, table_type;
  Shape ids;
  std::int64_t vocab, dim;
  bool strided;  // dy every other element, dtable rows padded
};

// Host bits of a vector of floats in dtype t.
std::vector<std::uint8_t> encode(const std::vector<float>& v, DType t) {
  std::vector<std::uint8_t> out(v.size() * dtype_size(t));
  for (std::size_t i = 0; i < v.size(); ++i) store_element_f32(out.data(), t, static_cast<std::int64_t>(i), v[i]);
  return out;
}

TEST(GpuEmbeddingBackwardPlan, HostModelMatchesCpuRefBitForBit) {
  const Case cases[] = {
      {"f32 repeated i32 3x41", DType::i32, DType::f32, DType::f32, {3, 41}, 50, 7, false},
      {"f16 i64 17", DType::i64, DType::f16, DType::f16, {17}, 50, 33, false},
      {"bf16 one id 64", DType::i32, DType::bf16, DType::bf16, {64}, 50, 5, false},
      {"bf16 into f32 strided", DType::i64, DType::bf16, DType::f32, {2, 33}, 50, 9, true},
      {"f16 into f32 9000", DType::i32, DType::f16, DType::f32, {9000}, 40, 3, false},
      {"f32 strided 5000 of 3000", DType::i64, DType::f32, DType::f32, {50, 100}, 3000, 4, true},
      {"f32 few rows 2x2049", DType::i32, DType::f32, DType::f32, {2, 2049}, 3, 2, false},
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> uni(-2.0f, 2.0f);
  for (const Case& c : cases) {
    std::int64_t count = 1;
    for (std::int64_t e : c.ids) count *= e;
    const std::int64_t vocab_for_ids = std::string(c.name).find("one id") != std::string::npos ? 1 : c.vocab;
    std::vector<std::int64_t> id_values(static_cast<std::size_t>(count));
    for (auto& v : id_values) v = vocab_for_ids == 1 ? 7 : static_cast<std::int64_t>(rng() % vocab_for_ids);
    std::vector<std::int32_t> ids32(id_values.begin(), id_values.end());
    std::vector<std::int64_t> ids64 = id_values;

    const std::int64_t dy_step = c.strided ? 2 : 1, row_pad = c.strided ? 3 : 0;
    std::vector<float> dyf(static_cast<std::size_t>(count * c.dim * dy_step));
    for (auto& v : dyf) v = uni(rng);
    std::vector<float> tablef(static_cast<std::size_t>(c.vocab * (c.dim + row_pad)));
    for (auto& v : tablef) v = uni(rng);
    std::vector<std::uint8_t> dy_bits = encode(dyf, c.dy_type), table0 = encode(tablef, c.table_type);

    auto make_call = [&](std::vector<std::uint8_t>& table_bits) {
      EmbeddingBackwardCall call;
      call.ids = c.id_type == DType::i64 ? view_of(ids64, DType::i64, c.ids) : view_of(ids32, DType::i32, c.ids);
      Shape dy_shape = c.ids;
      dy_shape.push_back(c.dim);
      call.dy = view_of(dy_bits, c.dy_type, dy_shape);
      if (c.strided) {
        Strides st = dy_shape;
        std::int64_t s = dy_step;
        for (int d = dy_shape.rank() - 1; d >= 0; --d) {
          st[d] = s;
          s *= dy_shape[d];
        }
        call.dy.strides = st;
      }
      call.dtable = view_of(table_bits, c.table_type, Shape{c.vocab, c.dim});
      call.dtable.strides = Strides{c.dim + row_pad, 1};
      return call;
    };
    std::vector<std::uint8_t> want = table0, got = table0;
    {
      hal::Stream s(cpu());
      const EmbeddingBackwardCall call = make_call(want);
      hal::ops::embedding_backward(s, call.ids, call.dy, call.dtable);
      s.synchronize();
    }
    const fake::Stream run = host_embedding_backward(make_call(got));
    ASSERT_FALSE(run.launched.empty());
    EXPECT_EQ(run.launched.front(), "hal_embedding_backward_check");
    EXPECT_EQ(run.launched.back(), c.dim > 0 ? "hal_embedding_backward_accumulate" : "hal_embedding_backward_segments_write");
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size()), 0) << c.name;
    EXPECT_NE(std::memcmp(want.data(), table0.data(), want.size()), 0) << c.name << ": nothing accumulated";
  }
}

TEST(GpuEmbeddingBackwardPlan, ABadIdThrowsTheCpusErrorBeforeDtableIsTouched) {
  std::vector<std::int64_t> ids(3000, 1);
  ids[2500] = 4;  // the first bad position (vocab 4)
  ids[2700] = -3;
  std::vector<float> dy(3000 * 2, 1.0f), table(8, 5.0f);
  EmbeddingBackwardCall call;
  call.ids = Tensor::contiguous(ids.data(), nullptr, DType::i64, Shape{3000});
  call.dy = Tensor::contiguous(dy.data(), nullptr, DType::f32, Shape{3000, 2});
  call.dtable = Tensor::contiguous(table.data(), nullptr, DType::f32, Shape{4, 2});
  fake::Stream s;
  std::string message;
  try {
    run_embedding_backward<fake::Backend>(s, call);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    message = e.what();
  }
  EXPECT_NE(message.find("embedding_backward"), std::string::npos) << message;
  EXPECT_NE(message.find("4 at position 2500"), std::string::npos) << message;
  EXPECT_EQ(table, std::vector<float>(8, 5.0f));
  EXPECT_EQ(std::count(s.launched.begin(), s.launched.end(), "hal_embedding_backward_accumulate"), 0);
  EXPECT_EQ(s.dev.live, 0) << "scratch not freed on the error path";
}

TEST(GpuEmbeddingBackwardPlan, NoIdsLaunchNothing) {
  std::vector<float> table(8, 5.0f);
  EmbeddingBackwardCall call;
  call.ids = Tensor::contiguous(nullptr, nullptr, DType::i32, Shape{0});
  call.dy = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{0, 2});
  call.dtable = Tensor::contiguous(table.data(), nullptr, DType::f32, Shape{4, 2});
  const fake::Stream s = host_embedding_backward(call);
  EXPECT_TRUE(s.launched.empty());
}

}  // namespace hal::gpu_test
