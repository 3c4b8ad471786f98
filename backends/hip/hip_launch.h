#pragma once
// Kernel launch through the HIP module API (runtime loaded at run time).
//
// Kernels live in hip/kernels/*.hip as `extern "C" __global__` functions
// taking ONE parameter struct by value (declared in a plain header that both
// the kernel and its host launcher include), so host and device agree on the
// argument layout; the struct's bytes are passed as the kernarg buffer
// (HIP_LAUNCH_PARAM_BUFFER_POINTER). The first launch of a name loads the
// bundle that holds it, once per device.
#include <cstddef>

namespace hal::hip {

class HipStream;

struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;  // dynamic LDS; the kernels here use static LDS only
};

// Throws hal::Error naming the kernel when lookup or launch fails.
void launch_kernel(HipStream& stream, const char* kernel_name, const LaunchShape& shape, const void* params,
                   std::size_t params_size);

template <class Params>
void launch(HipStream& stream, const char* kernel_name, const LaunchShape& shape, const Params& params) {
  launch_kernel(stream, kernel_name, shape, &params, sizeof(Params));
}

// What the launchers need to know about the device the stream belongs to.
struct HipDeviceCaps {
  int compute_units = 0;
  int max_shared_per_block = 0;  // bytes of LDS per workgroup (64 KiB on CDNA3)
  int wave_size = 64;
};
const HipDeviceCaps& stream_caps(HipStream& stream);

}  // namespace hal::hip
