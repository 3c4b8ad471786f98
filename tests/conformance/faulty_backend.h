#pragma once
// A test-only backend that wraps the CPU device and plants one bug, to prove
// that the conformance suite catches it. Devices are named "faulty:<kind>".
#include <string>

namespace hal::conformance::testing {

enum class Fault {
  none,              // a correct device (for the unsupported/expected-failure tests)
  declines,          // supports() says no to every call
  beyond_bound,      // element 0 moved to ref + 1.5 * its contract bound
  skipped_tile,      // gemm drops the last K tile of 16
  write_past_end,    // one element written just past the output
  dropped_nan,       // NaN outputs replaced by 0
  nondeterministic,  // every second run perturbs element 0 by one ulp
  wrong_transpose,   // gemm ignores trans_b (reads B as row-major [K, N])
};

std::string fault_device_name(Fault f);
// Registers every faulty device once (idempotent).
void register_faulty_devices();

}  // namespace hal::conformance::testing
