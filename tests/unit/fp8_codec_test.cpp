// The fp8 codec the GPU fp8 kernels use (hal/fp8_codec.h) against the host
// conversions of hal/dtype.h, which dtype_fp8_families_test.cpp checks
// against the formats' definitions: every one of the 256 patterns of each
// format decodes to the same bits, and encoding agrees on every fp8 value,
// every midpoint between neighbours and the floats just beside it, the
// subnormal range, +-0, +-Inf, NaN and random floats.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "hal/dtype.h"
#include "hal/fp8_codec.h"

namespace {

using hal::DType;
namespace codec = hal::fp8_codec;

const DType kFormats[] = {DType::f8e4m3, DType::f8e5m2, DType::f8e4m3fnuz, DType::f8e5m2fnuz};

float host_decode(DType t, std::uint8_t b) {
  switch (t) {
    case DType::f8e4m3: return hal::f8e4m3_to_f32(b);
    case DType::f8e5m2: return hal::f8e5m2_to_f32(b);
    case DType::f8e4m3fnuz: return hal::f8e4m3fnuz_to_f32(b);
    default: return hal::f8e5m2fnuz_to_f32(b);
  }
}
std::uint8_t host_encode(DType t, float v) {
  switch (t) {
    case DType::f8e4m3: return hal::f32_to_f8e4m3(v);
    case DType::f8e5m2: return hal::f32_to_f8e5m2(v);
    case DType::f8e4m3fnuz: return hal::f32_to_f8e4m3fnuz(v);
    default: return hal::f32_to_f8e5m2fnuz(v);
  }
}
std::int32_t code(DType t) { return static_cast<std::int32_t>(t); }

TEST(Fp8Codec, DtypeCodesMatchHalNumbering) {
  EXPECT_EQ(codec::kF8E4M3, code(DType::f8e4m3));
  EXPECT_EQ(codec::kF8E5M2, code(DType::f8e5m2));
  EXPECT_EQ(codec::kF8E4M3Fnuz, code(DType::f8e4m3fnuz));
  EXPECT_EQ(codec::kF8E5M2Fnuz, code(DType::f8e5m2fnuz));
  for (DType t : kFormats) EXPECT_EQ(codec::fp8_max_finite(code(t)), static_cast<float>(hal::dtype_max_finite(t)));
}

TEST(Fp8Codec, EveryPatternDecodesLikeTheHost) {
  for (DType t : kFormats)
    for (std::uint32_t b = 0; b < 256; ++b) {
      const float want = host_decode(t, static_cast<std::uint8_t>(b));
      const float got = codec::fp8_to_f32(static_cast<std::uint8_t>(b), code(t));
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << hal::dtype_name(t) << " 0x" << std::hex << b;
      else EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
          << hal::dtype_name(t) << " 0x" << std::hex << b;
    }
}

TEST(Fp8Codec, EncodingMatchesTheHostAtEveryBoundary) {
  std::vector<float> probes = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                               -std::numeric_limits<float>::quiet_NaN(), 1e30f, -1e30f, 0x1p-149f, -0x1p-149f};
  std::uint32_t state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1664525u + 1013904223u;
    probes.push_back(std::bit_cast<float>(state));
  }
  for (DType t : kFormats) {
    std::vector<float> values;
    for (std::uint32_t b = 0; b < 256; ++b) {
      const float v = host_decode(t, static_cast<std::uint8_t>(b));
      if (std::isfinite(v)) values.push_back(v);
    }
    std::vector<float> all = probes;
    for (float v : values) {
      all.push_back(v);
      all.push_back(std::nextafter(v, INFINITY));
      all.push_back(std::nextafter(v, -INFINITY));
      for (float w : values)
        if (w > v && std::nextafter(v, INFINITY) <= w) {
          const float mid = static_cast<float>((static_cast<double>(v) + w) / 2);
          all.insert(all.end(), {mid, std::nextafter(mid, INFINITY), std::nextafter(mid, -INFINITY)});
        }
    }
    for (float v : all)
      ASSERT_EQ(codec::f32_to_fp8_of(v, code(t)), host_encode(t, v))
          << hal::dtype_name(t) << " encoding " << v << " (bits 0x" << std::hex << std::bit_cast<std::uint32_t>(v) << ")";
  }
}

}  // namespace

namespace {

// The recipe helpers against the contract's statement of it (hal/op_fp8.h).
TEST(Fp8Codec, BlockScaleFollowsTheRecipe) {
  namespace codec = hal::fp8_codec;
  EXPECT_EQ(codec::block_scale(0.0f, codec::kF8E4M3, false), 0x1p-126f);  // an all-zero block
  EXPECT_EQ(codec::block_scale(448.0f, codec::kF8E4M3, false), 1.0f);
  EXPECT_EQ(codec::block_scale(240.0f, codec::kF8E4M3Fnuz, false), 1.0f);
  EXPECT_EQ(codec::block_scale(3.0f, codec::kF8E5M2, false), 3.0f / 57344.0f);
  EXPECT_EQ(codec::block_scale(448.0f, codec::kF8E4M3, true), 1.0f);        // already a power of two
  EXPECT_EQ(codec::block_scale(449.0f, codec::kF8E4M3, true), 2.0f);        // rounded up
  EXPECT_EQ(codec::block_scale(1e-40f, codec::kF8E4M3, true), 0x1p-126f);  // the floor is a power of two
  EXPECT_EQ(codec::amax_term(-3.5f), 3.5f);
  EXPECT_EQ(codec::amax_term(INFINITY), 0.0f);
  EXPECT_EQ(codec::amax_term(-NAN), 0.0f);
  EXPECT_EQ(codec::quantize_one(INFINITY, 1.0f, codec::kF8E4M3Fnuz), 0x7F);  // +Inf saturates
  EXPECT_EQ(codec::quantize_one(NAN, 1.0f, codec::kF8E4M3Fnuz), 0x80);
  EXPECT_EQ(codec::quantize_one(-1e-30f, 1.0f, codec::kF8E4M3Fnuz), 0x00);  // FNUZ: no -0
  EXPECT_EQ(codec::dequantize_one(0x38, 0.5f, codec::kF8E4M3), 0.5f);       // 1.0 * 0.5
}

}  // namespace
