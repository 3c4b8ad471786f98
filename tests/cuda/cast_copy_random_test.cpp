// cast, copy, fill_random and embedding on cuda:0 against the cpu device.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cuda_test_util.h"
#include "hal/error.h"
#include "ops/ops.h"

namespace hal::cuda_test {
namespace {

const DType kFloats[] = {DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2};

TEST(CudaCast, EveryFloatPairMatchesCpuExactly) {
  HAL_REQUIRE_CUDA();
  for (DType from : kFloats) {
    for (DType to : kFloats) {
      const HostTensor x = host_tensor(from, Shape{7, 301}, -1000, 1000);
      const std::string what = std::string(dtype_name(from)) + "->" + std::string(dtype_name(to));
      expect_matches_cpu({x}, to, Shape{7, 301}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::cast(s, in[0], y);
      }, 0, what);
      expect_matches_cpu({x}, to, Shape{7, 301}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::cast(s, in[0], y, {.scale = 0.37f});
      }, 0, what + " scaled");
    }
  }
}

// The contiguous cast kernel (cast_contiguous, switch "cast_vec": both sides
// contiguous, 16-byte aligned, floating): 1M + 5 elements (a tail past the
// last chunk of 8) spanning fp8 saturation, subnormals, +-0, inf and NaN, for
// every float pair, bit-identical to the cpu device (NaN vs NaN counts equal).
TEST(CudaCast, ContiguousMillionElementCastsMatchCpuExactly) {
  HAL_REQUIRE_CUDA();
  const std::size_t n = (1u << 20) + 5;
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    // A log-uniform magnitude in [2^-30, 2^20) with a sign from another hash.
    const double u = static_cast<double>((i * 2654435761u) % 1000003u) / 1000003.0;
    const float mag = std::ldexp(1.0f + static_cast<float>(u), static_cast<int>((i * 40503u) % 50u) - 30);
    v[i] = ((i * 2246822519u) >> 7) & 1 ? -mag : mag;
  }
  const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(), 448.0f, 464.0f, -57344.0f, 61440.0f, 1e-45f,
                           -3.0e-39f, 65504.0f, 65520.0f, 3.3895314e38f};
  for (std::size_t k = 0; k < sizeof(special) / sizeof(special[0]); ++k) {
    v[k] = special[k];                // first chunks
    v[n / 2 + 3 * k] = special[k];    // mid-vector lanes
    if (k < 5) v[n - 1 - k] = special[k];  // the scalar tail
  }
  for (DType from : kFloats) {
    const HostTensor x{from, Shape{static_cast<std::int64_t>(n)}, host_values(from, v)};
    for (DType to : kFloats) {
      const std::string what = std::string("1M ") + std::string(dtype_name(from)) + "->" + std::string(dtype_name(to));
      expect_matches_cpu({x}, to, x.shape, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::cast(s, in[0], y);
      }, 0, what);
      expect_matches_cpu({x}, to, x.shape, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::cast(s, in[0], y, {.scale = 0.37f});
      }, 0, what + " scaled");
    }
  }
}

TEST(CudaCopy, StridedCopyMovesRawBitsOfEveryWidth) {
  HAL_REQUIRE_CUDA();
  const DType types[] = {DType::i8, DType::f16, DType::i32, DType::i64, DType::f32};
  for (DType t : types) {
    HostTensor x{t, Shape{6, 5, 11}, {}};
    x.bytes.resize(6 * 5 * 11 * dtype_size(t));
    for (std::size_t i = 0; i < x.bytes.size(); ++i) x.bytes[i] = static_cast<unsigned char>(i * 37 + 11);  // NaN payloads too
    expect_matches_cpu({x}, t, Shape{11, 5, 6}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
      ops::copy(s, in[0].permuted(Dims{2, 1, 0}), y);
    }, 0, std::string("copy permuted ") + std::string(dtype_name(t)));
    expect_matches_cpu({x}, t, Shape{6, 5, 11}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
      ops::copy(s, in[0], y);
    }, 0, std::string("copy contiguous ") + std::string(dtype_name(t)));
  }
}

TEST(CudaRandom, FillRandomIsBitwiseEqualToCpu) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    for (auto dist : {RandomDistribution::uniform, RandomDistribution::normal}) {
      expect_matches_cpu({}, t, Shape{3, 4097}, [&](Stream& s, const std::vector<Tensor>&, const Tensor& y) {
        ops::fill_random(s, y, {.seed = 0x1234567890abcdefull, .distribution = dist, .a = -2.0f, .b = 3.0f});
      }, 0, std::string("fill_random ") + std::string(to_string(dist)) + " " + std::string(dtype_name(t)));
    }
  }
}

TEST(CudaEmbedding, GathersRowsLikeCpu) {
  HAL_REQUIRE_CUDA();
  for (DType ids_t : {DType::i32, DType::i64}) {
    const HostTensor table = host_tensor(DType::bf16, Shape{1000, 67}, -5, 5);
    HostTensor ids{ids_t, Shape{3, 9}, {}};
    ids.bytes.resize(27 * dtype_size(ids_t));
    for (int i = 0; i < 27; ++i) store_element(ids.bytes.data(), ids_t, i, (i * 373) % 1000);
    expect_matches_cpu({table, ids}, DType::bf16, Shape{3, 9, 67},
                       [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
                         ops::embedding(s, in[0], in[1], y);
                       }, 0, std::string("embedding ids ") + std::string(dtype_name(ids_t)));
  }
}

TEST(CudaEmbedding, OutOfRangeIdThrowsBeforeWriting) {
  HAL_REQUIRE_CUDA();
  Device& dev = *cuda_device();
  for (std::int64_t bad : {std::int64_t{1000}, std::int64_t{-1}}) {
    const HostTensor table = host_tensor(DType::f32, Shape{1000, 16}, -5, 5);
    HostTensor ids{DType::i64, Shape{5}, {}};
    ids.bytes.resize(5 * 8);
    for (int i = 0; i < 5; ++i) store_element(ids.bytes.data(), DType::i64, i, i == 3 ? static_cast<double>(bad) : i);
    try {
      run_on(dev, {table, ids}, DType::f32, Shape{5, 16}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::embedding(s, in[0], in[1], y);
      });
      ADD_FAILURE() << "id " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("ids"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hal::cuda_test
