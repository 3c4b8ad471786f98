#pragma once
// Runs one case on one device and scores it.
//
// For each case: inputs are generated once on the CPU (Philox, rounded to
// their dtypes) and the same bytes are uploaded to the device under test. Each
// output is allocated with kGuardBytes of guard pattern before and after it
// and pre-filled with poison (or its initial contents); the op runs twice, and
// the harness checks, in order: guards intact (no overrun), inputs unchanged,
// both runs bitwise identical, then the score of every output against the fp64
// oracle (or, in compare mode, against a recorded output with twice the
// contract's bound). A case's score is its worst output's.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "conformance/case.h"
#include "conformance/score.h"

namespace hal::conformance {

enum class Status { passed, failed, skipped, unsupported, expected_failure };
std::string_view status_name(Status s);

// One output's bytes: a device's result (kept for --record) or a recording
// (what --compare scores against).
struct RecordedOutput {
  DType dtype = DType::f32;
  Shape shape;
  std::vector<std::uint8_t> bytes;
};

struct CaseResult {
  std::string name, op, dtype, device;
  Status status = Status::passed;
  Score score;           // the worst output's; score.failure says what failed in the numbers
  std::string reason;    // why failed / skipped / unsupported
  double seconds = 0.0;
  // The device's outputs (first run), in the case's order; empty when the case
  // failed before producing them.
  std::vector<RecordedOutput> outputs;
};

// The name under which output `index` of a case is recorded: the case name for
// the first output (recordings of single-output cases keep their names), then
// "<case>#<index>".
std::string recorded_name(const std::string& case_name, std::size_t index);

struct RunOptions {
  // Compare mode: a recorded output by its recorded_name (nullptr: none recorded).
  std::function<const RecordedOutput*(const std::string& recorded_name)> recorded;
};

CaseResult run_case(const Case& c, const std::string& device_name, const RunOptions& options = {});

// Seeds derived from the case name, so every run and machine agrees.
std::uint64_t case_seed(std::string_view case_name, std::uint64_t salt);

// Host bytes of a generated tensor: Philox via hal::ops::fill_random on the
// CPU (f32), rounded once to `dtype`, then the specials planted.
std::vector<std::uint8_t> generate(const Generator& gen, DType dtype, const Shape& storage, std::uint64_t seed);

}  // namespace hal::conformance
