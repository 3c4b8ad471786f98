#pragma once
// The registry of cases (registered once, in cases_*.cpp) and of backend
// entries (one short file per backend, backends_*.cpp), IREE CTS style.
#include <string>
#include <string_view>
#include <vector>

#include "conformance/case.h"

namespace hal::conformance {

// Every case, in a fixed order; built on first use.
const std::vector<Case>& all_cases();
// Cases whose op and dtype name match the glob patterns ("*" matches any run,
// empty matches everything); a model case matches the op "model".
std::vector<const Case*> select_cases(std::string_view op_pattern, std::string_view dtype_pattern);
const Case* find_case(std::string_view name);

// '*' matches any run of characters, '?' one character.
bool glob_match(std::string_view pattern, std::string_view text);

struct PatternReason {
  std::string pattern;  // a glob over case names: "attention/*/gqa_*"
  std::string reason;
};

// How a backend takes part: which devices it names, what it can do (tags,
// informative), which cases it can never run (unsupported: permanent, the
// case is reported "unsupported") and which it currently fails
// (expected_failure: temporary; a pass is reported as a failure so that the
// entry gets removed). A device without an entry runs every case.
struct BackendEntry {
  std::string backend;         // "cuda"
  std::string device_pattern;  // "cuda:*"
  std::vector<std::string> tags;
  std::vector<PatternReason> unsupported;
  std::vector<PatternReason> expected_failures;
};

void register_backend_entry(BackendEntry entry);  // replaces an entry of the same backend
const BackendEntry* backend_entry_for(std::string_view device_name);
const PatternReason* match_case(const std::vector<PatternReason>& list, std::string_view case_name);

}  // namespace hal::conformance
