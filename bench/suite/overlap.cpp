#include "bench/suite/overlap.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include "hal/buffer.h"
#include "hal/error.h"
#include "hal/partition.h"
#include "ops/ops.h"

namespace hal::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Row {
  int set_aside = 0;
  int compute_units = 0;
  double gemm_gflops = 0;
  double copy_gbps = 0;  // the stand-in collective's rate meanwhile
};

struct Gemm {
  std::int64_t n;
  DType dtype;
  Buffer a, b, c;
  Gemm(Device& d, std::int64_t size, DType t)
      : n(size),
        dtype(t),
        a(Buffer::for_tensor(d, t, Shape{size, size})),
        b(Buffer::for_tensor(d, t, Shape{size, size})),
        c(Buffer::for_tensor(d, t, Shape{size, size})) {
    Stream s(d);  // inputs in [0, 1): no NaN or subnormal slows the timing
    ops::fill_random(s, Tensor::contiguous(a.data(), &d, t, Shape{size, size}));
    ops::fill_random(s, Tensor::contiguous(b.data(), &d, t, Shape{size, size}));
    s.synchronize();
  }
  void run(Stream& s) {
    Device& d = s.device();
    ops::gemm(s, Tensor::contiguous(a.data(), &d, dtype, Shape{n, n}),
              Tensor::contiguous(b.data(), &d, dtype, Shape{n, n}),
              Tensor::contiguous(c.data(), &d, dtype, Shape{n, n}));
  }
  double flops() const { return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n); }
};

// Median GFLOP/s of at least `reps` GEMMs on `s`, run for at least `min_s`
// seconds (so the copy beside it completes many passes).
double gemm_rate(Gemm& g, Stream& s, int reps, double min_s) {
  g.run(s);  // warm-up (packing buffers, page faults)
  s.synchronize();
  std::vector<double> rates;
  const auto start = Clock::now();
  for (int i = 0; i < reps || std::chrono::duration<double>(Clock::now() - start).count() < min_s; ++i) {
    const auto t0 = Clock::now();
    g.run(s);
    s.synchronize();
    const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
    rates.push_back(g.flops() / sec * 1e-9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// Copies `bytes` back and forth on `s` until `stop`; returns GB/s (read + written).
double copy_until(Device& d, Stream& s, std::size_t bytes, std::atomic<bool>& ready, const std::atomic<bool>& stop) {
  const std::int64_t n = static_cast<std::int64_t>(bytes / sizeof(float));
  Buffer x = Buffer::for_tensor(d, DType::f32, Shape{n}), y = Buffer::for_tensor(d, DType::f32, Shape{n});
  const Tensor tx = Tensor::contiguous(x.data(), &d, DType::f32, Shape{n});
  const Tensor ty = Tensor::contiguous(y.data(), &d, DType::f32, Shape{n});
  ops::copy(s, tx, ty);  // warm-up (first touch of both buffers)
  s.synchronize();
  ready = true;
  std::int64_t copies = 0;
  const auto t0 = Clock::now();
  while (!stop.load(std::memory_order_relaxed)) {
    ops::copy(s, copies % 2 ? ty : tx, copies % 2 ? tx : ty);
    s.synchronize();
    ++copies;
  }
  const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  return sec > 0 ? 2.0 * static_cast<double>(bytes) * static_cast<double>(copies) / sec * 1e-9 : 0;
}

Row measure(Device& d, Gemm& g, int reps, double min_s, std::size_t copy_bytes, int set_aside, int units) {
  Row row;
  row.set_aside = set_aside;
  row.compute_units = units - set_aside;
  // 0 set aside: both share the whole device (two plain streams).
  std::vector<Partition> parts;
  if (set_aside > 0) parts = partition(d, {units - set_aside, set_aside});
  Stream compute = set_aside > 0 ? parts[0].stream() : Stream(d);
  Stream comm = set_aside > 0 ? parts[1].stream() : Stream(d);
  std::atomic<bool> ready{false}, stop{false};
  std::thread copier([&] { row.copy_gbps = copy_until(d, comm, copy_bytes, ready, stop); });
  while (!ready) std::this_thread::yield();
  row.gemm_gflops = gemm_rate(g, compute, reps, min_s);
  stop = true;
  copier.join();
  return row;
}

}  // namespace

int run_overlap_bench(Device& d, bool quick, const std::string& json_path) {
  const PartitionSupport support = d.partition_support();
  if (!support.supported) {
    fmt::print(stderr, "hal bench: skipped: --op overlap needs partitions on {}: {}\n", d.name(), support.reason);
    return 77;
  }
  const int units = support.max_units;
  if (units < 2) {
    fmt::print(stderr, "hal bench: skipped: --op overlap needs 2 or more {} ({} has {})\n", support.unit, d.name(), units);
    return 77;
  }
  // CPU: an f32 GEMM and a copy beyond a core's L2/L3 share. GPU: the bf16
  // GEMM (the persistent sm_90a kernel on H100/H200, whose grid is the
  // partition's SM count) and a copy well beyond the L2 (50 MiB on H100,
  // 256 MiB of Infinity Cache on MI300X): both bandwidth-bound stand-ins.
  const bool gpu = !d.host_accessible();
  const std::int64_t n = gpu ? (quick ? 2048 : 8192) : (quick ? 256 : 768);
  const DType dtype = gpu ? DType::bf16 : DType::f32;
  const int reps = quick ? 3 : 7;
  const double min_s = quick ? 0.3 : 1.5;
  const std::size_t copy_bytes = gpu ? std::size_t{512} << 20 : std::size_t{32} << 20;
  Gemm g(d, n, dtype);
  Stream whole(d);
  const double alone = gemm_rate(g, whole, reps, min_s);
  // Set aside 0, then granularity steps up to a quarter of the units (at least one step).
  std::vector<int> aside = {0};
  for (int k = support.granularity; k <= std::max(support.granularity, units / 4) && k < units;
       k += std::max(support.granularity, units / 16 / support.granularity * support.granularity))
    aside.push_back(k);
  std::vector<Row> rows;
  for (int k : aside) rows.push_back(measure(d, g, reps, min_s, copy_bytes, k, units));

  fmt::print("overlap on {}: {} gemm {}x{}x{} on the compute partition, a {} MiB copy loop (collective stand-in) "
             "on the communication partition\n",
             d.name(), dtype_name(dtype), n, n, n, copy_bytes >> 20);
  fmt::print("gemm alone on all {} {}: {:.1f} GFLOP/s\n", units, support.unit, alone);
  fmt::print("{:>10} {:>14} {:>14} {:>10} {:>12}\n", "set aside", "compute " + support.unit, "gemm GFLOP/s",
             "vs alone", "copy GB/s");
  for (const Row& r : rows)
    fmt::print("{:>10} {:>14} {:>14.1f} {:>10.2f} {:>12.1f}\n", r.set_aside, r.compute_units, r.gemm_gflops,
               r.gemm_gflops / alone, r.copy_gbps);
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    if (!f) throw Error(ErrorCode::io_error, fmt::format("cannot write '{}'", json_path));
    f << fmt::format("{{\"device\": \"{}\", \"unit\": \"{}\", \"gemm_n\": {}, \"gemm_alone_gflops\": {:.3f}, \"rows\": [",
                     d.name(), support.unit, n, alone);
    for (std::size_t i = 0; i < rows.size(); ++i)
      f << fmt::format("{}{{\"set_aside\": {}, \"compute_units\": {}, \"gemm_gflops\": {:.3f}, \"copy_gbps\": {:.3f}}}",
                       i ? ", " : "", rows[i].set_aside, rows[i].compute_units, rows[i].gemm_gflops, rows[i].copy_gbps);
    f << "]}\n";
  }
  return 0;
}

}  // namespace hal::bench
