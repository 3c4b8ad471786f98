#include "bench/suite/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "hal/error.h"
#include "bench/suite/vendor_torch.h"
#include "ops/ops.h"
#include "ops/training.h"

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

double BenchResult::hal_bf16_rate() const {
  if (!hal_bf16 || hal_bf16->median_ms <= 0) return 0;
  return bench_case.flops() / (hal_bf16->median_ms * 1e-3) * 1e-12;
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

// A's scales [M, ceil(K/128)] stored M-major (the view of a [ceil(K/128), M]
// buffer), as DeepGEMM keeps them: the layout the sm_90a fp8 kernel loads by TMA.
Tensor m_major(Tensor kb_by_m) {
  Tensor v = kb_by_m;
  v.shape = Shape{kb_by_m.shape[1], kb_by_m.shape[0]};
  v.strides = Strides{1, kb_by_m.shape[1]};
  return v;
}

}  // namespace

Runner::Runner(Device& device, RunnerOptions options) : device_(device), options_(options), stream_(device) {
  if (options_.with_vendor) {
    vendor_ = open_vendor_gemm(device, &vendor_status_);
    if (vendor_) vendor_status_ = vendor_->name();
    vendor_fp8_ = open_vendor_fp8_gemm(device, &vendor_fp8_status_);
    vendor_status_ += fmt::format("; FP8: {}", vendor_fp8_ ? vendor_fp8_->name() : "none (" + vendor_fp8_status_ + ")");
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
  measure_copy_ceiling();
}

const Ceilings& Runner::measure_copy_ceiling() {
  // A large device-to-device copy (bytes read + written).
  const std::int64_t n = (device_.host_accessible() ? 256ll : 1024ll) << 20;
  Buffer src(device_, static_cast<std::size_t>(n)), dst(device_, static_cast<std::size_t>(n));
  stream_.memset(src.data(), 1, static_cast<std::size_t>(n));
  Tensor x = src.view(DType::f32, {n / 4}), y = dst.view(DType::f32, {n / 4});
  const Measurement raw = measure(stream_, [&] { stream_.copy_on_device(dst.data(), src.data(), static_cast<std::size_t>(n)); });
  const Measurement op = measure(stream_, [&] { ops::copy(stream_, x, y); });
  const double raw_gbps = 2.0 * static_cast<double>(n) / (raw.median_ms * 1e-3) * 1e-9;
  const double op_gbps = 2.0 * static_cast<double>(n) / (op.median_ms * 1e-3) * 1e-9;
  ceilings_.copy_gbps = std::max(raw_gbps, op_gbps);
  ceilings_.copy_source = fmt::format("max(device memcpy {:.0f} GB/s, hal copy {:.0f} GB/s) over {} MiB",
                                      raw_gbps, op_gbps, n >> 20);
  return ceilings_;
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
      case BenchOp::gemm_decode:
        if (!is_fp8(c.dtype)) {
          // Weights stored [N, K] (trans_b), as models hold them; cuBLAS takes the same operands with op T.
          const std::int64_t m = d(0), n = d(1), k = d(2);
          Tensor a = o.make(s, c.dtype, {m, k}, 1), w = o.make(s, c.dtype, {n, k}, 2), y = o.make(s, c.dtype, {m, n}, 3, false);
          ops::GemmOptions nt;
          nt.trans_b = true;
          fn = [&s, a, w, y, nt] { ops::gemm(s, a, w, y, nt); };
          if (vendor_ && vendor_->supports(c.dtype) && vendor_->supports_nt()) {
            r.vendor_name = vendor_->name() + " (op T)";
            const auto times = measure_alternating(s, {fn, [&] { vendor_->gemm_nt(s, a, w, y); }});
            r.hal = times[0];
            r.vendor = times[1];
          } else {
            r.hal = measure(s, fn);
          }
          break;
        }
        [[fallthrough]];  // fp8 decode shapes: gemm_fp8 (its decode kernel when HAL_GPU_UNVERIFIED=1)
      case BenchOp::gemm_fp8: {
        // DeepSeek-V3's layout: A 1x128-scaled, B [N, K] 128x128-scaled, C bf16;
        // the baseline is hal's bf16 GEMM on the same shape (B [N, K], trans_b).
        const std::int64_t m = d(0), n = d(1), k = d(2), kb = (k + 127) / 128;
        Tensor a = o.make(s, c.dtype, {m, k}, 1), b = o.make(s, c.dtype, {n, k}, 2);
        Tensor sa = m_major(o.make(s, DType::f32, {kb, m}, 3)), sb = o.make(s, DType::f32, {(n + 127) / 128, kb}, 4);
        Tensor y = o.make(s, DType::bf16, {m, n}, 5, false);
        Tensor a16 = o.make(s, DType::bf16, {m, k}, 1), b16 = o.make(s, DType::bf16, {n, k}, 2);
        Tensor y16 = o.make(s, DType::bf16, {m, n}, 5, false);
        ops::GemmOptions nt;
        nt.trans_b = true;
        const auto fp8 = [&] { ops::gemm_fp8(s, a, sa, b, sb, y); };
        const auto bf16 = [&] { ops::gemm(s, a16, b16, y16, nt); };
        if (vendor_fp8_ && c.dtype == DType::f8e4m3) {
          // cuBLASLt's per-tensor recipe: one scale for A, one for B.
          Tensor ta = o.make(s, DType::f32, {1}, 6), tb = o.make(s, DType::f32, {1}, 7);
          Tensor yv = o.make(s, DType::bf16, {m, n}, 8, false);
          r.vendor_name = vendor_fp8_->name();
          const auto times = measure_alternating(s, {fp8, [&] { vendor_fp8_->gemm(s, a, ta, b, tb, yv); }, bf16});
          r.hal = times[0];
          r.vendor = times[1];
          r.hal_bf16 = times[2];
        } else {
          r.vendor_name = "hal gemm bf16";
          const auto times = measure_alternating(s, {fp8, bf16});
          r.hal = times[0];
          r.vendor = times[1];
        }
        break;
      }
      case BenchOp::gemm_fp8_grouped: {
        // DeepGEMM's contiguous MoE layout: G experts of `rows` rows each;
        // the baseline is hal's bf16 GEMM of all G * rows rows against one
        // expert's weight (the same FLOPs in one call).
        const std::int64_t g = d(0), rows = d(1), n = d(2), k = d(3), m = g * rows, kb = (k + 127) / 128;
        Tensor a = o.make(s, c.dtype, {m, k}, 1), b = o.make(s, c.dtype, {g, n, k}, 2);
        Tensor sa = m_major(o.make(s, DType::f32, {kb, m}, 3)), sb = o.make(s, DType::f32, {g, (n + 127) / 128, kb}, 4);
        Tensor offsets = o.make(s, DType::i32, {g + 1}, 0, false);
        std::vector<std::int32_t> host_offsets;
        for (std::int64_t q = 0; q <= g; ++q) host_offsets.push_back(static_cast<std::int32_t>(q * rows));
        s.upload(offsets, host_offsets.data());
        Tensor y = o.make(s, DType::bf16, {m, n}, 5, false);
        Tensor a16 = o.make(s, DType::bf16, {m, k}, 1), b16 = o.make(s, DType::bf16, {n, k}, 2);
        Tensor y16 = o.make(s, DType::bf16, {m, n}, 5, false);
        ops::GemmOptions nt;
        nt.trans_b = true;
        r.vendor_name = "hal gemm bf16 (one expert, all rows)";
        const auto times = measure_alternating(
            s, {[&] { ops::gemm_fp8_grouped(s, a, sa, b, sb, offsets, y); }, [&] { ops::gemm(s, a16, b16, y16, nt); }});
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
      case BenchOp::attention_backward:
      case BenchOp::attention_backward_causal: {
        // The forward runs once, untimed, for y and lse; the backward is timed.
        const Shape shape{d(0), d(1), d(2), d(3)};
        Tensor q = o.make(s, c.dtype, shape, 1), k = o.make(s, c.dtype, shape, 2), v = o.make(s, c.dtype, shape, 3);
        Tensor dy = o.make(s, c.dtype, shape, 4), y = o.make(s, c.dtype, shape, 5, false);
        Tensor lse = o.make(s, DType::f32, {d(0), d(1), d(2)}, 6, false);
        Tensor dq = o.make(s, c.dtype, shape, 7, false), dk = o.make(s, c.dtype, shape, 8, false);
        Tensor dv = o.make(s, c.dtype, shape, 9, false);
        const bool causal = c.op == BenchOp::attention_backward_causal;
        ops::run(s, AttentionCall{q, k, v, y, 0.0f, causal, lse});
        r.hal = measure(s, [&] { ops::attention_backward(s, q, k, v, y, dy, lse, dq, dk, dv, {0.0f, causal}); });
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
            case BenchOp::cross_entropy: {
              // Targets spread over the vocabulary (valid ids), a mean loss and dlogits in one pass.
              Tensor targets = o.make(s, DType::i32, {rows}, 0, false);
              std::vector<std::int32_t> ids(static_cast<std::size_t>(rows));
              for (std::size_t i = 0; i < ids.size(); ++i)
                ids[i] = static_cast<std::int32_t>((i * 7919u) % static_cast<std::size_t>(d(1)));
              s.upload(targets, ids.data());
              s.synchronize();
              Tensor loss = o.make(s, DType::f32, {}, 0, false);
              op = [&s, x, targets, loss, y] { ops::cross_entropy(s, x, targets, loss, y); };
              break;
            }
            case BenchOp::rmsnorm_backward:
            case BenchOp::layernorm_backward: {
              Tensor w = o.make(s, c.dtype, {d(1)}, 5), dy = o.make(s, c.dtype, shape, 6);
              Tensor dw = o.make(s, c.dtype, {d(1)}, 7, false), db = o.make(s, c.dtype, {d(1)}, 8, false);
              if (c.op == BenchOp::rmsnorm_backward)
                op = [&s, x, w, dy, y, dw] { ops::rmsnorm_backward(s, x, w, dy, y, dw); };
              else
                op = [&s, x, w, dy, y, dw, db] { ops::layernorm_backward(s, x, w, dy, y, dw, db); };
              break;
            }
            case BenchOp::adamw: {
              // x is the parameter, y its gradient; 16-bit parameters step an f32 master.
              ops::fill_random(s, y, {9, RandomDistribution::normal, 0.0f, 1e-3f});
              Tensor m = o.make(s, DType::f32, shape, 10), v = o.make(s, DType::f32, shape, 11, false);
              ops::fill_random(s, v, {12, RandomDistribution::uniform, 0.0f, 1e-6f});  // v >= 0
              ops::AdamwOptions opt;
              if (c.dtype != DType::f32) opt.master = o.make(s, DType::f32, shape, 13);
              op = [&s, x, y, m, v, opt] { ops::adamw_step(s, x, y, m, v, opt); };
              break;
            }
            default: break;
          }
          return RowsCase{x, op};
        };
        const RowsCase whole = build(d(0));
        // The copy ceiling is timed on as many bytes as the case reads.
        const std::vector<Tensor> reads = c.op == BenchOp::rmsnorm_backward || c.op == BenchOp::layernorm_backward
                                              ? std::vector<Tensor>{whole.x, whole.x}
                                          : c.op == BenchOp::adamw ? std::vector<Tensor>(c.dtype == DType::f32 ? 4 : 7, whole.x)
                                                                   : std::vector<Tensor>{whole.x};
        measure_memory_bound(s, r, whole.fn, reads);
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
