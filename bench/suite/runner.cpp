#include "bench/suite/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "hal/error.h"
#include "bench/suite/vendor_torch.h"
#include "ops/ops.h"

namespace hal::bench {

namespace {

// Bytes moved per call by the in-cache run of a memory-bound case: a quarter
// of the 2-core VM's 32 MiB L3, 16 of its 512 KiB L2s. Large enough that the
// thread pool's start-up is noise.
constexpr double kInCacheBytes = 8.0 * 1024 * 1024;

}  // namespace

double BenchResult::hal_rate() const {
  if (!hal || hal->median_ms <= 0) return 0;
  const double s = hal->median_ms * 1e-3;
  return bench_case.compute_bound() ? bench_case.flops() / s * 1e-12 : bench_case.bytes() / s * 1e-9;
}

double BenchResult::vendor_rate() const {
  if (!vendor || vendor->median_ms <= 0) return 0;
  return bench_case.flops() / (vendor->median_ms * 1e-3) * 1e-12;
}

namespace {

// Owns the buffers of one case; inputs are random (never zeros: zeros run
// faster than real data on some hardware and hide unwritten outputs).
struct Operands {
  Device& dev;
  std::vector<Buffer> buffers;
  Tensor make(Stream& s, DType t, const Shape& shape, std::uint64_t seed, bool random = true) {
    buffers.push_back(Buffer::for_tensor(dev, t, shape));
    Tensor x = buffers.back().view(t, shape);
    if (random && x.numel() > 0) ops::fill_random(s, x, {seed, RandomDistribution::normal, 0.0f, 1.0f});
    return x;
  }
};

}  // namespace

Runner::Runner(Device& device, RunnerOptions options) : device_(device), options_(options), stream_(device) {
  if (options_.with_vendor) {
    vendor_ = open_vendor_gemm(device, &vendor_status_);
    if (vendor_) vendor_status_ = vendor_->name();
    if (device.info().backend == "cpu") {
      std::string why;
      bf16_vendor_ = open_torch_gemm(static_cast<int>(device.info().compute_units), &why);
      vendor_status_ += bf16_vendor_ ? "; bf16: " + bf16_vendor_->name() : "; bf16: no PyTorch (" + why + ")";
    }
  } else {
    vendor_status_ = "disabled";
  }
  const DeviceInfo& info = device.info();
  ceilings_.nominal_bf16_tflops = info.peak_bf16_tflops;
  ceilings_.nominal_fp32_tflops = info.peak_fp32_tflops;
  if (!device.host_accessible()) {
    // Twice the L2 so that a memset between runs evicts every input line.
    const std::size_t bytes = std::max<std::size_t>(2 * info.l2_bytes, 256u << 20);
    flush_buffer_ = Buffer(device, bytes);
  }
  // Copy ceiling: a large device-to-device copy (bytes read + written).
  const std::int64_t n = (device.host_accessible() ? 256ll : 1024ll) << 20;
  Buffer src(device, static_cast<std::size_t>(n)), dst(device, static_cast<std::size_t>(n));
  stream_.memset(src.data(), 1, static_cast<std::size_t>(n));
  Tensor x = src.view(DType::f32, {n / 4}), y = dst.view(DType::f32, {n / 4});
  const Measurement raw = measure(stream_, [&] { stream_.copy_on_device(dst.data(), src.data(), static_cast<std::size_t>(n)); });
  const Measurement op = measure(stream_, [&] { ops::copy(stream_, x, y); });
  const double raw_gbps = 2.0 * static_cast<double>(n) / (raw.median_ms * 1e-3) * 1e-9;
  const double op_gbps = 2.0 * static_cast<double>(n) / (op.median_ms * 1e-3) * 1e-9;
  ceilings_.copy_gbps = std::max(raw_gbps, op_gbps);
  ceilings_.copy_source = fmt::format("max(device memcpy {:.0f} GB/s, hal copy {:.0f} GB/s) over {} MiB",
                                      raw_gbps, op_gbps, n >> 20);
}

void Runner::flush_cache(Stream& s) {
  if (flush_buffer_.data()) s.memset(flush_buffer_.data(), 0, flush_buffer_.size());
}

namespace {

Measurement summarise(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  Measurement m;
  m.samples = static_cast<int>(samples.size());
  m.median_ms = samples[samples.size() / 2];
  if (samples.size() % 2 == 0) m.median_ms = 0.5 * (samples[samples.size() / 2 - 1] + samples[samples.size() / 2]);
  m.min_ms = samples.front();
  m.max_ms = samples.back();
  return m;
}

}  // namespace

double Runner::time_once(Stream& s, const std::function<void()>& fn) {
  Event start(device_), stop(device_);
  flush_cache(s);
  s.record(start);
  fn();
  s.record(stop);
  stop.synchronize();
  return stop.elapsed_ms_since(start);
}

std::vector<Measurement> Runner::measure_alternating(Stream& s, const std::vector<std::function<void()>>& fns) {
  for (int i = 0; i < options_.warmup; ++i)
    for (const auto& fn : fns) fn();
  s.synchronize();
  std::vector<std::vector<double>> samples(fns.size());
  double total = 0;
  while (static_cast<int>(samples[0].size()) < options_.max_samples &&
         (static_cast<int>(samples[0].size()) < options_.min_samples || total < options_.min_time_ms)) {
    for (std::size_t f = 0; f < fns.size(); ++f) samples[f].push_back(time_once(s, fns[f]));
    total += samples[0].back();  // the budget counts the first function's time only
  }
  std::vector<Measurement> out;
  for (auto& v : samples) out.push_back(summarise(std::move(v)));
  return out;
}

Measurement Runner::measure(Stream& s, const std::function<void()>& fn) { return measure_alternating(s, {fn})[0]; }

BenchResult Runner::run(const BenchCase& c) {
  BenchResult r;
  r.bench_case = c;
  Operands o{device_, {}};
  Stream& s = stream_;
  const auto d = [&](int i) { return c.dims[static_cast<std::size_t>(i)]; };
  try {
    std::function<void()> fn;
    switch (c.op) {
      case BenchOp::gemm: {
        const std::int64_t m = d(0), n = d(1), k = d(2);
        Tensor a = o.make(s, c.dtype, {m, k}, 1), b = o.make(s, c.dtype, {k, n}, 2), y = o.make(s, c.dtype, {m, n}, 3, false);
        fn = [&s, a, b, y] { ops::gemm(s, a, b, y); };
        bool measured = false;
        VendorGemm* vendor = bf16_vendor_ && bf16_vendor_->supports(c.dtype) ? bf16_vendor_.get() : vendor_.get();
        if (vendor) {
          DType vt = vendor->supports(c.dtype) ? c.dtype : DType::f32;
          if (vendor->supports(vt)) {
            Tensor va = a, vb = b, vy = y;
            if (vt != c.dtype) {
              va = o.make(s, vt, {m, k}, 1);
              vb = o.make(s, vt, {k, n}, 2);
              vy = o.make(s, vt, {m, n}, 3, false);
            }
            r.vendor_name = vendor->name() + (vt != c.dtype ? " (f32)" : "");
            const auto m = measure_alternating(s, {fn, [&] { vendor->gemm(s, va, vb, vy); }});
            r.hal = m[0];
            r.vendor = m[1];
            measured = true;
          }
        }
        if (!measured) r.hal = measure(s, fn);
        break;
      }
      case BenchOp::gemm_fp8: {
        // DeepSeek-V3's layout: A 1x128-scaled, B [N, K] 128x128-scaled, C bf16;
        // the baseline is hal's bf16 GEMM on the same shape (B [N, K], trans_b).
        const std::int64_t m = d(0), n = d(1), k = d(2), kb = (k + 127) / 128;
        Tensor a = o.make(s, c.dtype, {m, k}, 1), b = o.make(s, c.dtype, {n, k}, 2);
        Tensor sa = o.make(s, DType::f32, {m, kb}, 3), sb = o.make(s, DType::f32, {(n + 127) / 128, kb}, 4);
        Tensor y = o.make(s, DType::bf16, {m, n}, 5, false);
        Tensor a16 = o.make(s, DType::bf16, {m, k}, 1), b16 = o.make(s, DType::bf16, {n, k}, 2);
        Tensor y16 = o.make(s, DType::bf16, {m, n}, 5, false);
        ops::GemmOptions nt;
        nt.trans_b = true;
        r.vendor_name = "hal gemm bf16";
        const auto times = measure_alternating(
            s, {[&] { ops::gemm_fp8(s, a, sa, b, sb, y); }, [&] { ops::gemm(s, a16, b16, y16, nt); }});
        r.hal = times[0];
        r.vendor = times[1];
        break;
      }
      case BenchOp::attention:
      case BenchOp::attention_causal: {
        const Shape shape{d(0), d(1), d(2), d(3)};
        Tensor q = o.make(s, c.dtype, shape, 1), k = o.make(s, c.dtype, shape, 2), v = o.make(s, c.dtype, shape, 3);
        Tensor y = o.make(s, c.dtype, shape, 4, false);
        const bool causal = c.op == BenchOp::attention_causal;
        r.hal = measure(s, [&] { ops::attention(s, q, k, v, y, {0.0f, causal}); });
        break;
      }
      case BenchOp::attention_decode: {
        const std::int64_t b = d(0), keys = d(1), hq = d(2), hkv = d(3), hd = d(4);
        Tensor q = o.make(s, c.dtype, {b, 1, hq, hd}, 1), k = o.make(s, c.dtype, {b, keys, hkv, hd}, 2);
        Tensor v = o.make(s, c.dtype, {b, keys, hkv, hd}, 3), y = o.make(s, c.dtype, {b, 1, hq, hd}, 4, false);
        measure_memory_bound(s, r, [&] { ops::attention(s, q, k, v, y, {0.0f, true}); }, {k, v});
        break;
      }
      default: {
        // The op over `rows` rows of the case's width, on operands of its own.
        struct RowsCase {
          Tensor x;
          std::function<void()> fn;
        };
        const auto build = [&](std::int64_t rows) {
          const Shape shape{rows, d(1)};
          Tensor x = o.make(s, c.dtype, shape, 1);
          Tensor y = o.make(s, c.dtype, shape, 2, false);
          std::function<void()> op;
          switch (c.op) {
            case BenchOp::softmax: op = [&s, x, y] { ops::softmax(s, x, y); }; break;
            case BenchOp::rmsnorm: {
              Tensor w = o.make(s, c.dtype, {d(1)}, 5);
              op = [&s, x, w, y] { ops::rmsnorm(s, x, w, y); };
              break;
            }
            case BenchOp::layernorm: {
              Tensor w = o.make(s, c.dtype, {d(1)}, 5), b = o.make(s, c.dtype, {d(1)}, 6);
              op = [&s, x, w, b, y] { ops::layernorm(s, x, w, b, y); };
              break;
            }
            case BenchOp::add: {
              Tensor b = o.make(s, c.dtype, shape, 3);
              op = [&s, x, b, y] { ops::add(s, x, b, y); };
              break;
            }
            case BenchOp::silu: op = [&s, x, y] { ops::silu(s, x, y); }; break;
            case BenchOp::gelu: op = [&s, x, y] { ops::gelu(s, x, y); }; break;
            case BenchOp::cast: {
              Tensor z = o.make(s, c.dtype == DType::f32 ? DType::bf16 : DType::f32, shape, 4, false);
              op = [&s, x, z] { ops::cast(s, x, z); };
              break;
            }
            case BenchOp::copy: op = [&s, x, y] { ops::copy(s, x, y); }; break;
            default: break;
          }
          return RowsCase{x, op};
        };
        const RowsCase whole = build(d(0));
        measure_memory_bound(s, r, whole.fn, {whole.x});
        if (device_.host_accessible()) {
          // The same op on a working set the caches keep (kInCacheBytes moved
          // per call): what its arithmetic allows. Below the copy ceiling, the
          // op is compute-bound on this device, whatever the memory does.
          const double row_bytes = c.bytes() / static_cast<double>(d(0));
          const std::int64_t rows = std::clamp<std::int64_t>(static_cast<std::int64_t>(kInCacheBytes / row_bytes), 1, d(0));
          const Measurement hot = measure(s, build(rows).fn);
          r.in_cache_rate = row_bytes * static_cast<double>(rows) / (hot.median_ms * 1e-3) * 1e-9;
        }
      }
    }
  } catch (const Error& e) {
    r.error = e.what();
  }
  s.synchronize();
  return r;
}

void Runner::measure_memory_bound(Stream& s, BenchResult& r, const std::function<void()>& fn,
                                  const std::vector<Tensor>& inputs) {
  // The ceiling: the faster of the device's own copy (memcpy on the CPU, a
  // driver device-to-device copy on GPUs) and hal's copy op, of the inputs'
  // bytes, timed in turn with the case (measure_alternating) so that all see
  // the same memory system. The start-up ceiling (printed in the header) is
  // one moment of a machine whose bandwidth drifts: on the 2-core VM it and a
  // later copy of the same size differed by up to 40%.
  std::vector<Buffer> copies;
  std::vector<Tensor> copy_outputs;
  std::size_t bytes = 0;
  copies.reserve(inputs.size());
  for (const Tensor& x : inputs) {
    const std::size_t n = static_cast<std::size_t>(x.numel()) * dtype_size(x.dtype);
    bytes += n;
    copies.emplace_back(device_, n);
    copy_outputs.push_back(copies.back().view(x.dtype, x.shape));
  }
  const auto m = measure_alternating(
      s, {fn,
          [&] {
            for (std::size_t i = 0; i < inputs.size(); ++i)
              s.copy_on_device(copies[i].data(), inputs[i].first(), copies[i].size());
          },
          [&] {
            for (std::size_t i = 0; i < inputs.size(); ++i) ops::copy(s, inputs[i], copy_outputs[i]);
          }});
  r.hal = m[0];
  const double fastest_copy_ms = std::min(m[1].median_ms, m[2].median_ms);
  r.ceiling = 2.0 * static_cast<double>(bytes) / (fastest_copy_ms * 1e-3) * 1e-9;
  r.ceiling_source = "max(device copy, hal copy) of the inputs' bytes, timed in turn with the case";
}

void Runner::finalize(std::vector<BenchResult>& results) const {
  // The matrix ceiling per dtype: the best rate the vendor library reached in
  // this run (a known-good routine on this device), else the nominal peak.
  std::map<DType, double> best;
  for (const BenchResult& r : results)
    if (r.bench_case.compute_bound() && r.vendor)
      best[r.bench_case.dtype] = std::max(best[r.bench_case.dtype], r.vendor_rate());
  for (BenchResult& r : results) {
    if (!r.bench_case.compute_bound()) continue;
    const DType t = r.bench_case.dtype;
    if (best.count(t) && best[t] > 0) {
      r.ceiling = best[t];
      r.ceiling_source = "best vendor rate in this run";
    } else {
      r.ceiling = t == DType::f32 ? ceilings_.nominal_fp32_tflops : ceilings_.nominal_bf16_tflops;
      r.ceiling_source = "nominal peak";
    }
  }
}

}  // namespace hal::bench
