// cuda:0 against the cpu device for softmax, layernorm/rmsnorm, reduce and
// rope: warp-per-row and block-per-row shapes, vectorised (aligned,
// contiguous) and strided rows, causal masks with Lq != Lk, every reduce axis.
// Bounds: the reductions inside are length-n fp32 sums, |err| <= c*n*u*sum|terms|.
#include <gtest/gtest.h>

#include <limits>

#include "kern_test_util.h"
#include "ops/ops.h"

namespace hal::cuda_test {
namespace {

const DType kDtypes[] = {DType::f32, DType::f16, DType::bf16};

TEST(CudaRows, SoftmaxMatchesCpu) {
  HAL_REQUIRE_CUDA();
  // {rows..., cols}: short rows (warp per row), a long row (block per row), odd sizes.
  const Shape shapes[] = {Shape{1, 1}, Shape{7, 129}, Shape{3, 5, 64}, Shape{2, 3000}, Shape{4, 1031}};
  for (DType t : kDtypes) {
    for (const Shape& shape : shapes) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool causal = variant & 1, log = variant & 2;
        const std::int64_t cols = shape.back();
        const double tol = 8.0 * static_cast<double>(cols) * kU32 * (log ? 10.0 : 1.0);
        const std::string what = std::string(dtype_name(t)) + " " + shape.str() + (causal ? " causal" : "") +
                                 (log ? " log" : "");
        const HostTensor x = random_tensor(t, shape, -6, 6, 1);
        expect_matches_cpu({x}, t, shape, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
          ops::SoftmaxOptions o;
          o.scale = 0.7f;
          o.causal = causal;
          if (log) ops::log_softmax(s, in[0], y, o);
          else ops::softmax(s, in[0], y, o);
        }, output_ulps(t), what, tol);
      }
    }
  }
}

TEST(CudaRows, SoftmaxStridedAndCausalWithMoreKeysThanQueries) {
  HAL_REQUIRE_CUDA();
  for (DType t : kDtypes) {
    // x stored [9, 5] and read transposed: rows of stride 5 (scalar path).
    const HostTensor x = random_tensor(t, Shape{9, 5}, -4, 4, 2);
    expect_matches_cpu({x}, t, Shape{5, 9}, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
      ops::softmax(s, in[0].transposed(0, 1), y, {.axis = -1, .scale = 1.0f, .causal = true});
    }, output_ulps(t), std::string(dtype_name(t)) + " strided causal Lq=5 Lk=9", 1e-6);
    // Lq > Lk: the first queries see no key (zeros).
    const HostTensor x2 = random_tensor(t, Shape{2, 6, 4}, -4, 4, 3);
    expect_matches_cpu({x2}, t, Shape{2, 6, 4}, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
      ops::softmax(s, in[0], y, {.axis = -1, .scale = 1.0f, .causal = true});
    }, output_ulps(t), std::string(dtype_name(t)) + " causal Lq=6 Lk=4", 1e-6);
  }
}

TEST(CudaRows, NormsMatchCpu) {
  HAL_REQUIRE_CUDA();
  const Shape shapes[] = {Shape{1, 1}, Shape{5, 7, 256}, Shape{3, 4099}, Shape{17, 33}};
  for (DType t : kDtypes) {
    for (const Shape& shape : shapes) {
      const std::int64_t d = shape.back();
      const HostTensor x = random_tensor(t, shape, -3, 5, 4);
      const HostTensor w = random_tensor(t, Shape{d}, 0.5f, 1.5f, 5);
      const HostTensor b = random_tensor(t, Shape{d}, -1, 1, 6);
      // |y| <= ~3 sigma * max|w| + |b|; the statistics carry ~2*d*u relative error.
      const double tol = 16.0 * static_cast<double>(d) * kU32 * 10.0;
      const std::string what = std::string(dtype_name(t)) + " " + shape.str();
      expect_matches_cpu({x, w, b}, t, shape, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::layernorm(s, in[0], in[1], in[2], y, {.eps = 1e-5f});
      }, output_ulps(t), "layernorm " + what, tol);
      expect_matches_cpu({x, w}, t, shape, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::rmsnorm(s, in[0], in[1], y, {.eps = 1e-6f});
      }, output_ulps(t), "rmsnorm " + what, tol);
    }
  }
}

// The register-row kernels (backends/cuda/cuda_rows.cpp use_register_rows:
// contiguous aligned rows, cols % 8 == 0, 1024 < cols <= 8192; switch
// "rows_reg"): the bench's 4096-column rows, the shortest and longest such
// rows, causal masks cutting chunks of 8 and whole threads' worth of columns
// (including rows with no key), and two runs bitwise identical.
TEST(CudaRows, RegisterRowsMatchCpuAndAreDeterministic) {
  HAL_REQUIRE_CUDA();
  const Shape shapes[] = {Shape{2, 16, 4096}, Shape{3, 1032}, Shape{2, 8192}, Shape{1100, 1032}};
  for (DType t : kDtypes) {
    for (const Shape& shape : shapes) {
      const std::int64_t cols = shape.back();
      const std::string base = std::string(dtype_name(t)) + " " + shape.str();
      const HostTensor x = random_tensor(t, shape, -6, 6, 11);
      for (int variant = 0; variant < 4; ++variant) {
        const bool causal = variant & 1, log = variant & 2;
        const double tol = 8.0 * static_cast<double>(cols) * kU32 * (log ? 10.0 : 1.0);
        const OpFn op = [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
          ops::SoftmaxOptions o;
          o.scale = 0.7f;
          o.causal = causal;
          if (log) ops::log_softmax(s, in[0], y, o);
          else ops::softmax(s, in[0], y, o);
        };
        const std::string what = "softmax " + base + (causal ? " causal" : "") + (log ? " log" : "");
        expect_matches_cpu({x}, t, shape, op, output_ulps(t), what, tol);
        EXPECT_EQ(run_on(*cuda_device(), {x}, t, shape, op), run_on(*cuda_device(), {x}, t, shape, op))
            << what << ": two runs differ";
      }
      const HostTensor xn = random_tensor(t, shape, -3, 5, 12);
      const HostTensor w = random_tensor(t, Shape{cols}, 0.5f, 1.5f, 13);
      const HostTensor b = random_tensor(t, Shape{cols}, -1, 1, 14);
      const double tol = 16.0 * static_cast<double>(cols) * kU32 * 10.0;
      const OpFn ln = [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::layernorm(s, in[0], in[1], in[2], y, {.eps = 1e-5f});
      };
      const OpFn rms = [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::rmsnorm(s, in[0], in[1], y, {.eps = 1e-6f});
      };
      expect_matches_cpu({xn, w, b}, t, shape, ln, output_ulps(t), "layernorm " + base, tol);
      expect_matches_cpu({xn, w}, t, shape, rms, output_ulps(t), "rmsnorm " + base, tol);
      EXPECT_EQ(run_on(*cuda_device(), {xn, w, b}, t, shape, ln), run_on(*cuda_device(), {xn, w, b}, t, shape, ln))
          << "layernorm " << base << ": two runs differ";
      EXPECT_EQ(run_on(*cuda_device(), {xn, w}, t, shape, rms), run_on(*cuda_device(), {xn, w}, t, shape, rms))
          << "rmsnorm " << base << ": two runs differ";
    }
  }
}

// Special values on the register path, as the reference gives them: NaN or
// +inf in a row makes it NaN, a row of -inf is NaN, a single -inf entry is 0.
TEST(CudaRows, RegisterRowsSoftmaxSpecialValues) {
  HAL_REQUIRE_CUDA();
  const std::int64_t cols = 4096;
  std::vector<float> v(5 * cols);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 101) / 25.0f - 2.0f;
  v[0 * cols + 777] = std::numeric_limits<float>::quiet_NaN();
  v[1 * cols + 4095] = std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < cols; ++j) v[2 * cols + j] = -std::numeric_limits<float>::infinity();
  v[3 * cols + 5] = -std::numeric_limits<float>::infinity();
  for (DType t : kDtypes) {
    const HostTensor x{t, Shape{5, cols}, host_values(t, v)};
    for (bool log : {false, true}) {
      expect_matches_cpu({x}, t, Shape{5, cols}, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        if (log) ops::log_softmax(s, in[0], y);
        else ops::softmax(s, in[0], y);
      }, output_ulps(t), std::string(dtype_name(t)) + (log ? " log_softmax" : " softmax") + " special values",
                         8.0 * cols * kU32 * (log ? 10.0 : 1.0));
    }
  }
}

TEST(CudaRows, ReduceEveryAxisAndKind) {
  HAL_REQUIRE_CUDA();
  const ReduceKind kinds[] = {ReduceKind::sum, ReduceKind::mean, ReduceKind::max, ReduceKind::min, ReduceKind::argmax};
  const Shape shape{5, 7, 33};
  for (DType t : kDtypes) {
    const HostTensor x = random_tensor(t, shape, -2, 2, 7);
    for (ReduceKind k : kinds) {
      for (int axis = 0; axis < 3; ++axis) {
        for (bool keepdim : {false, true}) {
          Shape yshape = shape;
          if (keepdim) yshape[axis] = 1;
          else yshape.erase(axis);
          const DType yt = k == ReduceKind::argmax ? DType::i64 : t;
          const double tol = 4.0 * 33.0 * kU32 * 2.0 * 33.0;
          const std::string what = std::string(to_string(k)) + " " + std::string(dtype_name(t)) + " axis " +
                                   std::to_string(axis) + (keepdim ? " keepdim" : "");
          expect_matches_cpu({x}, yt, yshape, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
            ops::reduce(s, k, in[0], y, {.axis = axis, .keepdim = keepdim});
          }, output_ulps(t), what, tol);
        }
      }
    }
  }
}

TEST(CudaRows, ReduceLongRowsAndManyStridedLines) {
  HAL_REQUIRE_CUDA();
  const HostTensor wide = random_tensor(DType::f32, Shape{3, 50001}, -1, 1, 8);  // block per row
  expect_matches_cpu({wide}, DType::f32, Shape{3}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::sum(s, in[0], y, {.axis = 1});
  }, 4, "sum of 50001", 4.0 * 50001 * kU32 * 50001);
  const HostTensor tall = random_tensor(DType::bf16, Shape{37, 5000}, -1, 1, 9);  // thread per output
  expect_matches_cpu({tall}, DType::bf16, Shape{5000}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::sum(s, in[0], y, {.axis = 0});
  }, 1, "bf16 sum over axis 0", 4.0 * 37 * kU32 * 37);
  expect_matches_cpu({tall}, DType::i64, Shape{5000}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::argmax(s, in[0], y, {.axis = 0});
  }, 0, "argmax over axis 0");
}

TEST(CudaRows, ReduceMaxPropagatesNaN) {
  HAL_REQUIRE_CUDA();
  std::vector<float> v(4 * 40, 1.0f);
  v[1 * 40 + 17] = std::numeric_limits<float>::quiet_NaN();
  v[2 * 40 + 3] = 5.0f;
  const HostTensor x{DType::f32, Shape{4, 40}, host_values(DType::f32, v)};
  expect_matches_cpu({x}, DType::f32, Shape{4}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::max(s, in[0], y);
  }, 0, "max with NaN");
  expect_matches_cpu({x}, DType::i64, Shape{4}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::argmax(s, in[0], y);
  }, 0, "argmax with NaN");
}

TEST(CudaRows, RopeMatchesCpu) {
  HAL_REQUIRE_CUDA();
  for (DType t : kDtypes) {
    for (RopeStyle style : {RopeStyle::neox, RopeStyle::gptj}) {
      for (int rotary : {0, 32}) {
        const Shape shape{2, 37, 3, 64};
        const HostTensor x = random_tensor(t, shape, -2, 2, 10);
        std::vector<float> pos(2 * 37);
        for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<float>((i * 97) % 4096);
        const HostTensor positions{DType::i32, Shape{2, 37}, host_values(DType::i32, pos)};
        const std::string what = std::string(dtype_name(t)) + " " + std::string(to_string(style)) + " rotary " +
                                 std::to_string(rotary);
        // Angles up to 4096 rad: an fp32 angle may be off by ~2.5e-4 rad.
        expect_matches_cpu({x, positions}, t, shape, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
          ops::rope(s, in[0], in[1], y, {.theta = 10000.0f, .style = style, .rotary_dim = rotary});
        }, output_ulps(t), what, 2e-3);
      }
    }
  }
}

}  // namespace
}  // namespace hal::cuda_test
