// The sm_90a GEMM's tile order (ptx/kernels/gemm_sm90a_params.h, a plain
// host/device header): every tile exactly once, for grids that are and are
// not multiples of the group height, and grouped as documented. Runs on the
// host, so the order is checked on machines without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "ptx/kernels/gemm_sm90a_params.h"

namespace {

using hal::ptx::gemm_sm90a_tile;

TEST(GemmSm90aTileOrder, VisitsEveryTileOnce) {
  for (const auto& [m_tiles, n_tiles] : std::vector<std::pair<std::int32_t, std::int32_t>>{
           {1, 1}, {1, 9}, {9, 1}, {7, 3}, {8, 8}, {9, 5}, {17, 64}, {64, 64}, {130, 3}}) {
    SCOPED_TRACE(testing::Message() << m_tiles << " x " << n_tiles);
    std::vector<int> seen(static_cast<std::size_t>(m_tiles * n_tiles), 0);
    for (std::int32_t t = 0; t < m_tiles * n_tiles; ++t) {
      const auto at = gemm_sm90a_tile(t, m_tiles, n_tiles);
      ASSERT_GE(at.m, 0);
      ASSERT_LT(at.m, m_tiles);
      ASSERT_GE(at.n, 0);
      ASSERT_LT(at.n, n_tiles);
      ++seen[static_cast<std::size_t>(at.m * n_tiles + at.n)];
    }
    for (int count : seen) ASSERT_EQ(count, 1);
  }
}

// 132 consecutive tiles (an H100/H200 wave) of a 64 x 64 grid touch 8 rows of
// m-tiles and 17 columns of n-tiles, where row-major order touches 3 rows and
// all 64 columns.
TEST(GemmSm90aTileOrder, AWaveSharesFewRowAndColumnBlocks) {
  std::vector<bool> rows(64), cols(64);
  for (std::int32_t t = 0; t < 132; ++t) {
    const auto at = gemm_sm90a_tile(t, 64, 64);
    rows[static_cast<std::size_t>(at.m)] = true;
    cols[static_cast<std::size_t>(at.n)] = true;
  }
  int row_count = 0, col_count = 0;
  for (bool r : rows) row_count += r;
  for (bool c : cols) col_count += c;
  EXPECT_EQ(row_count, 8);
  EXPECT_EQ(col_count, 17);
}

}  // namespace
