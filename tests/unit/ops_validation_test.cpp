// Validation of every op (ops/validate*.cpp) through the public functions of
// ops/ops.h on the cpu device: each misuse must throw invalid_argument with a
// message naming the op, the argument and the value given, before anything runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "hal/buffer.h"
#include "hal/error.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::DType;
using hal::Shape;
using hal::Tensor;
namespace ops = hal::ops;

class OpsValidation : public ::testing::Test {
 protected:
  hal::Device& cpu = hal::device("cpu");
  hal::Stream stream{cpu};
  std::vector<hal::Buffer> buffers;

  // A contiguous tensor in its own host buffer, filled with a sentinel byte.
  Tensor make(DType dtype, const Shape& shape) {
    buffers.push_back(hal::Buffer::for_tensor(cpu, dtype, shape));
    std::memset(buffers.back().data(), 0x5a, buffers.back().size());
    return buffers.back().view(dtype, shape);
  }
  Tensor f32(const Shape& shape) { return make(DType::f32, shape); }
};

// Runs `f`, which must throw invalid_argument naming op, argument and given.
void expect_invalid(const std::function<void()>& f, const std::string& op, const std::string& arg,
                    const std::string& given) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected " << op << " to reject '" << arg << "'";
  } catch (const hal::Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), hal::ErrorCode::invalid_argument) << msg;
    EXPECT_EQ(msg.rfind(op + ":", 0), 0u) << "op name missing at the start: " << msg;
    EXPECT_NE(msg.find("argument '" + arg + "'"), std::string::npos) << "argument missing: " << msg;
    EXPECT_NE(msg.find(given), std::string::npos) << "given value '" << given << "' missing: " << msg;
  }
}

bool all_bytes_are(const Tensor& t, unsigned char value) {
  const auto* p = static_cast<const unsigned char*>(t.data);
  const std::size_t n = static_cast<std::size_t>(t.numel()) * hal::dtype_size(t.dtype);
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != value) return false;
  return true;
}

// ---- per-tensor checks ---------------------------------------------------

TEST_F(OpsValidation, NullDataOfNonEmptyTensorRejected) {
  Tensor x = f32({2, 3}), y = f32({2, 3});
  x.data = nullptr;
  expect_invalid([&] { ops::exp(stream, x, y); }, "exp", "x", "f32[2, 3]");
}

TEST_F(OpsValidation, EmptyTensorMayHaveNullData) {
  Tensor x = Tensor::contiguous(nullptr, &cpu, DType::f32, {0, 3});
  Tensor y = Tensor::contiguous(nullptr, &cpu, DType::f32, {0, 3});
  EXPECT_NO_THROW(ops::validate(hal::UnaryCall{hal::UnaryKind::exp, x, y}));
}

TEST_F(OpsValidation, NullDeviceRejected) {
  Tensor x = f32({4}), y = f32({4});
  y.device = nullptr;
  expect_invalid([&] { ops::neg(stream, x, y); }, "neg", "y", "f32[4]");
}

TEST_F(OpsValidation, TensorsOnDifferentDevicesRejected) {
  hal::test::InertDevice other{"other:0"};
  Tensor a = f32({4}), b = f32({4}), y = f32({4});
  b.device = &other;
  expect_invalid([&] { ops::add(stream, a, b, y); }, "add", "b", "on other:0");
}

TEST_F(OpsValidation, NegativeStrideRejected) {
  Tensor x = f32({2, 3}), y = f32({2, 3});
  x.strides = {-3, 1};
  expect_invalid([&] { ops::relu(stream, x, y); }, "relu", "x", "[-3, 1]");
}

TEST_F(OpsValidation, StridesOfWrongRankRejected) {
  Tensor x = f32({2, 3}), y = f32({2, 3});
  x.strides = {1};
  expect_invalid([&] { ops::relu(stream, x, y); }, "relu", "x", "strides [1]");
}

TEST_F(OpsValidation, OutputWithZeroStrideRejected) {
  Tensor x = f32({2, 3}), y = f32({2, 3});
  y.strides = {0, 1};
  expect_invalid([&] { ops::sigmoid(stream, x, y); }, "sigmoid", "y", "strides [0, 1]");
}

TEST_F(OpsValidation, OutputWithOverlappingStridesRejected) {
  Tensor x = f32({3, 3}), y = f32({3, 3});
  y.strides = {1, 1};  // element (0, 1) and (1, 0) share an address
  expect_invalid([&] { ops::tanh(stream, x, y); }, "tanh", "y", "strides [1, 1]");
}

TEST_F(OpsValidation, InputWithZeroStrideBroadcastAccepted) {
  Tensor x = f32({1, 3}), y = f32({4, 3});
  x.shape = {4, 3};
  x.strides = {0, 1};
  EXPECT_NO_THROW(ops::validate(hal::UnaryCall{hal::UnaryKind::abs, x, y}));
}

TEST_F(OpsValidation, OutputOverlappingInputRejected) {
  Tensor x = f32({2, 8});
  Tensor y = x;
  y.shape = {2, 4};
  y.strides = {8, 1};
  y.offset = 4;  // inside x's bytes
  Tensor x_part = x;
  x_part.shape = {2, 4};
  expect_invalid([&] { ops::neg(stream, x_part, y); }, "neg", "y", "f32[2, 4]");
}

TEST_F(OpsValidation, InterleavedButDisjointOutputStillRejectedByRangeTest) {
  // The check is a simple byte-range test: x and y interleaved in one buffer
  // share a range, so the call is rejected even though no element is shared.
  Tensor base = f32({8});
  Tensor x = base, y = base;
  x.shape = y.shape = {4};
  x.strides = y.strides = {2};
  y.offset = 1;
  try {
    ops::neg(stream, x, y);
    ADD_FAILURE() << "no error";
  } catch (const hal::Error& e) {
    EXPECT_NE(std::string(e.what()).find("overlap input 'x'"), std::string::npos) << e.what();
  }
}

TEST_F(OpsValidation, DisjointViewsOfOneBufferAccepted) {
  Tensor base = f32({8});
  Tensor x = base, y = base;
  x.shape = y.shape = {4};
  y.offset = 4;
  EXPECT_NO_THROW(ops::validate(hal::UnaryCall{hal::UnaryKind::neg, x, y}));
}

TEST_F(OpsValidation, OverflowingShapeRejected) {
  Tensor x = f32({2}), y = f32({2});
  x.shape = {std::int64_t{1} << 62, 8};
  x.strides = {8, 1};
  expect_invalid([&] { ops::exp(stream, x, y); }, "exp", "x", "[4611686018427387904, 8]");
}

TEST_F(OpsValidation, OverflowingByteExtentRejected) {
  Tensor x = f32({2}), y = f32({2});
  x.shape = {std::int64_t{1} << 61};  // numel fits, bytes (x4) do not
  x.strides = {1};
  expect_invalid([&] { ops::exp(stream, x, y); }, "exp", "x", "[2305843009213693952]");
}

TEST_F(OpsValidation, MisalignedDataRejected) {
  Tensor x = f32({4}), y = f32({4});
  x.data = static_cast<char*>(x.data) + 2;
  expect_invalid([&] { ops::sqrt(stream, x, y); }, "sqrt", "x", "address");
}

TEST_F(OpsValidation, NothingWrittenWhenRejected) {
  Tensor a = f32({2, 3}), b = f32({4}), y = f32({2, 3});
  EXPECT_THROW(ops::add(stream, a, b, y), hal::Error);
  EXPECT_TRUE(all_bytes_are(y, 0x5a));
  Tensor c = f32({2, 2});
  EXPECT_THROW(ops::gemm(stream, f32({2, 3}), f32({4, 2}), c), hal::Error);
  EXPECT_TRUE(all_bytes_are(c, 0x5a));
}

// ---- gemm --------------------------------------------------------------

TEST_F(OpsValidation, GemmRankLimits) {
  expect_invalid([&] { ops::gemm(stream, f32({6}), f32({3, 2}), f32({2, 2})); }, "gemm", "a", "rank 1");
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({1, 1, 3, 2}), f32({2, 2})); }, "gemm", "b", "rank 4");
}

TEST_F(OpsValidation, GemmOperandDtypesMustMatch) {
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), make(DType::f16, {3, 2}), f32({2, 2})); }, "gemm", "b", "f16");
}

TEST_F(OpsValidation, GemmRejectsIntegerAndFp8Operands) {
  expect_invalid([&] { ops::gemm(stream, make(DType::i32, {2, 3}), make(DType::i32, {3, 2}), f32({2, 2})); },
                 "gemm", "a", "i32");
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({3, 2}), make(DType::f8e4m3, {2, 2})); }, "gemm", "c",
                 "f8e4m3");
}

TEST_F(OpsValidation, GemmF64OperandsNeedF64Output) {
  Tensor a = make(DType::f64, {2, 3}), b = make(DType::f64, {3, 2});
  EXPECT_NO_THROW(ops::validate(hal::GemmCall{a, b, make(DType::f64, {2, 2}), std::nullopt}));
  expect_invalid([&] { ops::gemm(stream, a, b, f32({2, 2})); }, "gemm", "c", "f32[2, 2]");
}

TEST_F(OpsValidation, GemmMixedInputAndOutputDtypesAccepted) {
  EXPECT_NO_THROW(ops::validate(hal::GemmCall{make(DType::bf16, {2, 3}), make(DType::bf16, {3, 2}), f32({2, 2}), std::nullopt}));
}

TEST_F(OpsValidation, GemmBiasDtypeMustMatchC) {
  ops::GemmOptions o;
  o.bias = make(DType::f16, {2});
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({3, 2}), f32({2, 2}), o); }, "gemm", "bias", "f16");
}

TEST_F(OpsValidation, GemmBiasShapeMustBeN) {
  ops::GemmOptions o;
  o.bias = f32({5});
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({3, 4}), f32({2, 4}), o); }, "gemm", "bias", "[5]");
}

TEST_F(OpsValidation, GemmInnerDimensionsMustAgree) {
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({4, 2}), f32({2, 2})); }, "gemm", "b", "[4, 2]");
}

TEST_F(OpsValidation, GemmTransposeFlagsChangeTheExpectedShapes) {
  ops::GemmOptions o;
  o.trans_b = true;  // b is [N, K]
  EXPECT_NO_THROW(ops::validate(hal::GemmCall{f32({2, 3}), f32({5, 3}), f32({2, 5}), {}, false, true}));
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({3, 5}), f32({2, 5}), o); }, "gemm", "b", "[3, 5]");
  EXPECT_NO_THROW(ops::validate(hal::GemmCall{f32({3, 2}), f32({3, 5}), f32({2, 5}), {}, true, false}));
}

TEST_F(OpsValidation, GemmOutputShapeChecked) {
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({3, 4}), f32({2, 5})); }, "gemm", "c", "[2, 5]");
}

TEST_F(OpsValidation, GemmBatchDimsEqualOrOne) {
  EXPECT_NO_THROW(ops::validate(hal::GemmCall{f32({4, 2, 3}), f32({1, 3, 5}), f32({4, 2, 5}), std::nullopt}));
  EXPECT_NO_THROW(ops::validate(hal::GemmCall{f32({2, 3}), f32({4, 3, 5}), f32({4, 2, 5}), std::nullopt}));
  expect_invalid([&] { ops::gemm(stream, f32({3, 2, 3}), f32({3, 5}), f32({4, 2, 5})); }, "gemm", "a",
                 "[3, 2, 3]");
  // A batched operand needs a batched C.
  expect_invalid([&] { ops::gemm(stream, f32({2, 2, 3}), f32({3, 5}), f32({2, 5})); }, "gemm", "a", "[2, 2, 3]");
}

TEST_F(OpsValidation, GemmAlphaBetaMustBeFinite) {
  ops::GemmOptions o;
  o.alpha = std::numeric_limits<float>::infinity();
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({3, 2}), f32({2, 2}), o); }, "gemm", "alpha", "inf");
  o.alpha = 1;
  o.beta = std::nanf("");
  expect_invalid([&] { ops::gemm(stream, f32({2, 3}), f32({3, 2}), f32({2, 2}), o); }, "gemm", "beta", "nan");
}

TEST_F(OpsValidation, GemmInputsMustNotOverlapC) {
  Tensor c = f32({2, 2});
  Tensor a = c;  // a reads C's memory
  a.shape = {2, 1};
  a.strides = {2, 1};
  expect_invalid([&] { ops::gemm(stream, a, f32({1, 2}), c); }, "gemm", "c", "f32[2, 2]");
}

// ---- element-wise --------------------------------------------------------

TEST_F(OpsValidation, ElementwiseRejectsIntegerDtype) {
  Tensor a = make(DType::i32, {4}), b = make(DType::i32, {4}), y = make(DType::i32, {4});
  try {
    ops::add(stream, a, b, y);
    ADD_FAILURE() << "no error";
  } catch (const hal::Error& e) {
    EXPECT_NE(std::string(e.what()).find("f32, f16, bf16 or f64"), std::string::npos) << e.what();
  }
  expect_invalid([&] { ops::add(stream, a, b, y); }, "add", "a", "i32[4]");
}

TEST_F(OpsValidation, ElementwiseRejectsFp8) {
  expect_invalid([&] { ops::exp(stream, make(DType::f8e5m2, {4}), make(DType::f8e5m2, {4})); }, "exp", "x",
                 "f8e5m2");
}

TEST_F(OpsValidation, BinaryDtypesMustMatch) {
  expect_invalid([&] { ops::mul(stream, f32({4}), make(DType::bf16, {4}), f32({4})); }, "mul", "b", "bf16[4]");
  expect_invalid([&] { ops::mul(stream, f32({4}), f32({4}), make(DType::f64, {4})); }, "mul", "y", "f64[4]");
}

TEST_F(OpsValidation, BinaryShapesMustBroadcast) {
  expect_invalid([&] { ops::sub(stream, f32({2, 3}), f32({4}), f32({2, 3})); }, "sub", "b", "[4]");
}

TEST_F(OpsValidation, BinaryOutputHasBroadcastShape) {
  EXPECT_NO_THROW(ops::validate(hal::BinaryCall{hal::BinaryKind::div, f32({2, 1}), f32({3}), f32({2, 3})}));
  expect_invalid([&] { ops::div(stream, f32({2, 1}), f32({3}), f32({2, 1})); }, "div", "y", "[2, 1]");
}

TEST_F(OpsValidation, UnaryOutputShapeAndDtype) {
  expect_invalid([&] { ops::gelu(stream, f32({2, 3}), f32({3, 2})); }, "gelu", "y", "[3, 2]");
  expect_invalid([&] { ops::silu(stream, f32({2, 3}), make(DType::f16, {2, 3})); }, "silu", "y", "f16[2, 3]");
}

TEST_F(OpsValidation, SwigluShapesAndDtypes) {
  expect_invalid([&] { ops::swiglu(stream, f32({2, 3}), f32({2, 4}), f32({2, 3})); }, "swiglu", "up", "[2, 4]");
  expect_invalid([&] { ops::swiglu(stream, f32({2, 3}), make(DType::f16, {2, 3}), f32({2, 3})); }, "swiglu", "up",
                 "f16");
  expect_invalid([&] { ops::swiglu(stream, make(DType::i8, {2}), make(DType::i8, {2}), make(DType::i8, {2})); },
                 "swiglu", "gate", "i8");
}

TEST_F(OpsValidation, CastAcceptsEveryFloatDtypeIncludingFp8) {
  for (DType from : {DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2, DType::f64})
    for (DType to : {DType::f32, DType::bf16, DType::f8e4m3, DType::f8e5m2})
      EXPECT_NO_THROW(ops::validate(hal::CastCall{make(from, {3}), make(to, {3})}))
          << hal::dtype_name(from) << " -> " << hal::dtype_name(to);
}

TEST_F(OpsValidation, CastRejectsIntegersAndNonFiniteScale) {
  expect_invalid([&] { ops::cast(stream, make(DType::i32, {3}), f32({3})); }, "cast", "x", "i32");
  expect_invalid([&] { ops::cast(stream, f32({3}), make(DType::i64, {3})); }, "cast", "y", "i64");
  expect_invalid([&] { ops::cast(stream, f32({3}), f32({3}), {.scale = std::nanf("")}); }, "cast", "scale", "nan");
  expect_invalid([&] { ops::cast(stream, f32({3}), f32({4})); }, "cast", "y", "[4]");
}

TEST_F(OpsValidation, CopyAnyDtypeButSameDtypeAndShape) {
  EXPECT_NO_THROW(ops::validate(hal::CopyCall{make(DType::i64, {2, 3}), make(DType::i64, {2, 3})}));
  expect_invalid([&] { ops::copy(stream, make(DType::i32, {2, 3}), make(DType::i64, {2, 3})); }, "copy", "y", "i64");
  expect_invalid([&] { ops::copy(stream, f32({2, 3}), f32({3, 2})); }, "copy", "y", "[3, 2]");
}

TEST_F(OpsValidation, CopyFromPermutedViewAccepted) {
  Tensor x = f32({2, 3, 4});
  EXPECT_NO_THROW(ops::validate(hal::CopyCall{x.permuted({2, 0, 1}), f32({4, 2, 3})}));
}

TEST_F(OpsValidation, FillRandomNeedsFloatOutput) {
  expect_invalid([&] { ops::fill_random(stream, make(DType::i32, {4})); }, "fill_random", "y", "i32[4]");
  EXPECT_NO_THROW(ops::validate(hal::FillRandomCall{make(DType::bf16, {4})}));
}

TEST_F(OpsValidation, FillRandomUniformNeedsALessThanB) {
  expect_invalid([&] { ops::fill_random(stream, f32({4}), {.a = 2.0f, .b = 2.0f}); }, "fill_random", "b", "2");
  expect_invalid(
      [&] { ops::fill_random(stream, f32({4}), {.a = 0.0f, .b = std::numeric_limits<float>::infinity()}); },
      "fill_random", "b", "inf");
}

TEST_F(OpsValidation, FillRandomNormalNeedsNonNegativeDeviation) {
  ops::RandomOptions o{.distribution = hal::RandomDistribution::normal, .a = 5.0f, .b = -1.0f};
  expect_invalid([&] { ops::fill_random(stream, f32({4}), o); }, "fill_random", "b", "-1");
  o.b = 0.0f;
  EXPECT_NO_THROW(ops::validate(hal::FillRandomCall{f32({4}), 0, o.distribution, o.a, o.b}));
}

// ---- reductions, softmax, norms -------------------------------------------

TEST_F(OpsValidation, ReduceAxisOutOfRange) {
  expect_invalid([&] { ops::sum(stream, f32({2, 3}), f32({2}), {.axis = 2}); }, "sum", "axis", "2");
  expect_invalid([&] { ops::mean(stream, f32({2, 3}), f32({2}), {.axis = -3}); }, "mean", "axis", "-3");
}

TEST_F(OpsValidation, ReduceAxisIsNormalised) {
  const hal::OpCall out = ops::validate(hal::ReduceCall{hal::ReduceKind::sum, f32({2, 3, 4}), f32({2, 4}), -2});
  EXPECT_EQ(std::get<hal::ReduceCall>(out).axis, 1);
}

TEST_F(OpsValidation, ReduceOutputShape) {
  expect_invalid([&] { ops::max(stream, f32({2, 3}), f32({3}), {.axis = 1}); }, "max", "y", "[3]");
  expect_invalid([&] { ops::min(stream, f32({2, 3}), f32({2}), {.axis = 1, .keepdim = true}); }, "min", "y", "[2]");
  EXPECT_NO_THROW(ops::validate(hal::ReduceCall{hal::ReduceKind::min, f32({2, 3}), f32({2, 1}), 1, true}));
}

TEST_F(OpsValidation, ArgmaxWritesI64) {
  expect_invalid([&] { ops::argmax(stream, f32({2, 3}), f32({2})); }, "argmax", "y", "f32[2]");
  EXPECT_NO_THROW(ops::validate(hal::ReduceCall{hal::ReduceKind::argmax, f32({2, 3}), make(DType::i64, {2})}));
}

TEST_F(OpsValidation, ReduceDtypeMustBeFloatAndMatch) {
  expect_invalid([&] { ops::sum(stream, make(DType::i32, {2, 3}), make(DType::i32, {2})); }, "sum", "x", "i32");
  expect_invalid([&] { ops::sum(stream, f32({2, 3}), make(DType::f16, {2})); }, "sum", "y", "f16");
}

TEST_F(OpsValidation, MaxOfEmptyAxisRejected) {
  expect_invalid([&] { ops::max(stream, f32({2, 0}), f32({2})); }, "max", "x", "[2, 0]");
}

TEST_F(OpsValidation, SoftmaxOutputMatchesInput) {
  expect_invalid([&] { ops::softmax(stream, f32({2, 3}), f32({2, 4})); }, "softmax", "y", "[2, 4]");
  expect_invalid([&] { ops::log_softmax(stream, f32({2, 3}), make(DType::bf16, {2, 3})); }, "log_softmax", "y",
                 "bf16");
}

TEST_F(OpsValidation, SoftmaxScaleFiniteAndCausalNeedsRank2) {
  expect_invalid(
      [&] { ops::softmax(stream, f32({2, 3}), f32({2, 3}), {.scale = std::numeric_limits<float>::infinity()}); },
      "softmax", "scale", "inf");
  expect_invalid([&] { ops::softmax(stream, f32({3}), f32({3}), {.causal = true}); }, "softmax", "x", "rank 1");
}

TEST_F(OpsValidation, NormEpsMustBePositiveAndFinite) {
  expect_invalid([&] { ops::rmsnorm(stream, f32({2, 4}), f32({4}), f32({2, 4}), {.eps = 0.0f}); }, "rmsnorm", "eps",
                 "0");
  expect_invalid(
      [&] {
        ops::layernorm(stream, f32({2, 4}), f32({4}), std::nullopt, f32({2, 4}),
                       {.eps = std::numeric_limits<float>::infinity()});
      },
      "layernorm", "eps", "inf");
}

TEST_F(OpsValidation, NormWeightAndBiasAreD) {
  expect_invalid([&] { ops::rmsnorm(stream, f32({2, 4}), f32({2}), f32({2, 4})); }, "rmsnorm", "weight", "[2]");
  expect_invalid([&] { ops::layernorm(stream, f32({2, 4}), f32({4}), f32({4, 1}), f32({2, 4})); }, "layernorm",
                 "bias", "[4, 1]");
  expect_invalid([&] { ops::layernorm(stream, f32({2, 4}), make(DType::f16, {4}), std::nullopt, f32({2, 4})); },
                 "layernorm", "weight", "f16");
}

TEST_F(OpsValidation, RmsnormHasNoBias) {
  hal::NormCall c{f32({2, 4}), f32({4}), f32({4}), f32({2, 4}), 1e-5f, true};
  expect_invalid([&] { ops::run(stream, c); }, "rmsnorm", "bias", "f32[4]");
}

// ---- rope, embedding, attention --------------------------------------------

TEST_F(OpsValidation, RopePositionsAreI32BatchSeqOrSeq) {
  Tensor x = f32({2, 3, 4, 8}), y = f32({2, 3, 4, 8});
  EXPECT_NO_THROW(ops::validate(hal::RopeCall{x, make(DType::i32, {2, 3}), y}));
  EXPECT_NO_THROW(ops::validate(hal::RopeCall{x, make(DType::i32, {3}), y}));
  expect_invalid([&] { ops::rope(stream, x, make(DType::i64, {3}), y); }, "rope", "positions", "i64");
  expect_invalid([&] { ops::rope(stream, x, make(DType::i32, {3, 2}), y); }, "rope", "positions", "[3, 2]");
}

TEST_F(OpsValidation, RopeRotaryDim) {
  Tensor x = f32({1, 3, 2, 8}), pos = make(DType::i32, {3}), y = f32({1, 3, 2, 8});
  expect_invalid([&] { ops::rope(stream, x, pos, y, {.rotary_dim = 3}); }, "rope", "rotary_dim", "3");
  expect_invalid([&] { ops::rope(stream, x, pos, y, {.rotary_dim = 10}); }, "rope", "rotary_dim", "10");
  expect_invalid([&] { ops::rope(stream, x, pos, y, {.rotary_dim = -2}); }, "rope", "rotary_dim", "-2");
  const hal::OpCall out = ops::validate(hal::RopeCall{x, pos, y});
  EXPECT_EQ(std::get<hal::RopeCall>(out).rotary_dim, 8);
  EXPECT_EQ(std::get<hal::RopeCall>(ops::validate(hal::RopeCall{x, pos, y, 1e4f, hal::RopeStyle::gptj, 4})).rotary_dim,
            4);
}

TEST_F(OpsValidation, RopeHeadDimEvenAndRank4) {
  expect_invalid([&] { ops::rope(stream, f32({1, 3, 2, 7}), make(DType::i32, {3}), f32({1, 3, 2, 7})); }, "rope", "x",
                 "[1, 3, 2, 7]");
  expect_invalid([&] { ops::rope(stream, f32({3, 2, 8}), make(DType::i32, {3}), f32({3, 2, 8})); }, "rope", "x",
                 "rank 3");
}

TEST_F(OpsValidation, EmbeddingTableIdsAndOutput) {
  Tensor table = make(DType::bf16, {10, 4});
  EXPECT_NO_THROW(ops::validate(hal::EmbeddingCall{table, make(DType::i64, {2, 3}), make(DType::bf16, {2, 3, 4})}));
  expect_invalid([&] { ops::embedding(stream, make(DType::bf16, {10}), make(DType::i32, {3}), make(DType::bf16, {3, 4})); },
                 "embedding", "table", "rank 1");
  expect_invalid([&] { ops::embedding(stream, table, f32({3}), make(DType::bf16, {3, 4})); }, "embedding", "ids",
                 "f32[3]");
  expect_invalid([&] { ops::embedding(stream, table, make(DType::i32, {3}), make(DType::bf16, {3, 5})); }, "embedding",
                 "y", "[3, 5]");
  expect_invalid([&] { ops::embedding(stream, table, make(DType::i32, {3}), f32({3, 4})); }, "embedding", "y",
                 "f32[3, 4]");
}

TEST_F(OpsValidation, EmbeddingAcceptsIntegerTables) {
  EXPECT_NO_THROW(
      ops::validate(hal::EmbeddingCall{make(DType::i8, {10, 4}), make(DType::i32, {3}), make(DType::i8, {3, 4})}));
}

TEST_F(OpsValidation, AttentionRank4) {
  expect_invalid([&] { ops::attention(stream, f32({2, 4, 8}), f32({1, 2, 4, 8}), f32({1, 2, 4, 8}), f32({1, 2, 4, 8})); },
                 "attention", "q", "rank 3");
}

TEST_F(OpsValidation, AttentionKvHeadsDivideQueryHeads) {
  EXPECT_NO_THROW(ops::validate(hal::AttentionCall{f32({1, 2, 6, 8}), f32({1, 5, 2, 8}), f32({1, 5, 2, 4}),
                                                   f32({1, 2, 6, 4})}));
  expect_invalid([&] { ops::attention(stream, f32({1, 2, 6, 8}), f32({1, 5, 4, 8}), f32({1, 5, 4, 8}), f32({1, 2, 6, 8})); },
                 "attention", "k", "[1, 5, 4, 8]");
}

TEST_F(OpsValidation, AttentionBatchSeqAndHeadDimAgree) {
  expect_invalid([&] { ops::attention(stream, f32({2, 2, 4, 8}), f32({1, 5, 4, 8}), f32({1, 5, 4, 8}), f32({2, 2, 4, 8})); },
                 "attention", "k", "[1, 5, 4, 8]");
  expect_invalid([&] { ops::attention(stream, f32({1, 2, 4, 8}), f32({1, 5, 4, 6}), f32({1, 5, 4, 8}), f32({1, 2, 4, 8})); },
                 "attention", "k", "[1, 5, 4, 6]");
  expect_invalid([&] { ops::attention(stream, f32({1, 2, 4, 8}), f32({1, 5, 4, 8}), f32({1, 6, 4, 8}), f32({1, 2, 4, 8})); },
                 "attention", "v", "[1, 6, 4, 8]");
  expect_invalid([&] { ops::attention(stream, f32({1, 2, 4, 8}), f32({1, 5, 4, 8}), f32({1, 5, 4, 8}), f32({1, 2, 4, 6})); },
                 "attention", "y", "[1, 2, 4, 6]");
}

TEST_F(OpsValidation, AttentionDtypesMatch) {
  expect_invalid([&] {
    ops::attention(stream, f32({1, 2, 4, 8}), make(DType::f16, {1, 5, 4, 8}), f32({1, 5, 4, 8}), f32({1, 2, 4, 8}));
  }, "attention", "k", "f16");
}

TEST_F(OpsValidation, AttentionScaleDefaultAndFinite) {
  const hal::AttentionCall c{f32({1, 2, 4, 16}), f32({1, 5, 4, 16}), f32({1, 5, 4, 8}), f32({1, 2, 4, 8})};
  EXPECT_FLOAT_EQ(std::get<hal::AttentionCall>(ops::validate(c)).scale, 0.25f);
  hal::AttentionCall explicit_scale = c;
  explicit_scale.scale = 0.5f;
  EXPECT_FLOAT_EQ(std::get<hal::AttentionCall>(ops::validate(explicit_scale)).scale, 0.5f);
  expect_invalid([&] { ops::attention(stream, c.q, c.k, c.v, c.y, {.scale = std::nanf("")}); }, "attention", "scale",
                 "nan");
}

}  // namespace
