#include "hal/partition.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hal/error.h"

namespace hal {

std::vector<Partition> partition(Device& device, const std::vector<int>& units) {
  const PartitionSupport support = device.partition_support();
  if (!support.supported) throw_unsupported(device.info().backend, "partition", support.reason);
  const std::string given = fmt::format("[{}]", fmt::join(units, ", "));
  if (units.empty()) throw_invalid_argument("partition", "units", "at least one partition", given);
  long long total = 0;
  for (int u : units) {
    if (u <= 0 || u % support.granularity != 0)
      throw_invalid_argument("partition", "units",
                             fmt::format("positive counts of {}, multiples of {}", support.unit, support.granularity),
                             given);
    total += u;
  }
  if (total > support.max_units)
    throw_invalid_argument("partition", "units",
                           fmt::format("at most {} {} in all on {}", support.max_units, support.unit, device.name()),
                           fmt::format("{} (sum {})", given, total));
  std::vector<Partition> out;
  for (int u : units) out.emplace_back(device, std::shared_ptr<PartitionImpl>(device.create_partition(u)));
  return out;
}

}  // namespace hal
