#include "bench/suite/bench_cli.h"
#include "bench/suite/overlap.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "bench/suite/report.h"
#include "bench/suite/runner.h"
#include "hal/error.h"
#include "hal/exit_status.h"
#include "hal/io/output_file.h"
#include "hal/registry.h"

namespace hal::bench {

namespace {

constexpr const char* kUsage =
    "usage: hal bench [--device DEV] [--op OP] [--dtype DT] [--shape AxBxC] [--json FILE] [--csv FILE]\n"
    "                 [--quick] [--no-vendor]\n"
    "  Times hal's ops (median of repeated runs after warm-up; device events and an L2 flush on GPUs)\n"
    "  beside the vendor library (OpenBLAS on the CPU, cuBLAS on NVIDIA) and the device's copy ceiling.\n"
    "  OP: gemm attention attention_causal attention_decode softmax rmsnorm layernorm add silu gelu cast copy\n"
    "      attention_backward attention_backward_causal\n"
    "      cross_entropy rmsnorm_backward layernorm_backward adamw (training)\n"
    "  --shape: gemm MxNxK; attention(_backward) BxSxHxD; attention_decode BxKEYSxHQxHKVxD (one query per\n"
    "           sequence); others ROWSxCOLS (needs --op and --dtype)\n"
    "  --op gemm_fp8 (MxNxK), gemm_fp8_grouped (GROUPSxROWSxNxK), --dtype f8e4m3 (or another fp8):\n"
    "           beside hal's bf16 GEMM, and on NVIDIA cuBLASLt's per-tensor FP8 GEMM; the GPU fp8\n"
    "           kernels need HAL_GPU_UNVERIFIED=1 (docs/performance.md)\n"
    "  --op gemm_decode (MxNxK, weights [N, K]): --dtype bf16/f16 beside cuBLAS (op T); --dtype f8e4m3\n"
    "           as gemm_fp8 (its split-K fp8 decode kernel with HAL_GPU_UNVERIFIED=1)\n"
    "  --quick: fewer samples (for smoke runs)\n"
    "  --op overlap: a gemm on a compute partition while a copy loop (a collective's stand-in) runs on\n"
    "           the units set aside, against the gemm alone (bench/suite/overlap.h)\n";

std::vector<std::int64_t> parse_dims(const std::string& s) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t x = s.find('x', pos);
    const std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v <= 0)
      throw_invalid_argument("hal bench", "--shape", "positive sizes joined by 'x', e.g. 4096x4096x4096", s);
    out.push_back(v);
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return out;
}

void progress(std::size_t done, std::size_t total, const std::string& what) {
  if (!isatty(STDERR_FILENO)) {
    fmt::print(stderr, "[{}/{}] {}\n", done, total, what);
    return;
  }
  const int width = 30;
  const int filled = total ? static_cast<int>(width * done / total) : width;
  fmt::print(stderr, "\r[{}{}] {}/{} {:<40}", std::string(static_cast<std::size_t>(filled), '#'),
             std::string(static_cast<std::size_t>(width - filled), '.'), done, total, what.substr(0, 40));
  if (done == total) fmt::print(stderr, "\n");
}

}  // namespace

int bench_main(int argc, char** argv) {
  std::string device_name, op_filter, dtype_filter, shape, json_path, csv_path;
  bool quick = false, vendor = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw_invalid_argument("hal bench", a, "a value after it", "nothing");
      return argv[++i];
    };
    if (a == "--device") device_name = value();
    else if (a == "--op") op_filter = value();
    else if (a == "--dtype") dtype_filter = value();
    else if (a == "--shape") shape = value();
    else if (a == "--json") json_path = value();
    else if (a == "--csv") csv_path = value();
    else if (a == "--quick") quick = true;
    else if (a == "--no-vendor") vendor = false;
    else if (a == "--help" || a == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    } else {
      fmt::print(stderr, "hal bench: unknown argument '{}'\n{}", a, kUsage);
      return 2;
    }
  }
  if (op_filter == "overlap") {
    Device& dev = device_name.empty() ? default_device() : device(device_name);
    return run_overlap_bench(dev, quick, json_path);
  }
  BenchOp op_choice{};
  if (!op_filter.empty() && !parse_bench_op(op_filter, op_choice))
    throw_invalid_argument("hal bench", "--op", "one of the ops listed in --help", op_filter);
  if (!dtype_filter.empty() && !parse_dtype(dtype_filter))
    throw_invalid_argument("hal bench", "--dtype", "a dtype name such as bf16", dtype_filter);
  // A GPU backend that is built but has no usable device here (no driver, no
  // GPU): say why and exit 77, the skip code ctest and scripts understand.
  const std::string backend_name = device_name.substr(0, device_name.find(':'));
  for (const BackendStatus& b : backends())
    if (!device_name.empty() && b.name == backend_name && !b.available) {
      fmt::print(stderr, "hal bench: skipped: {} is not available here ({})\n", b.name, b.reason);
      return kExitSkipped;
    }
  Device& dev = device_name.empty() ? default_device() : device(device_name);

  std::vector<BenchCase> cases;
  if (!shape.empty()) {
    BenchOp op;
    if (op_filter.empty() || !parse_bench_op(op_filter, op))
      throw_invalid_argument("hal bench", "--op", "one of the ops listed in --help (with --shape)", op_filter);
    const auto t = parse_dtype(dtype_filter.empty() ? "f32" : dtype_filter);
    if (!t) throw_invalid_argument("hal bench", "--dtype", "a dtype name such as bf16", dtype_filter);
    const std::vector<std::int64_t> dims = parse_dims(shape);
    const std::size_t want = BenchCase::dims_of(op);
    if (dims.size() != want)
      throw_invalid_argument("hal bench", "--shape", fmt::format("{} sizes for {}", want, op_filter), shape);
    cases.push_back({op, *t, dims});
  } else {
    for (const BenchCase& c : default_suite(dev.info().backend)) {
      if (!op_filter.empty() && bench_op_name(c.op) != op_filter) continue;
      if (!dtype_filter.empty() && dtype_name(c.dtype) != dtype_filter) continue;
      cases.push_back(c);
    }
    if (cases.empty())
      throw_invalid_argument("hal bench", "--op/--dtype", fmt::format("a combination in the {} suite", dev.info().backend),
                             fmt::format("--op '{}' --dtype '{}'", op_filter, dtype_filter));
  }

  RunnerOptions options;
  options.with_vendor = vendor;
  if (quick) {
    options.min_samples = 3;
    options.max_samples = 5;
    options.min_time_ms = 0;
    options.warmup = 1;
  }
  Runner runner(dev, options);
  std::vector<BenchResult> results;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    progress(i, cases.size(), cases[i].name());
    results.push_back(runner.run(cases[i]));
  }
  progress(cases.size(), cases.size(), "done");
  runner.finalize(results);

  RunInfo info;
  info.device_name = dev.name();
  info.device_model = dev.info().model;
  info.device_arch = dev.info().arch;
  info.kernels = dev.info().kernels;
  info.vendor_status = runner.vendor_status();
  info.ceilings = runner.ceilings();
  if (const char* c = std::getenv("HAL_COMMIT")) info.commit = c;
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  info.date = buf;

  print_table(std::cout, info, results);
  // Written whole and checked to the close: a full disk is an I/O error.
  if (!json_path.empty()) {
    std::ostringstream f;
    write_json(f, info, results);
    io::write_text_file(json_path, f.str());
  }
  if (!csv_path.empty()) {
    std::ostringstream f;
    write_csv(f, results);
    io::write_text_file(csv_path, f.str());
  }
  for (const BenchResult& r : results)
    if (!r.error.empty()) return 1;
  return 0;
}

}  // namespace hal::bench
