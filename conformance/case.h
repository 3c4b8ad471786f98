#pragma once
// A conformance case: one op call with fixed parameters, inputs and output.
//
// A case is plain data plus one function that builds the op call from views:
// the harness makes the inputs (the same bytes for every device), uploads
// them, runs make_call's OpCall on the device under test and on the fp64
// oracle, and scores the result with the accuracy contract (contract.h).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "conformance/score.h"
#include "hal/op.h"

namespace hal::conformance {

// A value planted at a fixed storage index after generation (NaN, +-Inf, -0,
// subnormals, largest finite). It is stored with the input dtype's host
// conversion, so fp8 saturation applies exactly as in the library.
struct Special {
  std::int64_t index;
  double value;
};

// How an input's storage is filled: Philox numbers from hal::ops::fill_random
// on the CPU (seeded from the case name and the input's position), rounded
// once to the input dtype. `integers` floors uniform [a, b) values (ids,
// positions).
struct Generator {
  enum Kind { uniform, normal, integers } kind = normal;
  double a = 0.0, b = 1.0;
  std::vector<Special> specials;
};

struct InputSpec {
  DType dtype = DType::f32;
  Shape storage;  // contiguous storage that is generated and uploaded
  Generator gen;
  // Turns the contiguous storage view into the view the op reads (transpose,
  // permutation, broadcast with zero strides, a sub-range). Identity if empty.
  std::function<Tensor(const Tensor&)> view;
};

// Outputs are contiguous. `initial` is set when the op reads its output (gemm
// with beta != 0, an accumulated gradient); otherwise the output is pre-filled
// with a poison pattern so that unwritten elements are caught.
struct OutputSpec {
  DType dtype = DType::f32;
  Shape shape;
  std::optional<Generator> initial;
};

struct ModelOutcome {
  bool passed = true;
  Score score;          // the worst stage
  std::string reason;   // the first failing stage and why; or a summary
  std::vector<std::uint8_t> output;  // the layer's output bytes
};

struct Case {
  std::string name;         // "softmax/bf16/causal_127x257": op/dtype/shape class
  std::string op;           // "softmax"
  DType dtype = DType::f32; // the case's main dtype (for the summary table)
  std::vector<InputSpec> inputs;
  // In the order the call lists its outputs (hal::for_each_tensor): each is
  // guarded, checked for determinism and scored on its own.
  std::vector<OutputSpec> outputs;
  std::function<OpCall(std::span<const Tensor> inputs, std::span<const Tensor> outputs)> make_call;
  // Model-level cases run their own chain of ops instead (model_case.cpp):
  // each stage is scored by the same contract; the outcome holds the worst.
  bool is_model = false;
  std::function<ModelOutcome(Device&)> run_model;
};

}  // namespace hal::conformance
