// The backends compiled into hal and how they take part in the suite. Each
// GPU backend lists what it can never run (unsupported) and what it fails
// today (expected_failure, to be removed when fixed).
#include "conformance/registry.h"

namespace hal::conformance {

void register_builtin_backend_entries() {
  register_backend_entry({"cpu", "cpu", {"reference", "f64", "all-ops"}, {}, {}});
  register_backend_entry({"cuda", "cuda:*", {"gpu", "f32", "f16", "bf16", "fp8"}, {}, {}});
  register_backend_entry({"hip", "hip:*", {"gpu", "f32", "f16", "bf16", "fp8", "wave64"}, {}, {}});
}

}  // namespace hal::conformance
