#pragma once
// The host logic of GPU partitions (hal/partition.h), kept apart from the
// drivers so it is tested on the CPU: whether the loaded driver can partition
// and with what granularity, and how HIP's CU masks are built.
//
// CUDA (green contexts, driver 12.4+): the SM split is done by
// cuDevSmResourceSplitByCount, whose groups are multiples of a granularity
// fixed by the architecture: 8 SMs on sm_90 and later (CUDA programming guide,
// "Green contexts"), and hal asks 4 on sm_80/86/89 (the documented minimum of
// a group there is 4, in steps of 2: 4 satisfies both). Below sm_80: none.
//
// HIP (CU-masked streams, hipExtStreamCreateWithCUMask): on MI300X the driver
// deals mask bit i to XCD i % X (X = 8 XCDs of 38 CUs; /work/shared/GPU-NOTES.md),
// so a run of X consecutive bits is one CU on every XCD. hal gives each
// partition a run of consecutive bits, its length a multiple of X: every
// partition then has the same number of CUs on every XCD. Why spread rather
// than whole XCDs: whole XCDs would make the granularity 38 CUs (a comm
// partition of 8 to 32 CUs, the useful range, could not exist), and each XCD
// has its own L2 and its own share of the dispatcher's round-robin: a
// partition confined to a few XCDs would leave the others' L2 idle for it and
// skew the workgroup distribution. Spreading keeps every partition a
// scaled-down copy of the whole GPU. Single-XCD parts (gfx90a GCDs): X = 1.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hal/device.h"

namespace hal::gpu {

// An optional driver entry point by name: nullptr when the driver lacks it.
using EntryPoints = std::vector<std::pair<std::string, const void*>>;

// The SM granularity of green contexts on compute capability cc_major.x, or 0
// where they are not available (before sm_80).
int green_context_granularity(int cc_major);

// partition_support() of a CUDA device: `entry_points` are the green-context
// functions as loaded (cuDeviceGetDevResource, cuDevSmResourceSplitByCount,
// cuDevResourceGenerateDesc, cuGreenCtxCreate, cuGreenCtxStreamCreate,
// cuGreenCtxDestroy); a missing one is an unsupported reason naming it and the
// driver version (12.4+ needed). `driver_version` as cuDriverGetVersion gives it (12040).
PartitionSupport green_context_support(const EntryPoints& entry_points, int driver_version, int cc_major,
                                       int sm_count);

// `s` as partition_support() reports it while HAL_GPU_UNVERIFIED is not 1:
// partitions that never ran on a GPU are declined, the reason saying how to
// enable them (backends/gpu/unverified.h). Unchanged when the switch is on or
// `s` is already unsupported.
PartitionSupport unless_unverified_enabled(PartitionSupport s);

// XCDs of a HIP device: 38-CU XCDs on gfx94x/gfx95x (MI300X: 8, MI300A: 6),
// else 1.
int xcd_count(std::string_view gcn_arch, int compute_units);

// partition_support() of a HIP device: granularity = XCDs.
PartitionSupport cu_mask_support(const EntryPoints& entry_points, std::string_view gcn_arch, int compute_units);

// The CU masks (32-bit words, bit i = logical CU i, as hipExtStreamCreateWithCUMask
// takes them) of partitions of units[p] CUs on a device of `compute_units`
// CUs and `xcds` XCDs: partition p gets the bits [sum(units[<p]), + units[p]).
// Throws invalid_argument naming "units" (expected/given) when a count is not
// a positive multiple of `xcds` or the counts sum past `compute_units`.
std::vector<std::vector<std::uint32_t>> build_cu_masks(const std::vector<int>& units, int compute_units, int xcds);

// The CUs of `mask` on XCD `xcd` (bit i on XCD i % xcds): what the tests and
// `hal devices` use to show the spread.
int cus_on_xcd(const std::vector<std::uint32_t>& mask, int xcds, int xcd);

}  // namespace hal::gpu
