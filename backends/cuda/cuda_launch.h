#pragma once
// Kernel launch through the CUDA driver API (loaded at run time).
//
// Kernels live in ptx/kernels/*.cu as `extern "C" __global__` functions taking
// ONE parameter struct by value (declared in a plain header that both the
// kernel and its host launcher include), so host and device always agree on
// the argument layout. The build embeds every kernel file as a fatbin; the
// first launch of a name loads the module that holds it, once per device.
#include <cstddef>

namespace hal::cuda {

class CudaStream;

struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;  // dynamic shared memory; > 48 KiB is enabled per function
};

// Throws hal::Error(device_error) naming the kernel when lookup or launch fails.
void launch_kernel(CudaStream& stream, const char* kernel_name, const LaunchShape& shape, const void* params,
                   std::size_t params_size);

template <class Params>
void launch(CudaStream& stream, const char* kernel_name, const LaunchShape& shape, const Params& params) {
  launch_kernel(stream, kernel_name, shape, &params, sizeof(Params));
}

// What the launchers need to know about the device the stream belongs to.
struct CudaDeviceCaps {
  int cc_major = 0, cc_minor = 0;   // 9, 0 on H100/H200
  int sm_count = 0;
  int max_shared_per_block_optin = 0;  // bytes
  bool has_sm90a_kernels = false;    // the fatbin holds sm_90a code usable on this device
};
const CudaDeviceCaps& stream_caps(CudaStream& stream);

}  // namespace hal::cuda
