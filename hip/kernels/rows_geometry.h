#pragma once
// Launch geometry of the HIP row kernels (hip/kernels/rows_*.hip), shared
// with their launcher (backends/hip/hip_rows.cpp). The kernels take
// hal::kernel_params::*Params (kernel_params/rows.h). Plain host/device header.

namespace hal::hip::kernels {

// One workgroup of kRowThreads threads (4 waves of 64) works on one row.
inline constexpr int kRowThreads = 256;

}  // namespace hal::hip::kernels
