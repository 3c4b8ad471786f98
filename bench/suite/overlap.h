#pragma once
// `hal bench --op overlap`: a GEMM on the compute partition while a
// bandwidth-bound copy (the stand-in for a collective) runs on the
// communication partition, for several units set aside, beside the GEMM alone
// on the whole device: DeepSeek-V3's 20-of-132-SMs trade-off as a table.
// On the CPU the units are threads (task arenas); on a GPU it needs
// partitions (hal/partition.h), which the GPU backends do not have yet, so it
// exits 77 (skipped) there, saying why.
#include <string>

#include "hal/device.h"

namespace hal::bench {

int run_overlap_bench(Device& device, bool quick, const std::string& json_path);

}  // namespace hal::bench
