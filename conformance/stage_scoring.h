#pragma once
// One stage of a model-level case: an op call run on the device and scored
// against the fp64 oracle of the inputs it actually read (downloaded before
// it ran, so that an accumulated output, gemm's C with beta = 1 or AdamW's
// moments, is scored from its prior contents), with the op's contract bound.
// Every stage is one op under the contract, so the per-stage verdict is sound
// without propagating bounds through the model.
#include <string>
#include <vector>

#include "conformance/oracle.h"
#include "conformance/score.h"
#include "conformance/tensor_util.h"
#include "hal/op.h"
#include "hal/stream.h"

namespace hal::conformance {

struct ScoredStage {
  Score worst;                         // the worst output's score; worst.failure: the first failure
  std::string failed_output;           // the output named in worst.failure
  std::vector<std::string> input_names, output_names;  // hal::for_each_tensor's names
  std::vector<HostCopy> inputs;        // what the op read (inputs and accumulated outputs' prior contents)
  std::vector<std::vector<std::uint8_t>> outputs;  // the device's results (contiguous bytes)
  std::vector<Reference> references;   // per output: oracle values and contract bounds
};

// Runs `call` on `s` (validated by ops::run) and scores every output. Throws
// what ops::run throws (a declined op: unsupported).
ScoredStage run_scored(Stream& s, const OpCall& call);

}  // namespace hal::conformance
