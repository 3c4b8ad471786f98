#include "backends/gpu/partition_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/gpu/unverified.h"
#include "hal/error.h"

namespace hal::gpu {
namespace {

// The first missing entry point's name, or "".
std::string first_missing(const EntryPoints& entry_points) {
  for (const auto& [name, fn] : entry_points)
    if (fn == nullptr) return name;
  return {};
}

std::string version_str(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

}  // namespace

int green_context_granularity(int cc_major) {
  if (cc_major >= 9) return 8;
  if (cc_major == 8) return 4;
  return 0;
}

PartitionSupport green_context_support(const EntryPoints& entry_points, int driver_version, int cc_major,
                                       int sm_count) {
  PartitionSupport s;
  s.unit = "SMs";
  const std::string missing = first_missing(entry_points);
  if (!missing.empty()) {
    s.reason = fmt::format("green contexts need CUDA driver 12.4+: this driver ({}) lacks {}", version_str(driver_version),
                           missing);
    return s;
  }
  const int granularity = green_context_granularity(cc_major);
  if (granularity == 0) {
    s.reason = fmt::format("green contexts need sm_80 or later (this device is sm_{}x)", cc_major);
    return s;
  }
  s.supported = true;
  s.granularity = granularity;
  s.max_units = sm_count;
  s.reason = fmt::format("green contexts (driver {}), SM groups in multiples of {}", version_str(driver_version),
                         granularity);
  return s;
}

PartitionSupport unless_unverified_enabled(PartitionSupport s) {
  if (!s.supported || unverified_kernels_enabled()) return s;
  s.supported = false;
  s.reason = fmt::format("{}: compiled but never run on a GPU, set {}=1 to use them", s.reason, kUnverifiedKernelsEnv);
  return s;
}

int xcd_count(std::string_view gcn_arch, int compute_units) {
  const bool multi_xcd = gcn_arch.rfind("gfx94", 0) == 0 || gcn_arch.rfind("gfx95", 0) == 0;
  if (multi_xcd && compute_units > 0 && compute_units % 38 == 0) return compute_units / 38;
  return 1;
}

PartitionSupport cu_mask_support(const EntryPoints& entry_points, std::string_view gcn_arch, int compute_units) {
  PartitionSupport s;
  s.unit = "CUs";
  const std::string missing = first_missing(entry_points);
  if (!missing.empty()) {
    s.reason = fmt::format("CU-masked streams: the HIP runtime lacks {}", missing);
    return s;
  }
  const int xcds = xcd_count(gcn_arch, compute_units);
  s.supported = true;
  s.granularity = xcds;
  s.max_units = compute_units;
  s.reason = xcds > 1 ? fmt::format("CU-masked streams, each partition spread evenly over the {} XCDs", xcds)
                      : std::string("CU-masked streams");
  return s;
}

std::vector<std::vector<std::uint32_t>> build_cu_masks(const std::vector<int>& units, int compute_units, int xcds) {
  const std::string given = fmt::format("[{}]", fmt::join(units, ", "));
  if (xcds <= 0 || compute_units <= 0 || compute_units % xcds != 0)
    throw_invalid_argument("partition", "xcds", fmt::format("a positive divisor of the {} CUs", compute_units),
                           std::to_string(xcds));
  if (units.empty()) throw_invalid_argument("partition", "units", "at least one partition", given);
  long long total = 0;
  for (int u : units) {
    if (u <= 0 || u % xcds != 0)
      throw_invalid_argument("partition", "units",
                             fmt::format("positive CU counts, multiples of {} (one CU on each XCD)", xcds), given);
    total += u;
  }
  if (total > compute_units)
    throw_invalid_argument("partition", "units", fmt::format("at most {} CUs in all", compute_units),
                           fmt::format("{} (sum {})", given, total));
  const std::size_t words = static_cast<std::size_t>((compute_units + 31) / 32);
  std::vector<std::vector<std::uint32_t>> masks;
  int first = 0;
  for (int u : units) {
    std::vector<std::uint32_t> m(words, 0u);
    for (int bit = first; bit < first + u; ++bit) m[static_cast<std::size_t>(bit / 32)] |= 1u << (bit % 32);
    masks.push_back(std::move(m));
    first += u;
  }
  return masks;
}

int cus_on_xcd(const std::vector<std::uint32_t>& mask, int xcds, int xcd) {
  int n = 0;
  for (std::size_t w = 0; w < mask.size(); ++w)
    for (int b = 0; b < 32; ++b)
      if ((mask[w] >> b) & 1u)
        if (static_cast<int>(w * 32 + static_cast<std::size_t>(b)) % xcds == xcd) ++n;
  return n;
}

}  // namespace hal::gpu
