#include "backends/cuda/cuda_device.h"

#include <fmt/format.h>

#include <cstring>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/dispatch.h"
#include "hal/error.h"

namespace hal::cuda {

namespace {

int attribute(CUdevice dev, CUdevice_attribute a, const std::string& where, const char* what) {
  int v = 0;
  check(driver()->cuDeviceGetAttribute(&v, a, dev), where, fmt::format("cuDeviceGetAttribute({})", what));
  return v;
}

// Whether the embedded fatbins carry SASS for sm_90a (CMAKE_CUDA_ARCHITECTURES
// contains 90a). Recorded by the build in HAL_CUDA_ARCHS.
bool built_with_sm90a() {
#ifdef HAL_CUDA_ARCHS
  return std::strstr(HAL_CUDA_ARCHS, "90a") != nullptr;
#else
  return false;
#endif
}

}  // namespace

CudaDevice::CudaDevice(int ordinal, CUdevice device) : ordinal_(ordinal), device_(device) {
  const Driver& d = *driver();
  info_.name = fmt::format("cuda:{}", ordinal);
  info_.backend = "cuda";
  info_.index = ordinal;
  check(d.cuDevicePrimaryCtxRetain(&context_, device_), info_.name, "cuDevicePrimaryCtxRetain");
  make_current();

  char model[256] = {};
  check(d.cuDeviceGetName(model, sizeof(model) - 1, device_), info_.name, "cuDeviceGetName");
  info_.model = model;
  std::size_t total = 0;
  check(d.cuDeviceTotalMem_v2(&total, device_), info_.name, "cuDeviceTotalMem_v2");
  info_.memory_bytes = total;

  const std::string& w = info_.name;
  caps_.cc_major = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, w, "COMPUTE_CAPABILITY_MAJOR");
  caps_.cc_minor = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, w, "COMPUTE_CAPABILITY_MINOR");
  caps_.sm_count = attribute(device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, w, "MULTIPROCESSOR_COUNT");
  caps_.max_shared_per_block_optin =
      attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, w, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN");
  caps_.has_sm90a_kernels = built_with_sm90a() && caps_.cc_major == 9 && caps_.cc_minor == 0;

  const int warp = attribute(device_, CU_DEVICE_ATTRIBUTE_WARP_SIZE, w, "WARP_SIZE");
  const int l2 = attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, w, "L2_CACHE_SIZE");
  const int clock_khz = attribute(device_, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, w, "CLOCK_RATE");
  const int mem_clock_khz = attribute(device_, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, w, "MEMORY_CLOCK_RATE");
  const int bus_bits = attribute(device_, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, w, "GLOBAL_MEMORY_BUS_WIDTH");

  info_.arch = fmt::format("sm_{}{}", caps_.cc_major, caps_.cc_minor);
  info_.compute_units = caps_.sm_count;
  info_.warp_size = warp;
  info_.l2_bytes = static_cast<std::uint64_t>(l2);
  info_.clock_mhz = clock_khz / 1000;
  // Nominal peaks from clocks and per-SM rates: fp32 lanes per SM are 64 on
  // sm_80 and 128 on later parts (FMA = 2 FLOP); dense bf16 tensor-core FLOP
  // per clock per SM are 2048 on sm_80 and 4096 on sm_90; unknown parts get 0.
  const double sm_ghz = caps_.sm_count * (clock_khz * 1e-6);
  const int fp32_lanes = (caps_.cc_major == 8 && caps_.cc_minor == 0) ? 64 : 128;
  info_.peak_fp32_tflops = sm_ghz * fp32_lanes * 2 * 1e-3;
  const int bf16_flop_per_clk = caps_.cc_major == 8 && caps_.cc_minor == 0 ? 2048 : caps_.cc_major == 9 ? 4096 : 0;
  info_.peak_bf16_tflops = sm_ghz * bf16_flop_per_clk * 1e-3;
  // DDR: two transfers per memory clock.
  info_.peak_bandwidth_gbps = mem_clock_khz * 1e3 * (bus_bits / 8.0) * 2.0 * 1e-9;

  if (caps_.cc_major >= 8) info_.features.insert(info_.features.end(), {"mma.sync", "cp.async", "ldmatrix", "bf16"});
  if (caps_.cc_major >= 9) info_.features.insert(info_.features.end(), {"tma", "mbarrier.tx", "fp8"});
  if (caps_.has_sm90a_kernels) info_.features.insert(info_.features.end(), {"wgmma", "setmaxnreg"});
  if (d.cuTensorMapEncodeTiled == nullptr) info_.features.push_back("no-tensor-map-encode");
}

void CudaDevice::make_current() const {
  check(driver()->cuCtxSetCurrent(context_), info_.name, "cuCtxSetCurrent");
}

void* CudaDevice::allocate(std::size_t bytes) {
  make_current();
  // cuMemAlloc rejects 0 bytes; a unique pointer is still required, so every
  // request gets at least 256 bytes (cuMemAlloc aligns to >= 256 bytes).
  const std::size_t request = bytes < 256 ? 256 : bytes;
  CUdeviceptr p = 0;
  check(driver()->cuMemAlloc_v2(&p, request), info_.name, fmt::format("cuMemAlloc_v2({} bytes)", request));
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
}

void CudaDevice::deallocate(void* ptr) noexcept {
  if (ptr == nullptr) return;
  const Driver* d = driver();
  if (d == nullptr) return;
  d->cuCtxSetCurrent(context_);
  d->cuMemFree_v2(static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ptr)));
}

std::unique_ptr<StreamImpl> CudaDevice::create_stream() { return std::make_unique<CudaStream>(*this); }
std::unique_ptr<EventImpl> CudaDevice::create_event() { return std::make_unique<CudaEvent>(*this); }

PartitionSupport CudaDevice::partition_support() const {
  return green_context_partition_support(device_, caps_.cc_major, caps_.sm_count);
}
std::unique_ptr<PartitionImpl> CudaDevice::create_partition(int compute_units) {
  return create_green_context_partition(*this, device_, sm_splitter_, compute_units);
}

Support CudaDevice::supports(const OpCall& call) const { return supports_call(call); }

void CudaDevice::execute(StreamImpl& stream, const OpCall& call) {
  gpu::execute<CudaStream>(*this, stream, call);
}

BackendProbe probe() {
  BackendProbe p;
  p.status.name = "cuda";
  try {
    const Driver* d = driver();
    if (d == nullptr) {
      p.status.reason = load_error();
      return p;
    }
    if (const CUresult r = d->cuInit(0); r != CUDA_SUCCESS) {
      p.status.reason = "cuInit failed: " + describe(r);
      return p;
    }
    int count = 0;
    if (const CUresult r = d->cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
      p.status.reason = "cuDeviceGetCount failed: " + describe(r);
      return p;
    }
    if (count == 0) {
      p.status.reason = "no CUDA devices";
      return p;
    }
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      check(d->cuDeviceGet(&dev, i), fmt::format("cuda:{}", i), "cuDeviceGet");
      p.devices.push_back(std::make_unique<CudaDevice>(i, dev));
    }
    p.status.available = true;
    p.status.device_count = count;
  } catch (const std::exception& e) {
    p.devices.clear();
    p.status.available = false;
    p.status.reason = e.what();
  }
  return p;
}

}  // namespace hal::cuda
