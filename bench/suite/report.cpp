#include "bench/suite/report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ostream>

#include "hal/device.h"
#include "hal/io/json_writer.h"

namespace hal::bench {

namespace {

std::string unit(const BenchResult& r) { return r.bench_case.compute_bound() ? "TFLOP/s" : "GB/s"; }

}  // namespace

void print_table(std::ostream& out, const RunInfo& info, const std::vector<BenchResult>& results) {
  fmt::print(out, "device {} ({}, {}); vendor baseline: {}\n", info.device_name, info.device_model, info.device_arch,
             info.vendor_status);
  if (!info.kernels.empty()) fmt::print(out, "kernels: {}\n", kernels_text(info.kernels));
  fmt::print(out, "copy ceiling at start-up {:.1f} GB/s ({})\n", info.ceilings.copy_gbps, info.ceilings.copy_source);
  fmt::print(out, "ceil: memory-bound cases, max(device copy, hal copy) of the inputs' bytes timed in turn with the case; "
                  "GEMM, the best vendor rate of the run; hal and vendor GEMM samples alternate too\n");
  fmt::print(out, "cache: memory-bound row ops on the CPU, GB/s of the same op on a working set the caches keep "
                  "(below ceil: compute-bound here)\n");
  fmt::print(out, "{:<40} {:>10} {:>10} {:>9} {:>10} {:>8} {:>8} {:>8} {:>8}\n", "case", "hal ms", "rate", "unit", "vendor",
             "hal/vnd", "ceil", "%ceil", "cache");
  for (const BenchResult& r : results) {
    if (!r.error.empty() || !r.hal) {
      fmt::print(out, "{:<40} error: {}\n", r.bench_case.name(), r.error);
      continue;
    }
    const std::string vendor = r.vendor ? fmt::format("{:.2f}", r.vendor_rate()) : "-";
    const std::string ratio = r.vendor ? fmt::format("{:.2f}", r.hal_rate() / r.vendor_rate()) : "-";
    const std::string ceiling = r.ceiling > 0 ? fmt::format("{:.2f}", r.ceiling) : "-";
    const std::string cache = r.in_cache_rate > 0 ? fmt::format("{:.2f}", r.in_cache_rate) : "-";
    fmt::print(out, "{:<40} {:>10.3f} {:>10.2f} {:>9} {:>10} {:>8} {:>8} {:>7.0f}% {:>8}\n", r.bench_case.name(),
               r.hal->median_ms, r.hal_rate(), unit(r), vendor, ratio, ceiling, 100.0 * r.fraction_of_ceiling(), cache);
    if (r.hal_bf16)
      fmt::print(out, "{:<40} {:>10.3f} {:>10.2f} {:>9}   (hal gemm bf16, same shape, timed in turn)\n", "",
                 r.hal_bf16->median_ms, r.hal_bf16_rate(), unit(r));
  }
}

void write_json(std::ostream& out, const RunInfo& info, const std::vector<BenchResult>& results) {
  fmt::print(out, "{{\n  \"device\": \"{}\",\n  \"model\": \"{}\",\n  \"arch\": \"{}\",\n  \"vendor\": \"{}\",\n",
             io::json_escape(info.device_name), io::json_escape(info.device_model), io::json_escape(info.device_arch),
             io::json_escape(info.vendor_status));
  fmt::print(out, "  \"commit\": \"{}\",\n  \"date\": \"{}\",\n", io::json_escape(info.commit), io::json_escape(info.date));
  fmt::print(out, "  \"kernels\": {},\n", io::json_string_object(info.kernels));
  fmt::print(out, "  \"ceilings\": {{\"copy_gbps\": {:.3f}, \"copy_source\": \"{}\", \"nominal_bf16_tflops\": {:.3f}, "
                  "\"nominal_fp32_tflops\": {:.3f}}},\n",
             info.ceilings.copy_gbps, io::json_escape(info.ceilings.copy_source), info.ceilings.nominal_bf16_tflops,
             info.ceilings.nominal_fp32_tflops);
  fmt::print(out, "  \"results\": [\n");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const BenchResult& r = results[i];
    const BenchCase& c = r.bench_case;
    fmt::print(out, "    {{\"case\": \"{}\", \"op\": \"{}\", \"dtype\": \"{}\", \"dims\": [{}], \"flops\": {:.6g}, "
                    "\"bytes\": {:.6g}, \"unit\": \"{}\"",
               io::json_escape(c.name()), bench_op_name(c.op), dtype_name(c.dtype), fmt::join(c.dims, ", "), c.flops(),
               c.bytes(), unit(r));
    if (r.hal)
      fmt::print(out, ", \"hal\": {{\"median_ms\": {:.6g}, \"min_ms\": {:.6g}, \"max_ms\": {:.6g}, \"samples\": {}, "
                      "\"rate\": {:.6g}}}",
                 r.hal->median_ms, r.hal->min_ms, r.hal->max_ms, r.hal->samples, r.hal_rate());
    if (r.vendor)
      fmt::print(out, ", \"vendor\": {{\"name\": \"{}\", \"median_ms\": {:.6g}, \"samples\": {}, \"rate\": {:.6g}, "
                      "\"hal_over_vendor\": {:.4f}}}",
                 io::json_escape(r.vendor_name), r.vendor->median_ms, r.vendor->samples, r.vendor_rate(),
                 r.vendor_rate() > 0 ? r.hal_rate() / r.vendor_rate() : 0.0);
    fmt::print(out, ", \"ceiling\": {:.6g}, \"ceiling_source\": \"{}\", \"fraction_of_ceiling\": {:.4f}", r.ceiling,
               io::json_escape(r.ceiling_source), r.fraction_of_ceiling());
    if (r.in_cache_rate > 0) fmt::print(out, ", \"in_cache_rate\": {:.6g}", r.in_cache_rate);
    if (r.hal_bf16)
      fmt::print(out, ", \"hal_bf16\": {{\"median_ms\": {:.6g}, \"samples\": {}, \"rate\": {:.6g}}}", r.hal_bf16->median_ms,
                 r.hal_bf16->samples, r.hal_bf16_rate());
    if (!r.error.empty()) fmt::print(out, ", \"error\": \"{}\"", io::json_escape(r.error));
    fmt::print(out, "}}{}\n", i + 1 < results.size() ? "," : "");
  }
  fmt::print(out, "  ]\n}}\n");
}

void write_csv(std::ostream& out, const std::vector<BenchResult>& results) {
  fmt::print(out, "case,op,dtype,dims,unit,hal_median_ms,hal_rate,vendor,vendor_median_ms,vendor_rate,hal_over_vendor,"
                  "ceiling,fraction_of_ceiling,error,in_cache_rate\n");
  for (const BenchResult& r : results) {
    const BenchCase& c = r.bench_case;
    fmt::print(out, "\"{}\",{},{},{},{},{},{},\"{}\",{},{},{},{},{},\"{}\",{}\n", c.name(), bench_op_name(c.op),
               dtype_name(c.dtype), fmt::join(c.dims, "x"), unit(r), r.hal ? r.hal->median_ms : 0, r.hal_rate(),
               r.vendor_name, r.vendor ? r.vendor->median_ms : 0, r.vendor_rate(),
               r.vendor && r.vendor_rate() > 0 ? r.hal_rate() / r.vendor_rate() : 0, r.ceiling,
               r.fraction_of_ceiling(), r.error, r.in_cache_rate);
  }
}

}  // namespace hal::bench
