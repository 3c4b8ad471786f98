// The scaled-FP8 kernels' arguments (kernel_params/fp8.h, packed by
// backends/gpu/kernel_args.cpp), the grouped GEMM's tile numbering and
// offsets check, and the support matrix's unverified-kernel switch for the
// fp8 ops (backends/gpu/unverified.h). Host code only: runs without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/gpu/kernel_args.h"
#include "backends/gpu/support.h"
#include "backends/gpu/unverified.h"
#include "hal/error.h"

namespace hal::gpu_test {

static_assert(std::is_trivially_copyable_v<kernel_params::Fp8QuantParams> &&
                  std::is_standard_layout_v<kernel_params::Fp8QuantParams> &&
                  std::is_trivially_copyable_v<kernel_params::GemmFp8Params> &&
                  std::is_standard_layout_v<kernel_params::GemmFp8Params>,
              "kernel parameter structs must be plain bytes");

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Tensor strided(DType t, Shape shape, Strides strides) {
  Tensor v = Tensor::contiguous(nullptr, nullptr, t, shape);
  v.strides = strides;
  return v;
}

TEST(GpuFp8Args, QuantizeGridAndStridesFollowTheBlock) {
  QuantizeFp8Call c;
  c.x = strided(DType::bf16, Shape{300, 257}, Strides{1000, 1});
  c.y = Tensor::contiguous(nullptr, nullptr, DType::f8e4m3fnuz, Shape{300, 257});
  c.scales = strided(DType::f32, Shape{3, 3}, Strides{1, 5});  // column-major scale grid
  c.block = Fp8Block::block_128x128;
  c.pow2_scales = true;
  kernel_params::Fp8QuantParams p = gpu::quantize_fp8_params(c);
  EXPECT_EQ(p.m, 300);
  EXPECT_EQ(p.k, 257);
  EXPECT_EQ(p.wide_m_stride, 1000);
  EXPECT_EQ(p.fp8_m_stride, 257);
  EXPECT_EQ(p.grid_rows, 3);  // ceil(300 / 128)
  EXPECT_EQ(p.grid_cols, 3);  // ceil(257 / 128)
  EXPECT_EQ(p.s_row_stride, 1);
  EXPECT_EQ(p.s_col_stride, 5);
  EXPECT_EQ(p.wide_type, static_cast<int>(DType::bf16));
  EXPECT_EQ(p.fp8_type, static_cast<int>(DType::f8e4m3fnuz));
  EXPECT_EQ(p.block, kernel_params::kFp8Block128x128);
  EXPECT_EQ(p.pow2_scales, 1);

  c.block = Fp8Block::row_1x128;
  c.scales = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{300, 3});
  p = gpu::quantize_fp8_params(c);
  EXPECT_EQ(p.grid_rows, 300);
  EXPECT_EQ(p.s_row_stride, 3);
  EXPECT_EQ(p.block, kernel_params::kFp8Row1x128);

  c.block = Fp8Block::tensor;
  c.scales = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{1});
  p = gpu::quantize_fp8_params(c);
  EXPECT_EQ(p.grid_rows, 1);
  EXPECT_EQ(p.grid_cols, 1);
  EXPECT_EQ(p.s_row_stride, 0);
  EXPECT_EQ(p.s_col_stride, 0);
}

TEST(GpuFp8Args, DequantizeReadsYAndWritesX) {
  DequantizeFp8Call c;
  c.y = Tensor::contiguous(nullptr, nullptr, DType::f8e5m2, Shape{4, 130});
  c.scales = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{4, 2});
  c.x = strided(DType::f16, Shape{4, 130}, Strides{1, 4});  // x transposed in memory
  const kernel_params::Fp8QuantParams p = gpu::dequantize_fp8_params(c);
  EXPECT_EQ(p.wide_m_stride, 1);
  EXPECT_EQ(p.wide_k_stride, 4);
  EXPECT_EQ(p.fp8_m_stride, 130);
  EXPECT_EQ(p.wide_type, static_cast<int>(DType::f16));
  EXPECT_EQ(p.fp8_type, static_cast<int>(DType::f8e5m2));
  EXPECT_EQ(p.grid_cols, 2);
  EXPECT_EQ(p.pow2_scales, 0);
}

GemmFp8Call gemm_call(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmFp8Call c;
  const std::int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
  c.a = Tensor::contiguous(nullptr, nullptr, DType::f8e4m3, Shape{m, k});
  c.a_scales = strided(DType::f32, Shape{m, kb}, Strides{1, m});  // M-major, as DeepGEMM keeps them
  c.b = Tensor::contiguous(nullptr, nullptr, DType::f8e5m2, Shape{n, k});
  c.b_scales = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{nb, kb});
  c.c = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{m, n});
  return c;
}

TEST(GpuFp8Args, GemmFp8CarriesScalesTypesAndTheEpilogue) {
  GemmFp8Call c = gemm_call(5, 300, 300);
  kernel_params::GemmFp8Params p = gpu::gemm_fp8_params(c);
  EXPECT_EQ(p.g.m, 5);
  EXPECT_EQ(p.g.n, 300);
  EXPECT_EQ(p.g.k, 300);
  EXPECT_EQ(p.g.a_m_stride, 300);
  EXPECT_EQ(p.g.b_n_stride, 300);
  EXPECT_EQ(p.g.b_k_stride, 1);
  EXPECT_EQ(p.sa_m_stride, 1);
  EXPECT_EQ(p.sa_k_stride, 5);
  EXPECT_EQ(p.sb_n_stride, 3);
  EXPECT_EQ(p.sb_k_stride, 1);
  EXPECT_EQ(p.k_blocks, 3);  // a ragged last block of 44
  EXPECT_EQ(p.a_type, static_cast<int>(DType::f8e4m3));
  EXPECT_EQ(p.b_type, static_cast<int>(DType::f8e5m2));
  EXPECT_EQ(p.g.c_type, static_cast<int>(DType::bf16));
  EXPECT_EQ(p.groups, 0);
  EXPECT_EQ(p.g.epilogue, kernel_params::kGemmEpiloguePlain);
  c.epilogue.beta = 0.5f;  // beta reads C: the general epilogue
  c.epilogue.activation = Activation::silu;
  p = gpu::gemm_fp8_params(c);
  EXPECT_EQ(p.g.beta, 0.5f);
  EXPECT_EQ(p.g.activation, static_cast<int>(Activation::silu));
  EXPECT_EQ(p.g.epilogue, kernel_params::kGemmEpilogueGeneral);
  gpu::set_fp8_m_tiles(p, 128, nullptr, "cuda");
  EXPECT_EQ(p.m_tiles, 1);
  EXPECT_EQ(kernel_params::fp8_tile_rows(p, 0).rows, 5);
}

TEST(GpuFp8Args, GroupedTilesStartAtEachGroupAndSkipEmptyGroups) {
  GemmFp8GroupedCall c;
  const std::int64_t m = 300, n = 64, k = 128, groups = 4;
  c.a = Tensor::contiguous(nullptr, nullptr, DType::f8e4m3fnuz, Shape{m, k});
  c.a_scales = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{m, 1});
  c.b = Tensor::contiguous(nullptr, nullptr, DType::f8e4m3fnuz, Shape{groups, n, k});
  c.b_scales = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{groups, 1, 1});
  c.c = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{m, n});
  std::vector<float> bias_storage(static_cast<std::size_t>(groups * n));
  c.epilogue.bias = Tensor::contiguous(bias_storage.data(), nullptr, DType::f32, Shape{groups, n});
  // Group 0: 130 rows (two tiles), group 1 empty, group 2: 128 rows (one), group 3: 42 (one).
  const std::int32_t offsets[] = {0, 130, 130, 258, 300};
  c.offsets = Tensor::contiguous(const_cast<std::int32_t*>(offsets), nullptr, DType::i32, Shape{groups + 1});
  kernel_params::GemmFp8Params p = gpu::gemm_fp8_grouped_params(c);
  EXPECT_EQ(p.groups, 4);
  EXPECT_EQ(p.b_group_stride, n * k);
  EXPECT_EQ(p.sb_group_stride, 1);
  EXPECT_EQ(p.bias_group_stride, n);
  EXPECT_EQ(p.g.bias_stride, 1);
  EXPECT_EQ(p.g.n, n);
  gpu::check_fp8_group_offsets(offsets, groups, m);
  gpu::set_fp8_m_tiles(p, 128, offsets, "hip");
  ASSERT_EQ(p.m_tiles, 4);
  const kernel_params::Fp8TileRows want[] = {{0, 0, 128}, {0, 128, 2}, {2, 130, 128}, {3, 258, 42}};
  for (int t = 0; t < 4; ++t) {
    const kernel_params::Fp8TileRows r = kernel_params::fp8_tile_rows(p, t);
    EXPECT_EQ(r.group, want[t].group) << t;
    EXPECT_EQ(r.row0, want[t].row0) << t;
    EXPECT_EQ(r.rows, want[t].rows) << t;
  }
  EXPECT_EQ(kernel_params::fp8_tile_rows(p, 4).rows, 0);  // past the end
}

TEST(GpuFp8Args, GroupOffsetsAreCheckedByName) {
  const std::int32_t decreasing[] = {0, 8, 4, 10};
  try {
    gpu::check_fp8_group_offsets(decreasing, 3, 10);
    FAIL() << "decreasing offsets accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_TRUE(contains(e.what(), "gemm_fp8_grouped") && contains(e.what(), "offsets[2] = 4 after 8")) << e.what();
  }
  const std::int32_t short_end[] = {0, 4, 9};
  EXPECT_THROW(gpu::check_fp8_group_offsets(short_end, 2, 10), Error);
  const std::int32_t bad_start[] = {1, 10};
  EXPECT_THROW(gpu::check_fp8_group_offsets(bad_start, 1, 10), Error);
  const std::int32_t empty_groups[] = {0, 0, 10, 10};
  EXPECT_NO_THROW(gpu::check_fp8_group_offsets(empty_groups, 3, 10));
}

// The fp8 kernels never ran on a GPU: declined, naming the switch, unless
// HAL_GPU_UNVERIFIED=1; the f64 oracle form is declined either way.
class GpuFp8Support : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* v = std::getenv(gpu::kUnverifiedKernelsEnv);
    saved_ = v ? std::optional<std::string>(v) : std::nullopt;
  }
  void TearDown() override {
    if (saved_) setenv(gpu::kUnverifiedKernelsEnv, saved_->c_str(), 1);
    else unsetenv(gpu::kUnverifiedKernelsEnv);
  }
  std::optional<std::string> saved_;
};

TEST_F(GpuFp8Support, DeclinedUntilTheUnverifiedSwitchIsOn) {
  QuantizeFp8Call q;
  q.x = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{2, 128});
  q.y = Tensor::contiguous(nullptr, nullptr, DType::f8e4m3, Shape{2, 128});
  q.scales = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{2, 1});
  DequantizeFp8Call d;
  d.y = q.y;
  d.scales = q.scales;
  d.x = q.x;
  const OpCall calls[] = {q, d, gemm_call(2, 3, 4)};
  for (const char* backend : {"cuda", "hip"})
    for (const OpCall& call : calls) {
      unsetenv(gpu::kUnverifiedKernelsEnv);
      Support s = gpu_supports_call(backend, call);
      EXPECT_FALSE(s.ok);
      EXPECT_TRUE(contains(s.reason, backend) && contains(s.reason, std::string(op_name(call))) &&
                  contains(s.reason, "HAL_GPU_UNVERIFIED=1"))
          << s.reason;
      setenv(gpu::kUnverifiedKernelsEnv, "0", 1);  // only "1" turns it on
      EXPECT_FALSE(gpu_supports_call(backend, call).ok);
      setenv(gpu::kUnverifiedKernelsEnv, "1", 1);
      s = gpu_supports_call(backend, call);
      EXPECT_TRUE(s.ok) << s.reason;
    }
}

TEST_F(GpuFp8Support, TheF64OracleFormIsDeclinedEvenWithTheSwitchOn) {
  setenv(gpu::kUnverifiedKernelsEnv, "1", 1);
  GemmFp8Call c = gemm_call(2, 3, 4);
  c.a.dtype = c.b.dtype = c.a_scales.dtype = c.b_scales.dtype = c.c.dtype = DType::f64;
  const Support s = gpu_supports_call("cuda", c);
  EXPECT_FALSE(s.ok);
  EXPECT_TRUE(contains(s.reason, "gemm_fp8") && contains(s.reason, "f64")) << s.reason;
  QuantizeFp8Call q;
  q.x = Tensor::contiguous(nullptr, nullptr, DType::f64, Shape{1, 1});
  q.y = Tensor::contiguous(nullptr, nullptr, DType::f8e4m3, Shape{1, 1});
  q.scales = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{1, 1});
  EXPECT_FALSE(gpu_supports_call("hip", q).ok);
}

}  // namespace hal::gpu_test
