#pragma once
// `hal bench --op overlap`: a GEMM on the compute partition while a
// bandwidth-bound copy (the stand-in for a collective) runs on the
// communication partition, for several units set aside, beside the GEMM alone
// on the whole device: DeepSeek-V3's 20-of-132-SMs trade-off as a table.
// On the CPU the units are threads (task arenas); on a GPU, SMs of green
// contexts (CUDA) or CUs of CU-masked streams (HIP), set aside in steps of the
// granularity up to a quarter of the device (H100/H200: 0, 8, 16, 24, 32 of
// 132). The GPU partitions never ran yet: without HAL_GPU_UNVERIFIED=1 (or
// without partitions) it exits 77 (skipped), saying why.
#include <string>

#include "hal/device.h"

namespace hal::bench {

int run_overlap_bench(Device& device, bool quick, const std::string& json_path);

}  // namespace hal::bench
