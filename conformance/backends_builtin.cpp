// The backends compiled into hal and how they take part in the suite. Each
// GPU backend lists what it can never run (unsupported) and what it fails
// today (expected_failure, to be removed when fixed).
#include "conformance/registry.h"

namespace hal::conformance {

void register_builtin_backend_entries() {
  register_backend_entry({"cpu", "cpu", {"reference", "f64", "all-ops"}, {}, {}});
  // No GPU kernel yet for the FNUZ dtypes or the scaled-FP8 ops (issue 22).
  const std::vector<PatternReason> no_fp8_kernels = {
      {"cast/*fnuz*", "no GPU kernel converts the FNUZ fp8 dtypes yet"},
      {"quantize_fp8/*", "quantize_fp8 has no GPU kernel yet"},
      {"dequantize_fp8/*", "dequantize_fp8 has no GPU kernel yet"},
      {"gemm_fp8/*", "gemm_fp8 has no GPU kernel yet"},
      {"gemm_fp8_grouped/*", "gemm_fp8_grouped has no GPU kernel yet"},
  };
  // No GPU kernel writes attention's lse or runs attention_backward yet (issue 20).
  std::vector<PatternReason> gpu_unsupported = no_fp8_kernels;
  gpu_unsupported.push_back({"attention/*/lse_*", "the GPU attention kernels do not write lse yet"});
  gpu_unsupported.push_back({"attention_backward/*", "attention_backward has no GPU kernel yet"});
  register_backend_entry({"cuda", "cuda:*", {"gpu", "f32", "f16", "bf16", "fp8"}, gpu_unsupported, {}});
  register_backend_entry({"hip", "hip:*", {"gpu", "f32", "f16", "bf16", "fp8", "wave64"}, gpu_unsupported, {}});
}

}  // namespace hal::conformance
