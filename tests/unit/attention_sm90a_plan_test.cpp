// Host-side planning of the sm_90a attention kernel, checked on the CPU:
// the persistent work order (ptx/kernels/attention_sm90a_params.h), the
// causal key ranges each work item loads and masks, and the launcher's plan
// (backends/cuda/cuda_attention_sm90a_plan.h: which calls fit, grid, TMA views).
// The kernel itself has never run (docs/performance.md, "Unverified GPU kernels").
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <set>
#include <tuple>
#include <vector>

#include "backends/cuda/cuda_attention_sm90a_plan.h"
#include "ptx/kernels/attention_sm90a_params.h"

namespace {

using hal::DType;
using hal::cuda::AttentionSm90aDevice;
using hal::cuda::plan_attention_sm90a;
using hal::kernel_params::AttentionParams;
using hal::ptx::attention_sm90a_kv_end;
using hal::ptx::attention_sm90a_kv_unmasked;
using hal::ptx::attention_sm90a_work_item;

constexpr int kBlockQ = hal::ptx::AttentionSm90aTile<128>::kBlockQ;
constexpr int kBlockK = hal::ptx::AttentionSm90aTile<128>::kBlockK;

TEST(AttentionSm90aWorkOrder, VisitsEveryItemOnce) {
  for (const auto& [m_tiles, hq, batch] : std::vector<std::tuple<int, int, int>>{
           {1, 1, 1}, {3, 1, 1}, {1, 5, 1}, {4, 8, 2}, {7, 3, 5}, {16, 32, 1}}) {
    SCOPED_TRACE(testing::Message() << m_tiles << " tiles, " << hq << " heads, batch " << batch);
    std::set<std::tuple<int, int, int>> seen;
    for (int i = 0; i < m_tiles * hq * batch; ++i) {
      const auto w = attention_sm90a_work_item(i, m_tiles, hq, batch);
      ASSERT_GE(w.m, 0);
      ASSERT_LT(w.m, m_tiles);
      ASSERT_GE(w.h, 0);
      ASSERT_LT(w.h, hq);
      ASSERT_GE(w.b, 0);
      ASSERT_LT(w.b, batch);
      ASSERT_TRUE(seen.insert({w.m, w.h, w.b}).second);
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(m_tiles * hq * batch));
  }
}

// Heads vary fastest (the query heads of one kv head run side by side), and
// the last query tile comes first.
TEST(AttentionSm90aWorkOrder, HeadsFastestLastTileFirst) {
  const auto w0 = attention_sm90a_work_item(0, 4, 8, 2);
  const auto w1 = attention_sm90a_work_item(1, 4, 8, 2);
  const auto w8 = attention_sm90a_work_item(8, 4, 8, 2);
  const auto w16 = attention_sm90a_work_item(16, 4, 8, 2);
  EXPECT_EQ(w0.m, 3);
  EXPECT_EQ(w0.h, 0);
  EXPECT_EQ(w1.h, 1);
  EXPECT_EQ(w1.m, 3);
  EXPECT_EQ(w8.h, 0);
  EXPECT_EQ(w8.b, 1);
  EXPECT_EQ(w16.m, 2);
}

// Under a causal mask the items come longest first: the key tiles an item
// loads never increase along the order (sq == sk, sq < sk and sq > sk).
TEST(AttentionSm90aWorkOrder, CausalLongestFirst) {
  for (const auto& [sq, sk] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1024, 1024}, {1000, 3000}, {3000, 1000}, {129, 129}, {4096, 300}}) {
    const int m_tiles = static_cast<int>((sq + kBlockQ - 1) / kBlockQ);
    std::int64_t prev = INT64_MAX;
    for (int i = 0; i < m_tiles * 4 * 2; ++i) {
      const auto w = attention_sm90a_work_item(i, m_tiles, 4, 2);
      const std::int64_t tiles =
          (attention_sm90a_kv_end(std::int64_t{w.m} * kBlockQ, kBlockQ, sq, sk, true) + kBlockK - 1) / kBlockK;
      ASSERT_LE(tiles, prev) << "sq " << sq << " sk " << sk << " item " << i;
      prev = tiles;
    }
  }
}

// The key ranges against a brute-force mask (key j visible to query i when
// j <= i + (sk - sq), j < sk): every visible key lies below kv_end, and no
// key below kv_unmasked is masked for any query of the tile that exists.
TEST(AttentionSm90aKeyRange, MatchesTheCausalMask) {
  for (const auto& [sq, sk] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {5, 300}, {300, 5}, {128, 128}, {200, 77}, {77, 200}, {513, 1000}, {1000, 513}}) {
    for (bool causal : {false, true}) {
      for (std::int64_t q0 = 0; q0 < sq; q0 += kBlockQ) {
        const std::int64_t end = attention_sm90a_kv_end(q0, kBlockQ, sq, sk, causal);
        const std::int64_t unmasked = attention_sm90a_kv_unmasked(q0, sq, sk, causal);
        SCOPED_TRACE(testing::Message() << "sq " << sq << " sk " << sk << " causal " << causal << " q0 " << q0);
        ASSERT_GE(end, 0);
        ASSERT_LE(end, sk);
        ASSERT_LE(unmasked, end);
        std::int64_t last_visible = -1;
        for (std::int64_t i = q0; i < q0 + kBlockQ && i < sq; ++i)
          for (std::int64_t j = 0; j < sk; ++j) {
            const bool visible = !causal || j <= i + (sk - sq);
            if (visible) last_visible = j > last_visible ? j : last_visible;
            if (j < unmasked) {
              ASSERT_TRUE(visible) << "query " << i << " key " << j;
            }
          }
        EXPECT_EQ(end, last_visible + 1);  // tight: no key tile is loaded that nobody sees
      }
    }
  }
}

AttentionParams contiguous(DType t, std::int64_t b, std::int64_t sq, std::int64_t sk, int hq, int hkv, int d) {
  AttentionParams p{};
  p.batch = b;
  p.sq = sq;
  p.sk = sk;
  p.hq = hq;
  p.hkv = hkv;
  p.d = p.dv = d;
  p.qkv_type = p.y_type = static_cast<std::uint8_t>(t);
  p.causal = 1;
  p.scale = 0.125f;
  auto fill = [](std::int64_t (&s)[4], std::int64_t seq, std::int64_t heads, std::int64_t dim) {
    s[3] = 1;
    s[2] = dim;
    s[1] = heads * dim;
    s[0] = seq * heads * dim;
  };
  fill(p.q_stride, sq, hq, d);
  fill(p.y_stride, sq, hq, d);
  fill(p.k_stride, sk, hkv, d);
  fill(p.v_stride, sk, hkv, d);
  return p;
}

AttentionSm90aDevice h200() {
  AttentionSm90aDevice d;
  d.cc_major = 9;
  d.has_sm90a_kernels = true;
  d.sm_count = 132;
  d.max_shared_per_block_optin = 227 * 1024;
  return d;
}

TEST(AttentionSm90aPlan, PicksTheKernelGridAndViews) {
  const AttentionParams p = contiguous(DType::bf16, 2, 1000, 1500, 32, 8, 128);
  const auto plan = plan_attention_sm90a(p, true, h200());
  ASSERT_NE(plan.kernel, nullptr) << plan.why;
  EXPECT_STREQ(plan.kernel, "hal_attention_sm90a_bf16_d128");
  EXPECT_EQ(plan.m_tiles, 8);                 // ceil(1000 / 128)
  EXPECT_EQ(plan.items, 8 * 32 * 2);
  EXPECT_EQ(plan.grid, 132u);                 // persistent: one CTA per SM
  EXPECT_EQ(plan.threads, 384u);
  EXPECT_EQ(plan.shared_bytes, static_cast<unsigned>(hal::ptx::AttentionSm90aTile<128>::kSharedBytes));
  // Q as (channel, sequence, head, batch), strides in bytes.
  EXPECT_EQ(plan.q.dims[0], 128u);
  EXPECT_EQ(plan.q.dims[1], 1000u);
  EXPECT_EQ(plan.q.dims[2], 32u);
  EXPECT_EQ(plan.q.dims[3], 2u);
  EXPECT_EQ(plan.q.strides_bytes[0], 32u * 128 * 2);
  EXPECT_EQ(plan.q.strides_bytes[1], 128u * 2);
  EXPECT_EQ(plan.q.strides_bytes[2], 1000u * 32 * 128 * 2);
  EXPECT_EQ(plan.k.dims[1], 1500u);
  EXPECT_EQ(plan.k.dims[2], 8u);
  for (const auto* v : {&plan.q, &plan.k, &plan.v}) {
    EXPECT_EQ(v->box[0], 64u);  // 128 bytes: the swizzle span
    EXPECT_EQ(v->box[1], 128u);
    EXPECT_EQ(v->box[2], 1u);
    EXPECT_EQ(v->box[3], 1u);
  }
  // Few items: the grid shrinks to them.
  const auto small = plan_attention_sm90a(contiguous(DType::f16, 1, 100, 100, 4, 4, 64), true, h200());
  ASSERT_NE(small.kernel, nullptr) << small.why;
  EXPECT_STREQ(small.kernel, "hal_attention_sm90a_f16_d64");
  EXPECT_EQ(small.grid, 4u);
  EXPECT_EQ(small.shared_bytes, static_cast<unsigned>(hal::ptx::AttentionSm90aTile<64>::kSharedBytes));
}

TEST(AttentionSm90aPlan, OneElementDimsTakeAnyStride) {
  AttentionParams p = contiguous(DType::bf16, 1, 64, 64, 1, 1, 64);
  p.q_stride[0] = 0;  // batch of one: the stride is never used
  p.k_stride[2] = 3;  // one kv head
  const auto plan = plan_attention_sm90a(p, true, h200());
  ASSERT_NE(plan.kernel, nullptr) << plan.why;
  EXPECT_EQ(plan.q.strides_bytes[2] % 16, 0u);
  EXPECT_GT(plan.q.strides_bytes[2], 0u);
}

TEST(AttentionSm90aPlan, DeclinesWhatItCannotRun) {
  const AttentionParams good = contiguous(DType::bf16, 2, 256, 256, 8, 2, 128);
  ASSERT_NE(plan_attention_sm90a(good, true, h200()).kernel, nullptr);
  auto declined = [&](AttentionParams p, bool aligned, AttentionSm90aDevice dev) {
    const auto plan = plan_attention_sm90a(p, aligned, dev);
    EXPECT_EQ(plan.kernel, nullptr);
    EXPECT_STRNE(plan.why, "");
  };
  AttentionSm90aDevice a100 = h200();
  a100.cc_major = 8;
  declined(good, true, a100);
  AttentionSm90aDevice no_code = h200();
  no_code.has_sm90a_kernels = false;
  declined(good, true, no_code);
  AttentionSm90aDevice small_smem = h200();
  small_smem.max_shared_per_block_optin = 100 * 1024;
  declined(good, true, small_smem);
  declined(good, false, h200());  // unaligned base
  AttentionParams p = good;
  p.qkv_type = p.y_type = static_cast<std::uint8_t>(DType::f32);
  declined(p, true, h200());
  p = good;
  p.y_type = static_cast<std::uint8_t>(DType::f16);
  declined(p, true, h200());
  p = good;
  p.d = p.dv = 96;
  declined(p, true, h200());
  p = good;
  p.dv = 64;
  declined(p, true, h200());
  p = good;
  p.hq = 6;
  p.hkv = 4;
  declined(p, true, h200());
  p = good;
  p.k_stride[3] = 2;  // channels not contiguous
  declined(p, true, h200());
  p = good;
  p.v_stride[1] += 4;  // 8-byte row stride step: not a TMA stride
  declined(p, true, h200());
  p = good;
  p.k_stride[0] = 0;  // batch broadcast over two batches
  declined(p, true, h200());
  p = good;
  p.y_stride[1] += 2;
  declined(p, true, h200());
  p = good;
  p.sk = std::int64_t{1} << 31;
  declined(p, true, h200());
}

// The tiles fit Hopper's 227 KiB and the byte counts the producer announces
// (expect_tx) are what its boxes deliver.
TEST(AttentionSm90aPlan, TileBytes) {
  using D64 = hal::ptx::AttentionSm90aTile<64>;
  using D128 = hal::ptx::AttentionSm90aTile<128>;
  EXPECT_LE(D64::kSharedBytes, 227 * 1024);
  EXPECT_LE(D128::kSharedBytes, 227 * 1024);
  EXPECT_EQ(D64::kBoxes * D64::kBoxBytesK, D64::kKBytes);
  EXPECT_EQ(D128::kBoxes * D128::kBoxBytesK, D128::kKBytes);
  EXPECT_EQ(D128::kBoxes * D128::kBoxBytesQ, D128::kQBytes);
  EXPECT_EQ(D128::kBoxBytesK, 64 * 2 * D128::kBlockK);  // one box: 64 channels x kBlockK rows
  EXPECT_EQ(D128::kBoxBytesK % 1024, 0);                 // every tile starts on a swizzle atom
}

// The y staging of the TMA-store schedules: two consumers x D / 64 boxes of
// 64 rows x 128 bytes = the 128-row tile, 1024-aligned boxes, and the whole
// smem plan (ring + Q + y + the 4 kStages + 2 mbarriers) within 227 KiB.
TEST(AttentionSm90aPlan, TmaStoreStagingAndBarriers) {
  using D64 = hal::ptx::AttentionSm90aTile<64>;
  using D128 = hal::ptx::AttentionSm90aTile<128>;
  using hal::ptx::AttentionSm90aSchedule;
  EXPECT_EQ(D128::kConsumerWarpgroups * D128::kBoxes * D128::kBoxBytesY, D128::kYBytes);
  EXPECT_EQ(D64::kConsumerWarpgroups * D64::kBoxes * D64::kBoxBytesY, D64::kYBytes);
  EXPECT_EQ(D128::kBoxBytesY % 1024, 0);
  EXPECT_EQ(D128::kBarriers, 4 * D128::kStages + 2);
  EXPECT_EQ(D128::kSharedBytes, 2 * 2 * 32768 + 32768 + (4 * 2 + 2) * 8 + 1024);
  EXPECT_EQ(D64::kSharedBytes, 3 * 2 * 16384 + 16384 + (4 * 3 + 2) * 8 + 1024);
  EXPECT_EQ(D128::shared_bytes(AttentionSm90aSchedule::serial), D128::kSharedBytes);
  EXPECT_EQ(D128::shared_bytes(AttentionSm90aSchedule::overlap), D128::kSharedBytes + 32768);
  EXPECT_EQ(D128::shared_bytes(AttentionSm90aSchedule::pingpong), D128::kSharedBytesTmaStore);
  EXPECT_LE(D128::kSharedBytesTmaStore, 227 * 1024);
  EXPECT_LE(D64::kSharedBytesTmaStore, 227 * 1024);
  // FA3's non-causal d = 128 tile, 128 x 176, would need 2 x 2 x 176 x 256 +
  // 32 KiB Q + 32 KiB y = 240 KiB: over Hopper's 227 KiB (see the tile comment).
  EXPECT_GT(2 * 2 * 176 * 128 * 2 + 32768 + 32768, 227 * 1024);
}

TEST(AttentionSm90aPlan, ScheduleFromTheEnvironmentValue) {
  using hal::cuda::parse_attention_sm90a_schedule;
  using hal::ptx::AttentionSm90aSchedule;
  AttentionSm90aSchedule s = AttentionSm90aSchedule::pingpong;
  EXPECT_TRUE(parse_attention_sm90a_schedule(nullptr, s));
  EXPECT_EQ(s, AttentionSm90aSchedule::serial);
  EXPECT_TRUE(parse_attention_sm90a_schedule("", s));
  EXPECT_EQ(s, AttentionSm90aSchedule::serial);
  EXPECT_TRUE(parse_attention_sm90a_schedule("overlap", s));
  EXPECT_EQ(s, AttentionSm90aSchedule::overlap);
  EXPECT_TRUE(parse_attention_sm90a_schedule("pingpong", s));
  EXPECT_EQ(s, AttentionSm90aSchedule::pingpong);
  EXPECT_TRUE(parse_attention_sm90a_schedule("serial", s));
  EXPECT_EQ(s, AttentionSm90aSchedule::serial);
  EXPECT_FALSE(parse_attention_sm90a_schedule("ping-pong", s));
  EXPECT_FALSE(parse_attention_sm90a_schedule("Overlap", s));
}

// Each schedule names its own kernel; overlap and pingpong are declined (with
// a reason) while they are not built, and take their own tile (bf16 d 128:
// 32 keys, so K / V boxes of 32 rows), its shared memory and a y view with
// 64-row boxes where they are.
TEST(AttentionSm90aPlan, SchedulesPickTheirKernels) {
  using hal::ptx::AttentionSm90aSchedule;
  const AttentionParams p = contiguous(DType::bf16, 2, 1000, 1500, 32, 8, 128);
  const auto serial = plan_attention_sm90a(p, true, h200(), AttentionSm90aSchedule::serial);
  ASSERT_NE(serial.kernel, nullptr) << serial.why;
  EXPECT_STREQ(serial.kernel, "hal_attention_sm90a_bf16_d128");
  EXPECT_EQ(serial.schedule, AttentionSm90aSchedule::serial);
  for (const auto s : {AttentionSm90aSchedule::overlap, AttentionSm90aSchedule::pingpong}) {
    const auto plan = plan_attention_sm90a(p, true, h200(), s);
    if (!hal::ptx::kAttentionSm90aOverlapSchedulesBuilt) {
      EXPECT_EQ(plan.kernel, nullptr);
      EXPECT_NE(std::string(plan.why).find("not built"), std::string::npos) << plan.why;
      continue;
    }
    ASSERT_NE(plan.kernel, nullptr) << plan.why;
    EXPECT_STREQ(plan.kernel, s == AttentionSm90aSchedule::overlap ? "hal_attention_sm90a_bf16_d128_overlap"
                                                                   : "hal_attention_sm90a_bf16_d128_pingpong");
    EXPECT_EQ(plan.shared_bytes, static_cast<unsigned>(hal::ptx::AttentionSm90aTile<128, 32>::kSharedBytesTmaStore));
    EXPECT_EQ(plan.q.box[1], 128u);  // the query tile is the serial one
    EXPECT_EQ(plan.k.box[1], 32u);
    EXPECT_EQ(plan.v.box[1], 32u);
    EXPECT_EQ(plan.m_tiles, serial.m_tiles);
    EXPECT_EQ(plan.items, serial.items);
    EXPECT_EQ(plan.grid, serial.grid);
    EXPECT_EQ(plan.y.dims[1], 1000u);
    EXPECT_EQ(plan.y.box[1], 64u);
    EXPECT_EQ(plan.y.strides_bytes[0], 32u * 128 * 2);
  }
  // Every name of the table (the build report check lists the same ones).
  using hal::cuda::attention_sm90a_detail::kernel_name;
  EXPECT_STREQ(kernel_name(true, true, AttentionSm90aSchedule::serial), "hal_attention_sm90a_f16_d64");
  EXPECT_STREQ(kernel_name(false, false, AttentionSm90aSchedule::pingpong), "hal_attention_sm90a_bf16_d128_pingpong");
  EXPECT_STREQ(kernel_name(true, false, AttentionSm90aSchedule::overlap), "hal_attention_sm90a_f16_d128_overlap");
}

// The overlap / pingpong tiles (attention_sm90a_block_k): 64 keys, 32 for
// bf16 d 128 (what fits the consumers' registers without spills); serial
// keeps 128. Their byte counts, ring depth and the plan's K / V boxes and
// shared memory for every type and head dim.
TEST(AttentionSm90aPlan, ScheduleTiles) {
  using hal::ptx::attention_sm90a_block_k;
  using hal::ptx::attention_sm90a_shared_bytes;
  using hal::ptx::AttentionSm90aSchedule;
  using hal::ptx::AttentionSm90aTile;
  for (const auto s : {AttentionSm90aSchedule::overlap, AttentionSm90aSchedule::pingpong}) {
    EXPECT_EQ(attention_sm90a_block_k(s, 64, false), 64);
    EXPECT_EQ(attention_sm90a_block_k(s, 64, true), 64);
    EXPECT_EQ(attention_sm90a_block_k(s, 128, false), 64);
    EXPECT_EQ(attention_sm90a_block_k(s, 128, true), 32);
  }
  for (const bool bf16 : {false, true})
    for (const int d : {64, 128}) EXPECT_EQ(attention_sm90a_block_k(AttentionSm90aSchedule::serial, d, bf16), 128);

  // Ring + Q + y staging + 4 kStages + 2 mbarriers + 1024 alignment slack.
  using D64K64 = AttentionSm90aTile<64, 64>;
  using D128K64 = AttentionSm90aTile<128, 64>;
  using D128K32 = AttentionSm90aTile<128, 32>;
  EXPECT_EQ(D64K64::kStages, 4);
  EXPECT_EQ(D128K64::kStages, 4);
  EXPECT_EQ(D128K32::kStages, 8);
  EXPECT_EQ(D64K64::kSharedBytesTmaStore, 4 * 2 * 8192 + 16384 + (4 * 4 + 2) * 8 + 1024 + 16384);
  EXPECT_EQ(D128K64::kSharedBytesTmaStore, 4 * 2 * 16384 + 32768 + (4 * 4 + 2) * 8 + 1024 + 32768);
  EXPECT_EQ(D128K32::kSharedBytesTmaStore, 8 * 2 * 8192 + 32768 + (4 * 8 + 2) * 8 + 1024 + 32768);
  // expect_tx bytes = what the boxes deliver; every K / V tile and box on a
  // 1024-byte swizzle atom.
  EXPECT_EQ(D128K32::kBoxes * D128K32::kBoxBytesK, D128K32::kKBytes);
  EXPECT_EQ(D128K64::kBoxes * D128K64::kBoxBytesK, D128K64::kKBytes);
  EXPECT_EQ(D64K64::kBoxes * D64K64::kBoxBytesK, D64K64::kKBytes);
  EXPECT_EQ(D128K32::kBoxBytesK % 1024, 0);
  EXPECT_EQ(D64K64::kKBytes % 1024, 0);

  struct Case {
    DType t;
    int d;
    unsigned rows, shared;
    const char* overlap;
  };
  const Case cases[] = {
      {DType::f16, 64, 64, static_cast<unsigned>(D64K64::kSharedBytesTmaStore), "hal_attention_sm90a_f16_d64_overlap"},
      {DType::bf16, 64, 64, static_cast<unsigned>(D64K64::kSharedBytesTmaStore), "hal_attention_sm90a_bf16_d64_overlap"},
      {DType::f16, 128, 64, static_cast<unsigned>(D128K64::kSharedBytesTmaStore),
       "hal_attention_sm90a_f16_d128_overlap"},
      {DType::bf16, 128, 32, static_cast<unsigned>(D128K32::kSharedBytesTmaStore),
       "hal_attention_sm90a_bf16_d128_overlap"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.overlap);
    const AttentionParams p = contiguous(c.t, 1, 300, 700, 4, 2, c.d);
    const auto serial = plan_attention_sm90a(p, true, h200(), AttentionSm90aSchedule::serial);
    ASSERT_NE(serial.kernel, nullptr) << serial.why;
    EXPECT_EQ(serial.k.box[1], 128u);
    EXPECT_EQ(serial.shared_bytes,
              static_cast<unsigned>(attention_sm90a_shared_bytes(AttentionSm90aSchedule::serial, c.d, c.t == DType::bf16)));
    if (!hal::ptx::kAttentionSm90aOverlapSchedulesBuilt) continue;
    for (const auto s : {AttentionSm90aSchedule::overlap, AttentionSm90aSchedule::pingpong}) {
      const auto plan = plan_attention_sm90a(p, true, h200(), s);
      ASSERT_NE(plan.kernel, nullptr) << plan.why;
      if (s == AttentionSm90aSchedule::overlap) {
        EXPECT_STREQ(plan.kernel, c.overlap);
      }
      EXPECT_EQ(plan.k.box[1], c.rows);
      EXPECT_EQ(plan.v.box[1], c.rows);
      EXPECT_EQ(plan.q.box[1], 128u);
      EXPECT_EQ(plan.shared_bytes, c.shared);
      EXPECT_LE(plan.shared_bytes, 227u * 1024);
      EXPECT_EQ(plan.y.box[1], 64u);
      EXPECT_EQ(plan.grid, serial.grid);  // the work items are the serial ones (128 queries)
    }
  }
  // A device that grants the serial tile but not the TMA-store one declines
  // overlap with a reason (D128K32 needs 197904 bytes).
  AttentionSm90aDevice small = h200();
  small.max_shared_per_block_optin = 170 * 1024;
  const AttentionParams p = contiguous(DType::bf16, 1, 300, 700, 4, 2, 128);
  EXPECT_NE(plan_attention_sm90a(p, true, small, AttentionSm90aSchedule::serial).kernel, nullptr);
  if (hal::ptx::kAttentionSm90aOverlapSchedulesBuilt) {
    EXPECT_EQ(plan_attention_sm90a(p, true, small, AttentionSm90aSchedule::overlap).kernel, nullptr);
  }
}

// The overlap / pingpong mask (one limit per row, softmax_tile_lim) is the
// serial kernel's per-element mask (softmax_tile): key n0 + c hidden when
// n0 + c >= sk or (causal) n0 + c > diag, for every tile size, near and far
// from the diagonal, past sk, and for rows whose diagonal is negative.
TEST(AttentionSm90aPlan, KeyLimitIsTheSerialMask) {
  using hal::ptx::attention_sm90a_key_limit;
  for (const int bk : {32, 64, 128})
    for (const bool causal : {false, true})
      for (const std::int64_t sk : {std::int64_t{1}, std::int64_t{37}, std::int64_t{300}, std::int64_t{1} << 31})
        for (const std::int64_t n0 : {std::int64_t{0}, std::int64_t{32}, std::int64_t{256}, sk - 1, sk + 5})
          for (const std::int64_t diag : {std::int64_t{-200}, std::int64_t{-1}, std::int64_t{0}, n0 - 1, n0, n0 + 7,
                                          n0 + 100, sk + 300, (std::int64_t{1} << 32)}) {
            const int lim = attention_sm90a_key_limit(n0, sk, causal, diag, bk);
            for (int c = 0; c < bk; ++c) {
              const std::int64_t key = n0 + c;
              const bool hidden = key >= sk || (causal && key > diag);
              ASSERT_EQ(c > lim, hidden) << "bk " << bk << " causal " << causal << " sk " << sk << " n0 " << n0
                                         << " diag " << diag << " c " << c;
            }
          }
}

}  // namespace
