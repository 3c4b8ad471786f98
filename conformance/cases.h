#pragma once
// Private to the suite: the per-family case lists and small builders for them.
#include <fmt/format.h>

#include <vector>

#include "conformance/case.h"

namespace hal::conformance::cases {

void add_gemm(std::vector<Case>& out);
void add_elementwise(std::vector<Case>& out);  // binary, unary, swiglu
void add_rows(std::vector<Case>& out);         // reduce, softmax, norms
void add_misc(std::vector<Case>& out);         // rope, cast, embedding, attention, copy, fill_random
void add_model(std::vector<Case>& out);        // the decoder layer (model_case.cpp)
void add_fp8(std::vector<Case>& out);          // fnuz casts, quantize/dequantize_fp8, gemm_fp8(_grouped)
void add_training(std::vector<Case>& out);     // backward ops, cross_entropy (cases_training.cpp)
void add_model_training(std::vector<Case>& out);  // the decoder layer's training step (model_training_case.cpp)

inline constexpr DType kFloatTypes[] = {DType::f32, DType::f16, DType::bf16};

inline Generator normal(double mean = 0.0, double stddev = 1.0) { return {Generator::normal, mean, stddev, {}}; }
inline Generator uniform(double lo, double hi) { return {Generator::uniform, lo, hi, {}}; }
inline Generator integers(double lo, double hi) { return {Generator::integers, lo, hi, {}}; }

inline InputSpec input(DType dt, Shape storage, Generator gen = normal(),
                       std::function<Tensor(const Tensor&)> view = {}) {
  return InputSpec{dt, storage, std::move(gen), std::move(view)};
}

// NaN, +-Inf, -0, the smallest subnormal and +-largest finite of `dt`, planted
// from storage index `first` on with the given stride.
std::vector<Special> special_values(DType dt, std::int64_t first = 0, std::int64_t stride = 1);

inline std::string case_name(std::string_view op, DType dt, std::string_view shape_class) {
  return fmt::format("{}/{}/{}", op, dtype_name(dt), shape_class);
}

}  // namespace hal::conformance::cases
