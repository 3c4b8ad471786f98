// The HIP kernels' float conversions (hip/float_convert.h), compiled for the
// host, against hal/dtype.h: every fp8 / f16 / bf16 code decodes to the same
// bits, and a sweep of ~1M float bit patterns (plus the special values)
// encodes to the same bits. This is what makes the HIP backend's fp8 the OCP
// encoding of the contract rather than MI300X's FNUZ. No GPU needed.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "hal/dtype.h"
#include "hip/float_convert.h"

namespace hal::hip_test {

namespace {

void expect_same_float(float got, float want, std::uint32_t code) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << "code " << code;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << "code " << code;
  } else {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << "code " << code;
  }
}

std::vector<float> sweep() {
  std::vector<float> v;
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099) v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 448.0f, 464.0f, 465.0f, 480.0f,
                  240.0f, 57344.0f, 61439.0f, 61440.0f, 65504.0f, 65520.0f, 0.001953125f, 0.0009765625f,
                  0.00146484375f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()}) {
    v.push_back(x);
    v.push_back(-x);
  }
  return v;
}

}  // namespace

TEST(HipHost, Fp8AndHalfDecodingMatchesTheHostForEveryCode) {
  for (std::uint32_t c = 0; c < 256; ++c) {
    expect_same_float(hip::f8e4m3_to_f32(static_cast<std::uint8_t>(c)), f8e4m3_to_f32(static_cast<std::uint8_t>(c)), c);
    expect_same_float(hip::f8e5m2_to_f32(static_cast<std::uint8_t>(c)), f8e5m2_to_f32(static_cast<std::uint8_t>(c)), c);
  }
  for (std::uint32_t c = 0; c < 65536; ++c) {
    expect_same_float(hip::f16_to_f32(static_cast<std::uint16_t>(c)), f16_to_f32(static_cast<std::uint16_t>(c)), c);
    expect_same_float(hip::bf16_to_f32(static_cast<std::uint16_t>(c)), bf16_to_f32(static_cast<std::uint16_t>(c)), c);
  }
}

TEST(HipHost, EncodingMatchesTheHostBitForBit) {
  int mismatches = 0;
  for (float x : sweep()) {
    const std::uint32_t b = std::bit_cast<std::uint32_t>(x);
    if (hip::f32_to_f8e4m3(x) != f32_to_f8e4m3(x) && ++mismatches < 10) ADD_FAILURE() << "e4m3 of bits " << std::hex << b;
    if (hip::f32_to_f8e5m2(x) != f32_to_f8e5m2(x) && ++mismatches < 10) ADD_FAILURE() << "e5m2 of bits " << std::hex << b;
    if (hip::f32_to_f16(x) != f32_to_f16(x) && ++mismatches < 10) ADD_FAILURE() << "f16 of bits " << std::hex << b;
    if (hip::f32_to_bf16(x) != f32_to_bf16(x) && ++mismatches < 10) ADD_FAILURE() << "bf16 of bits " << std::hex << b;
    if (hip::f32_to_bf16_fast(x) != f32_to_bf16(x) && ++mismatches < 10)
      ADD_FAILURE() << "bf16 (fast) of bits " << std::hex << b;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(HipHost, FastBf16RoundsTiesToEvenAndOverflowsToInfinity) {
  // Exactly halfway between two bf16 codes: the even one wins.
  EXPECT_EQ(hip::f32_to_bf16_fast(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // 0x3F80 even: down
  EXPECT_EQ(hip::f32_to_bf16_fast(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // 0x3F81 odd: up
  EXPECT_EQ(hip::f32_to_bf16_fast(std::bit_cast<float>(0x3F808001u)), 0x3F81);  // past halfway: up
  EXPECT_EQ(hip::f32_to_bf16_fast(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(hip::f32_to_bf16_fast(-std::numeric_limits<float>::max()), 0xFF80);
  EXPECT_EQ(hip::f32_to_bf16_fast(-std::numeric_limits<float>::quiet_NaN()), 0x7FFF);
}

TEST(HipHost, Fp8IsTheOcpEncodingNotFnuz) {
  // OCP e4m3fn: 448 is 0x7E and larger values saturate to it; FNUZ would give
  // 0x7F for 240 and has no code for 448.
  EXPECT_EQ(hip::f32_to_f8e4m3(448.0f), 0x7E);
  EXPECT_EQ(hip::f32_to_f8e4m3(1e9f), 0x7E);
  EXPECT_EQ(hip::f32_to_f8e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(hip::f32_to_f8e4m3(240.0f), 0x77);
  EXPECT_EQ(hip::f32_to_f8e4m3(-0.0f), 0x80);  // -0 exists in OCP (0x80 is FNUZ's NaN)
  EXPECT_EQ(hip::f32_to_f8e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(hip::f32_to_f8e5m2(1e9f), 0x7B);  // 57344, saturating
}

}  // namespace hal::hip_test
