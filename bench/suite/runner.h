#pragma once
// Runs benchmark cases on one device: median of repeated runs after warm-up,
// device events for timing, the L2 flushed before every timed run on GPUs.
#include <optional>
#include <string>
#include <vector>

#include "bench/suite/bench_case.h"
#include "bench/suite/vendor_blas.h"
#include "bench/suite/vendor_fp8.h"
#include "hal/buffer.h"

#include <functional>

namespace hal::bench {

struct Measurement {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int samples = 0;
};

struct Ceilings {
  double copy_gbps = 0;           // measured device copy, bytes read + written
  std::string copy_source;
  double nominal_bf16_tflops = 0;  // from the device properties
  double nominal_fp32_tflops = 0;
};

struct BenchResult {
  BenchCase bench_case;
  std::optional<Measurement> hal;
  std::optional<Measurement> vendor;
  std::string vendor_name;        // "cuBLAS cublasGemmEx", "OpenBLAS cblas_sgemm (f32)"
  // gemm_fp8[_grouped] where `vendor` is the vendor's FP8 GEMM: hal's bf16
  // GEMM on the same shape, timed in turn with both.
  std::optional<Measurement> hal_bf16;
  double hal_bf16_rate() const;
  std::string error;              // why hal (or the vendor) could not run it
  double hal_rate() const;        // TFLOP/s for compute-bound cases, GB/s otherwise
  double vendor_rate() const;
  double ceiling = 0;             // same unit as the rate
  std::string ceiling_source;
  double fraction_of_ceiling() const { return ceiling > 0 ? hal_rate() / ceiling : 0; }
  // Memory-bound row ops on host-memory devices: GB/s of the same op over a
  // working set the caches keep (0: not measured). At or below `ceiling`,
  // the op's arithmetic, not the memory, bounds it on this device.
  double in_cache_rate = 0;
};

struct RunnerOptions {
  double min_time_ms = 300;   // keep sampling until this much timed work (at least min_samples)
  int min_samples = 5;
  int max_samples = 50;
  int warmup = 2;
  bool with_vendor = true;
};

class Runner {
 public:
  Runner(Device& device, RunnerOptions options);
  const Ceilings& ceilings() const { return ceilings_; }
  // Measures the copy ceiling again (the constructor measures it once): for
  // a caller that sets each of its rounds beside the memory's rate then, on
  // a machine whose bandwidth drifts with its neighbours.
  const Ceilings& measure_copy_ceiling();
  const std::string& vendor_status() const { return vendor_status_; }
  BenchResult run(const BenchCase& c);
  // After all cases: compute-bound ceilings from the vendor's best rate per dtype.
  void finalize(std::vector<BenchResult>& results) const;

 private:
  Measurement measure(Stream& s, const std::function<void()>& fn);
  // Functions timed in turn, sample by sample, so that all see the same
  // machine: a slow spell (another process, a clock change, a noisy
  // neighbour on a VM) lands on each instead of on whichever ran then.
  std::vector<Measurement> measure_alternating(Stream& s, const std::vector<std::function<void()>>& fns);
  double time_once(Stream& s, const std::function<void()>& fn);
  // A memory-bound case: fn timed in turn with copies of `inputs` (their
  // bytes are the case's copy ceiling); sets r.hal, r.ceiling.
  void measure_memory_bound(Stream& s, BenchResult& r, const std::function<void()>& fn,
                            const std::vector<Tensor>& inputs);
  void flush_cache(Stream& s);

  Device& device_;
  RunnerOptions options_;
  Stream stream_;
  std::unique_ptr<VendorGemm> vendor_;
  // The CPU's bf16 baseline (PyTorch, vendor_torch.h) where it can be started;
  // it takes the dtypes it supports before vendor_ (OpenBLAS: f32 only).
  std::unique_ptr<VendorGemm> bf16_vendor_;
  std::string vendor_status_;
  std::unique_ptr<VendorFp8Gemm> vendor_fp8_;  // cuBLASLt FP8 (gemm_fp8 cases)
  std::string vendor_fp8_status_;
  Buffer flush_buffer_;
  Ceilings ceilings_;
};

}  // namespace hal::bench
