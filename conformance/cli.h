#pragma once
// `hal conformance`: runs the suite on one device (the CLI in tools/ forwards
// its arguments here).
//
//   hal conformance [--device DEV] [--op OP] [--dtype DT] [--json FILE]
//                   [--record FILE] [--compare FILE] [--list]
//
// --op / --dtype take glob patterns ("soft*", "bf16"); --json writes every
// case result; --record writes the device's outputs as safetensors (case
// definitions and device info in __metadata__); --compare scores this
// device's outputs against a recording with twice the contract bound. Exit
// status: 0 when no case failed, 1 when any failed, 2 on a usage or I/O error.
#include <string>
#include <vector>

#include "conformance/harness.h"

namespace hal::conformance {

int conformance_main(int argc, char** argv);

// The pieces, for tests and other drivers.
std::vector<CaseResult> run_cases(const std::vector<const Case*>& cases, const std::string& device,
                                  const RunOptions& options, bool progress = false);
void write_results_json(const std::string& path, const std::vector<CaseResult>& results);
void write_record(const std::string& path, const std::string& device, const std::vector<CaseResult>& results);
// Loads a recording; the returned function finds a case's output in it.
std::function<const RecordedOutput*(const std::string&)> load_record(const std::string& path, std::string* recorded_device = nullptr);

}  // namespace hal::conformance
