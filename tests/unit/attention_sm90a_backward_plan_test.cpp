// Host-side planning of the sm_90a attention backward, checked on the CPU:
// the causal query / key ranges its kernels walk
// (ptx/kernels/attention_sm90a_backward_params.h) against a brute-force mask,
// the tile sizes, and the launcher's plan
// (backends/cuda/cuda_attention_sm90a_backward_plan.h: which calls fit, the
// two kernels, grids, shared memory, TMA views). The kernels themselves have
// never run (docs/performance.md, "Unverified GPU kernels").
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_attention_sm90a_backward_plan.h"
#include "ptx/kernels/attention_sm90a_backward_params.h"

namespace {

using hal::DType;
using hal::cuda::AttentionSm90aBwdPlan;
using hal::cuda::AttentionSm90aDevice;
using hal::cuda::plan_attention_backward_sm90a;
using hal::cuda::TmaView4D;
using hal::kernel_params::AttentionBackwardParams;
using hal::ptx::attention_sm90a_bwd_first_query_tile;
using hal::ptx::attention_sm90a_kv_end;
using hal::ptx::AttentionSm90aBwdDkdvTile;
using hal::ptx::AttentionSm90aBwdDqTile;

const std::vector<std::pair<std::int64_t, std::int64_t>> kShapes = {
    {1, 1}, {5, 300}, {300, 5}, {128, 128}, {200, 77}, {77, 200}, {513, 1000}, {1000, 513}, {64, 64}};

bool visible(std::int64_t i, std::int64_t j, std::int64_t sq, std::int64_t sk, bool causal) {
  return j < sk && i < sq && (!causal || j <= i + (sk - sq));
}

// dK/dV: the first query tile a key block walks is aligned, no query before
// it sees any key of the block, and its own tile holds a query that does
// (tight: no tile is loaded that nobody in the block needs).
template <int D>
void check_first_query_tile() {
  constexpr int BM = AttentionSm90aBwdDkdvTile<D>::kBlockM, BN = AttentionSm90aBwdDkdvTile<D>::kBlockN;
  for (const auto& [sq, sk] : kShapes)
    for (bool causal : {false, true})
      for (std::int64_t j0 = 0; j0 < sk; j0 += BN) {
        SCOPED_TRACE(testing::Message() << "d " << D << " sq " << sq << " sk " << sk << " causal " << causal
                                        << " j0 " << j0);
        const std::int64_t i_begin = attention_sm90a_bwd_first_query_tile<std::int64_t>(j0, BM, sq, sk, causal);
        // The 32-bit form the producer warpgroup uses agrees.
        ASSERT_EQ(i_begin, attention_sm90a_bwd_first_query_tile<std::int32_t>(
                               static_cast<std::int32_t>(j0), BM, static_cast<std::int32_t>(sq),
                               static_cast<std::int32_t>(sk), causal));
        ASSERT_GE(i_begin, 0);
        ASSERT_LE(i_begin, sq);
        if (i_begin < sq) {
          ASSERT_EQ(i_begin % BM, 0);
        }
        std::int64_t first_seen = sq;
        for (std::int64_t i = 0; i < sq && first_seen == sq; ++i)
          for (std::int64_t j = j0; j < j0 + BN; ++j)
            if (visible(i, j, sq, sk, causal)) {
              first_seen = i;
              break;
            }
        if (first_seen == sq) {
          // No query sees the block: every tile it walks is masked (allowed),
          // but it must not start past sq with a misaligned start.
          EXPECT_TRUE(i_begin == sq || i_begin % BM == 0);
        } else {
          EXPECT_EQ(i_begin, first_seen / BM * BM);
        }
      }
}

TEST(AttentionSm90aBackwardRanges, FirstQueryTileMatchesTheCausalMask) {
  check_first_query_tile<64>();
  check_first_query_tile<128>();
}

// dQ: key_end is one past the last key any query of the block sees.
TEST(AttentionSm90aBackwardRanges, KeyEndMatchesTheCausalMask) {
  constexpr int BM = AttentionSm90aBwdDqTile<128>::kBlockM;
  for (const auto& [sq, sk] : kShapes)
    for (bool causal : {false, true})
      for (std::int64_t i0 = 0; i0 < sq; i0 += BM) {
        SCOPED_TRACE(testing::Message() << "sq " << sq << " sk " << sk << " causal " << causal << " i0 " << i0);
        std::int64_t last = -1;
        for (std::int64_t i = i0; i < i0 + BM && i < sq; ++i)
          for (std::int64_t j = 0; j < sk; ++j)
            if (visible(i, j, sq, sk, causal)) last = j > last ? j : last;
        EXPECT_EQ(attention_sm90a_kv_end(i0, BM, sq, sk, causal), last + 1);
      }
}

// Under a causal mask with sq == sk, the dK/dV kernel skips about half the
// (key block, query tile) pairs: the ones wholly above the diagonal.
TEST(AttentionSm90aBackwardRanges, CausalSkipsBlocksAboveTheDiagonal) {
  constexpr int BM = AttentionSm90aBwdDkdvTile<64>::kBlockM, BN = AttentionSm90aBwdDkdvTile<64>::kBlockN;
  const std::int64_t s = 4096;
  std::int64_t walked = 0, all = 0;
  for (std::int64_t j0 = 0; j0 < s; j0 += BN) {
    const std::int64_t i_begin = attention_sm90a_bwd_first_query_tile<std::int64_t>(j0, BM, s, s, true);
    EXPECT_EQ(i_begin, j0);  // block j0 is first seen by query j0
    walked += (s - i_begin) / BM;
    all += s / BM;
  }
  EXPECT_EQ(walked, (s / BN) * (s / BM) - (BN / BM) * ((s / BN) * (s / BN - 1) / 2));
  EXPECT_LT(walked * 10, all * 6);
}

TEST(AttentionSm90aBackwardTiles, SharedMemoryAndRegisters) {
  // K, V + 2 stages of Q, dY + lse / D of two warpgroups + 7 barriers + 1024 alignment slack.
  EXPECT_EQ(AttentionSm90aBwdDkdvTile<64>::kSharedBytes, 2 * 128 * 64 * 2 + 2 * 2 * 64 * 64 * 2 + 2 * 2 * 64 * 4 + 7 * 8 + 1024);
  EXPECT_EQ(AttentionSm90aBwdDkdvTile<128>::kSharedBytes,
            2 * 64 * 128 * 2 + 2 * 2 * 64 * 128 * 2 + 2 * 2 * 64 * 4 + 7 * 8 + 1024);
  // Q, dY + kStages of K, V + barriers + slack.
  EXPECT_EQ(AttentionSm90aBwdDqTile<64>::kSharedBytes, 2 * 128 * 64 * 2 + 3 * 2 * 64 * 64 * 2 + 10 * 8 + 1024);
  EXPECT_EQ(AttentionSm90aBwdDqTile<128>::kSharedBytes, 2 * 128 * 128 * 2 + 2 * 2 * 64 * 128 * 2 + 7 * 8 + 1024);
  // d = 128 splits dV / dK between the warpgroups over 64 keys; d = 64 gives each 64 keys.
  EXPECT_TRUE(AttentionSm90aBwdDkdvTile<128>::kSplit);
  EXPECT_FALSE(AttentionSm90aBwdDkdvTile<64>::kSplit);
  EXPECT_EQ(AttentionSm90aBwdDkdvTile<64>::kBlockN, 128);
  EXPECT_EQ(AttentionSm90aBwdDkdvTile<128>::kBlockN, 64);
  // The setmaxnreg split redistributes exactly the launch registers.
  using R = hal::ptx::AttentionSm90aRegisters;
  EXPECT_EQ(128 * R::kProducerRegisters + 256 * R::kConsumerRegisters, R::kLaunchRegisters * R::kThreads);
  // Every tile and box starts on a 1024-byte swizzle atom.
  for (int bytes : {AttentionSm90aBwdDkdvTile<64>::kKBytes, AttentionSm90aBwdDkdvTile<64>::kQBytes,
                    AttentionSm90aBwdDkdvTile<128>::kKBytes, AttentionSm90aBwdDkdvTile<128>::kQBytes,
                    AttentionSm90aBwdDqTile<64>::kKBytes, AttentionSm90aBwdDqTile<64>::kQBytes,
                    AttentionSm90aBwdDqTile<128>::kKBytes, AttentionSm90aBwdDqTile<128>::kQBytes,
                    AttentionSm90aBwdDkdvTile<64>::kBoxBytesK, AttentionSm90aBwdDkdvTile<64>::kBoxBytesQ,
                    AttentionSm90aBwdDkdvTile<128>::kBoxBytesK, AttentionSm90aBwdDqTile<64>::kBoxBytesK,
                    AttentionSm90aBwdDqTile<128>::kBoxBytesQ})
    EXPECT_EQ(bytes % 1024, 0) << bytes;
}

// Contiguous [b, s, h, d] tensors, causal, as attention_backward_params packs them.
AttentionBackwardParams contiguous(DType t, std::int64_t b, std::int64_t sq, std::int64_t sk, int hq, int hkv,
                                   int d) {
  AttentionBackwardParams p{};
  p.batch = b;
  p.sq = sq;
  p.sk = sk;
  p.hq = hq;
  p.hkv = hkv;
  p.d = p.dv_dim = d;
  p.dtype = static_cast<std::uint8_t>(t);
  p.causal = 1;
  p.scale = 0.125f;
  auto fill = [](std::int64_t (&s)[4], std::int64_t seq, std::int64_t heads, std::int64_t dim) {
    s[3] = 1;
    s[2] = dim;
    s[1] = heads * dim;
    s[0] = seq * heads * dim;
  };
  for (std::int64_t(*s)[4] : {&p.q_stride, &p.y_stride, &p.dy_stride, &p.dq_stride}) fill(*s, sq, hq, d);
  for (std::int64_t(*s)[4] : {&p.k_stride, &p.v_stride, &p.dk_stride, &p.dv_stride}) fill(*s, sk, hkv, d);
  p.lse_stride[0] = sq * hq;
  p.lse_stride[1] = hq;
  p.lse_stride[2] = 1;
  return p;
}

AttentionSm90aDevice h100() {
  AttentionSm90aDevice dev;
  dev.cc_major = 9;
  dev.has_sm90a_kernels = true;
  dev.sm_count = 132;
  dev.max_shared_per_block_optin = 227 * 1024;
  return dev;
}

void expect_view(const TmaView4D& v, std::int64_t c, std::int64_t s, std::int64_t h, std::int64_t b,
                 std::uint32_t rows) {
  EXPECT_EQ(v.dims[0], static_cast<std::uint64_t>(c));
  EXPECT_EQ(v.dims[1], static_cast<std::uint64_t>(s));
  EXPECT_EQ(v.dims[2], static_cast<std::uint64_t>(h));
  EXPECT_EQ(v.dims[3], static_cast<std::uint64_t>(b));
  EXPECT_EQ(v.strides_bytes[0], static_cast<std::uint64_t>(h * c * 2));      // one sequence row
  EXPECT_EQ(v.strides_bytes[1], static_cast<std::uint64_t>(c * 2));          // one head
  // One batch; a batch of one takes the harmless one-row stride (make_view).
  EXPECT_EQ(v.strides_bytes[2], static_cast<std::uint64_t>(b == 1 ? c * 2 : s * h * c * 2));
  EXPECT_EQ(v.box[0], 64u);
  EXPECT_EQ(v.box[1], rows);
  EXPECT_EQ(v.box[2], 1u);
  EXPECT_EQ(v.box[3], 1u);
}

TEST(AttentionSm90aBackwardPlan, PicksTheKernelsGridsAndViews) {
  // bf16, d = 128, grouped-query (32 query heads on 8 kv heads), sq != sk.
  const AttentionBackwardParams p = contiguous(DType::bf16, 2, 1000, 1500, 32, 8, 128);
  const AttentionSm90aBwdPlan plan = plan_attention_backward_sm90a(p, true, h100());
  ASSERT_TRUE(plan.fits) << plan.why;
  EXPECT_EQ(std::string(plan.dkdv.kernel), "hal_attention_bwd_dkdv_sm90a_bf16_d128");
  EXPECT_EQ(std::string(plan.dq.kernel), "hal_attention_bwd_dq_sm90a_bf16_d128");
  // dkdv: 64-key blocks (split form) x kv heads x batch; dq: 128-query blocks x heads x batch.
  EXPECT_EQ(plan.dkdv.grid[0], (1500u + 63) / 64);
  EXPECT_EQ(plan.dkdv.grid[1], 8u);
  EXPECT_EQ(plan.dkdv.grid[2], 2u);
  EXPECT_EQ(plan.dq.grid[0], (1000u + 127) / 128);
  EXPECT_EQ(plan.dq.grid[1], 32u);
  EXPECT_EQ(plan.dq.grid[2], 2u);
  EXPECT_EQ(plan.dkdv.threads, 384u);
  EXPECT_EQ(plan.dq.threads, 384u);
  EXPECT_EQ(plan.dkdv.shared_bytes, static_cast<unsigned>(AttentionSm90aBwdDkdvTile<128>::kSharedBytes));
  EXPECT_EQ(plan.dq.shared_bytes, static_cast<unsigned>(AttentionSm90aBwdDqTile<128>::kSharedBytes));
  // dkdv: Q, dY in 64-query boxes, K, V in 64-key boxes; dq: 128-query and 64-key boxes.
  expect_view(plan.dkdv.q, 128, 1000, 32, 2, 64);
  expect_view(plan.dkdv.dy, 128, 1000, 32, 2, 64);
  expect_view(plan.dkdv.k, 128, 1500, 8, 2, 64);
  expect_view(plan.dkdv.v, 128, 1500, 8, 2, 64);
  expect_view(plan.dq.q, 128, 1000, 32, 2, 128);
  expect_view(plan.dq.dy, 128, 1000, 32, 2, 128);
  expect_view(plan.dq.k, 128, 1500, 8, 2, 64);
  expect_view(plan.dq.v, 128, 1500, 8, 2, 64);

  // f16, d = 64: 128-key dkdv blocks (each warpgroup owns 64 keys).
  const AttentionBackwardParams p64 = contiguous(DType::f16, 1, 300, 300, 4, 4, 64);
  const AttentionSm90aBwdPlan plan64 = plan_attention_backward_sm90a(p64, true, h100());
  ASSERT_TRUE(plan64.fits) << plan64.why;
  EXPECT_EQ(std::string(plan64.dkdv.kernel), "hal_attention_bwd_dkdv_sm90a_f16_d64");
  EXPECT_EQ(std::string(plan64.dq.kernel), "hal_attention_bwd_dq_sm90a_f16_d64");
  EXPECT_EQ(plan64.dkdv.grid[0], 3u);
  EXPECT_EQ(plan64.dq.grid[0], 3u);
  expect_view(plan64.dkdv.k, 64, 300, 4, 1, 128);
  expect_view(plan64.dkdv.q, 64, 300, 4, 1, 64);
  expect_view(plan64.dq.k, 64, 300, 4, 1, 64);
  expect_view(plan64.dq.q, 64, 300, 4, 1, 128);
}

TEST(AttentionSm90aBackwardPlan, DeclinesWhatItCannotRun) {
  const AttentionBackwardParams good = contiguous(DType::bf16, 2, 256, 256, 8, 2, 64);
  ASSERT_TRUE(plan_attention_backward_sm90a(good, true, h100()).fits);
  auto declined = [&](AttentionBackwardParams p, bool aligned, AttentionSm90aDevice dev, const char* what) {
    const AttentionSm90aBwdPlan plan = plan_attention_backward_sm90a(p, aligned, dev);
    EXPECT_FALSE(plan.fits) << what;
    EXPECT_EQ(plan.dkdv.kernel, nullptr) << what;
    EXPECT_EQ(plan.dq.kernel, nullptr) << what;
    EXPECT_NE(std::string(plan.why), "") << what;
  };
  AttentionSm90aDevice a100 = h100();
  a100.cc_major = 8;
  declined(good, true, a100, "sm_80 device");
  AttentionSm90aDevice no_90a = h100();
  no_90a.has_sm90a_kernels = false;
  declined(good, true, no_90a, "build without sm_90a code");
  AttentionSm90aDevice small = h100();
  small.max_shared_per_block_optin = 48 * 1024;
  declined(good, true, small, "too little shared memory");
  declined(good, false, h100(), "unaligned bases");

  AttentionBackwardParams p = good;
  p.dtype = static_cast<std::uint8_t>(DType::f32);
  declined(p, true, h100(), "f32");
  p = good;
  p.d = p.dv_dim = 96;
  declined(p, true, h100(), "d = 96");
  p = good;
  p.dv_dim = 128;
  declined(p, true, h100(), "dv != d");
  p = good;
  p.hq = 6;
  p.hkv = 4;
  declined(p, true, h100(), "hq not a multiple of hkv");
  for (auto empty : {&AttentionBackwardParams::sq, &AttentionBackwardParams::sk, &AttentionBackwardParams::batch}) {
    p = good;
    p.*empty = 0;
    declined(p, true, h100(), "empty call");
  }
  p = good;
  p.sk = std::int64_t{1} << 31;
  declined(p, true, h100(), "sk of 2^31");
  p = good;
  p.batch = 65536;
  declined(p, true, h100(), "batch above the grid's z");
  p = good;
  p.q_stride[3] = 2;
  declined(p, true, h100(), "q channel stride 2");
  p = good;
  p.dy_stride[1] = 8 * 64 + 4;  // rows not 16-byte multiples
  declined(p, true, h100(), "dy row stride");
  p = good;
  p.dk_stride[1] += 2;
  declined(p, true, h100(), "dk rows not 16-byte aligned");
  p = good;
  p.dq_stride[3] = 2;
  declined(p, true, h100(), "dq channel stride 2");
}

}  // namespace
