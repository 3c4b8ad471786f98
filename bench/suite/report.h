#pragma once
// Writes benchmark results as a table (stdout), JSON and CSV.
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "bench/suite/runner.h"

namespace hal::bench {

struct RunInfo {
  std::string device_name, device_model, device_arch, vendor_status, commit, date;
  std::vector<std::pair<std::string, std::string>> kernels;  // DeviceInfo::kernels
  Ceilings ceilings;
};

void print_table(std::ostream& out, const RunInfo& info, const std::vector<BenchResult>& results);
void write_json(std::ostream& out, const RunInfo& info, const std::vector<BenchResult>& results);
void write_csv(std::ostream& out, const std::vector<BenchResult>& results);

}  // namespace hal::bench
