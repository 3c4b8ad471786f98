// `hal devices [--json]`: every device with its properties and every backend
// compiled in, with the reason when it cannot run here.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "comm/communicator.h"
#include "hal/registry.h"
#include "tools/cli.h"
#include "hal/io/json_writer.h"

namespace hal::tools {

namespace {

constexpr const char* kHelp =
    "usage: hal devices [--json]\n"
    "\n"
    "Lists every available device with its properties (name, backend, model,\n"
    "arch, compute units, memory, warp size, L2, clock, peak rates, features,\n"
    "the kernels chosen at run time, such as the CPU GEMM micro-kernel per dtype)\n"
    "and every backend compiled in, with the reason when it is unavailable.\n"
    "\n"
    "Also: each device's partitions (hal/partition.h: unit, granularity) and the\n"
    "collective engines (MPI, NCCL, RCCL) with their versions or why not.\n"
    "\n"
    "  --json   machine-readable output: {\"devices\": [...], \"backends\": [...],\n"
    "           \"partitions\": [...], \"collective_engines\": [...]}\n";

std::string partition_text(const PartitionSupport& p) {
  if (!p.supported) return "no (" + p.reason + ")";
  return fmt::format("yes, {} {} in steps of {} ({})", p.max_units, p.unit, p.granularity, p.reason);
}

std::string device_json(const DeviceInfo& d) {
  std::string features;
  for (const std::string& f : d.features) features += (features.empty() ? "" : ", ") + io::json_string(f);
  return fmt::format(
      "    {{\"name\": {}, \"backend\": {}, \"index\": {}, \"model\": {}, \"arch\": {}, \"compute_units\": {}, "
      "\"memory_bytes\": {}, \"warp_size\": {}, \"l2_bytes\": {}, \"clock_mhz\": {}, \"peak_fp32_tflops\": {}, "
      "\"peak_bf16_tflops\": {}, \"peak_bandwidth_gbps\": {}, \"features\": [{}], \"kernels\": {}}}",
      io::json_string(d.name), io::json_string(d.backend), d.index, io::json_string(d.model), io::json_string(d.arch),
      d.compute_units, d.memory_bytes, d.warp_size, d.l2_bytes, d.clock_mhz, io::json_number(d.peak_fp32_tflops),
      io::json_number(d.peak_bf16_tflops), io::json_number(d.peak_bandwidth_gbps), features,
      io::json_string_object(d.kernels));
}

void print_json() {
  std::string out = "{\n  \"devices\": [\n";
  const auto devs = devices();
  for (std::size_t i = 0; i < devs.size(); ++i)
    out += device_json(devs[i]->info()) + (i + 1 < devs.size() ? ",\n" : "\n");
  out += "  ],\n  \"backends\": [\n";
  const auto bs = backends();
  for (std::size_t i = 0; i < bs.size(); ++i) {
    out += fmt::format("    {{\"name\": {}, \"available\": {}, \"device_count\": {}, \"reason\": {}}}{}",
                       io::json_string(bs[i].name), bs[i].available ? "true" : "false", bs[i].device_count,
                       io::json_string(bs[i].reason), i + 1 < bs.size() ? ",\n" : "\n");
  }
  out += "  ],\n  \"partitions\": [\n";
  for (std::size_t i = 0; i < devs.size(); ++i) {
    const PartitionSupport p = devs[i]->partition_support();
    out += fmt::format("    {{\"device\": {}, \"supported\": {}, \"unit\": {}, \"granularity\": {}, \"max_units\": {}, "
                       "\"reason\": {}}}{}",
                       io::json_string(devs[i]->name()), p.supported ? "true" : "false", io::json_string(p.unit),
                       p.granularity, p.max_units, io::json_string(p.reason), i + 1 < devs.size() ? ",\n" : "\n");
  }
  out += "  ],\n  \"collective_engines\": [\n";
  const auto engines = comm::engine_status();
  for (std::size_t i = 0; i < engines.size(); ++i)
    out += fmt::format("    {{\"name\": {}, \"serves\": {}, \"available\": {}, \"detail\": {}}}{}",
                       io::json_string(engines[i].name), io::json_string(engines[i].serves),
                       engines[i].available ? "true" : "false", io::json_string(engines[i].detail),
                       i + 1 < engines.size() ? ",\n" : "\n");
  out += "  ]\n}\n";
  std::fputs(out.c_str(), stdout);
}

// DeviceInfo's zero means "not known": say so rather than print a rate of 0.
template <class V> std::string or_unknown(V value, const char* unit) {
  return value > 0 ? fmt::format("{:.4g} {}", static_cast<double>(value), unit) : std::string("unknown");
}

void print_text() {
  for (Device* dev : devices()) {
    const DeviceInfo& d = dev->info();
    fmt::print("{}  ({} device {})\n", d.name, d.backend, d.index);
    fmt::print("  model:          {}\n", d.model.empty() ? "unknown" : d.model);
    fmt::print("  arch:           {}\n", d.arch.empty() ? "unknown" : d.arch);
    fmt::print("  compute units:  {}\n", d.compute_units);
    fmt::print("  memory:         {:.2f} GiB ({} bytes)\n", static_cast<double>(d.memory_bytes) / (1u << 30),
               d.memory_bytes);
    fmt::print("  warp size:      {}\n", d.warp_size);
    fmt::print("  L2:             {} bytes\n", d.l2_bytes);
    fmt::print("  clock:          {}\n", or_unknown(d.clock_mhz, "MHz"));
    fmt::print("  peak fp32:      {}\n", or_unknown(d.peak_fp32_tflops, "TFLOP/s (nominal)"));
    fmt::print("  peak bf16:      {}\n", or_unknown(d.peak_bf16_tflops, "TFLOP/s (nominal)"));
    fmt::print("  peak bandwidth: {}\n", or_unknown(d.peak_bandwidth_gbps, "GB/s (nominal)"));
    fmt::print("  features:       {}\n", d.features.empty() ? "none" : fmt::format("{}", fmt::join(d.features, " ")));
    if (!d.kernels.empty()) fmt::print("  kernels:        {}\n", kernels_text(d.kernels));
    fmt::print("  partitions:     {}\n", partition_text(dev->partition_support()));
  }
  fmt::print("backends:\n");
  for (const BackendStatus& b : backends()) {
    if (b.available)
      fmt::print("  {:<6} available, {} device(s)\n", b.name, b.device_count);
    else
      fmt::print("  {:<6} unavailable: {}\n", b.name, b.reason);
  }
  fmt::print("collective engines:\n");
  for (const comm::EngineStatus& e : comm::engine_status())
    fmt::print("  {:<6} for {:<5} {}: {}\n", e.name, e.serves, e.available ? "available" : "unavailable", e.detail);
}

}  // namespace

int devices_main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (is_help_flag(arg)) {
      std::fputs(kHelp, stdout);
      return kExitOk;
    }
    if (arg == "--json")
      json = true;
    else
      throw UsageError(fmt::format("devices: unknown option '{}' (see hal devices --help)", arg));
  }
  if (json)
    print_json();
  else
    print_text();
  return kExitOk;
}

}  // namespace hal::tools
