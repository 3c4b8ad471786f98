#include "backends/hip/hip_device.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

#include "backends/gpu/dispatch.h"
#include "backends/hip/hip_backend.h"
#include "backends/hip/hip_driver.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_status.h"
#include "backends/hip/hip_stream.h"
#include "hal/error.h"

namespace hal::hip {

namespace {

int attribute(int ordinal, hipDeviceAttribute_t a, const std::string& where, const char* what) {
  int v = 0;
  check(driver()->hipDeviceGetAttribute(&v, a, ordinal), where, fmt::format("hipDeviceGetAttribute({})", what));
  return v;
}

const char* built_targets() {
#ifdef HAL_HIP_ARCHS
  return HAL_HIP_ARCHS;
#else
  return "";
#endif
}

// gcnArchName without relying on hipDeviceProp_t's layout (it differs
// between ROCm 5 and 6): the properties are written into a generous zeroed
// buffer and the string is found by its "gfx" prefix.
std::string read_target_id(int ordinal) {
  const Driver& d = *driver();
  if (d.hipGetDevicePropertiesAny == nullptr) return {};
  std::vector<unsigned char> buf(64 * 1024, 0);
  if (d.hipGetDevicePropertiesAny(buf.data(), ordinal) != hipSuccess) return {};
  return extract_target_id(std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()));
}

}  // namespace

std::string extract_target_id(std::string_view bytes) {
  for (std::size_t pos = bytes.find("gfx"); pos != std::string_view::npos; pos = bytes.find("gfx", pos + 1)) {
    if (pos > 0 && bytes[pos - 1] != '\0') continue;  // must start a string
    std::size_t end = pos;
    while (end < bytes.size() && bytes[end] != '\0' && std::isprint(static_cast<unsigned char>(bytes[end]))) ++end;
    if (end < bytes.size() && bytes[end] == '\0' && end - pos > 3) return std::string(bytes.substr(pos, end - pos));
  }
  return {};
}

std::string missing_code_object_reason(std::string_view device_target, std::string_view built) {
  std::size_t start = 0;
  while (start <= built.size()) {
    const std::size_t end = std::min(built.find(',', start), built.size());
    const std::string_view t = built.substr(start, end - start);
    if (!t.empty() && target_compatible(device_target, t)) return {};
    start = end + 1;
  }
  return fmt::format("hip: no embedded code object runs on target {} (this build has [{}]; rebuild with "
                     "CMAKE_HIP_ARCHITECTURES including it)",
                     device_target, built);
}

HipDevice::HipDevice(int ordinal) : ordinal_(ordinal) {
  const Driver& d = *driver();
  info_.name = fmt::format("hip:{}", ordinal);
  info_.backend = "hip";
  info_.index = ordinal;
  make_current();

  char model[256] = {};
  check(d.hipDeviceGetName(model, sizeof(model) - 1, ordinal_), info_.name, "hipDeviceGetName");
  info_.model = model;
  std::size_t total = 0;
  check(d.hipDeviceTotalMem(&total, ordinal_), info_.name, "hipDeviceTotalMem");
  info_.memory_bytes = total;

  const std::string& w = info_.name;
  caps_.compute_units = attribute(ordinal_, hipDeviceAttributeMultiprocessorCount, w, "MultiprocessorCount");
  caps_.max_shared_per_block = attribute(ordinal_, hipDeviceAttributeMaxSharedMemoryPerBlock, w, "MaxSharedMemoryPerBlock");
  caps_.wave_size = attribute(ordinal_, hipDeviceAttributeWarpSize, w, "WarpSize");
  const int l2 = attribute(ordinal_, hipDeviceAttributeL2CacheSize, w, "L2CacheSize");
  const int clock_khz = attribute(ordinal_, hipDeviceAttributeClockRate, w, "ClockRate");
  const int mem_clock_khz = attribute(ordinal_, hipDeviceAttributeMemoryClockRate, w, "MemoryClockRate");
  const int bus_bits = attribute(ordinal_, hipDeviceAttributeMemoryBusWidth, w, "MemoryBusWidth");

  info_.arch = read_target_id(ordinal_);
  if (info_.arch.empty()) info_.arch = "gfx?";  // unknown: kernels may still load
  info_.compute_units = caps_.compute_units;
  info_.warp_size = caps_.wave_size;
  info_.l2_bytes = static_cast<std::uint64_t>(l2);
  info_.clock_mhz = clock_khz / 1000;
  // Nominal peaks: CDNA2/3 vector fp32 is 128 FLOP/clock/CU; dense bf16 MFMA
  // is 1024 FLOP/clock/CU on gfx90a and 2048 on gfx94x; others unknown (0).
  const double cu_ghz = caps_.compute_units * (clock_khz * 1e-6);
  info_.peak_fp32_tflops = cu_ghz * 128 * 1e-3;
  const bool cdna3 = info_.arch.rfind("gfx94", 0) == 0;
  const bool cdna2 = info_.arch.rfind("gfx90a", 0) == 0;
  info_.peak_bf16_tflops = cu_ghz * (cdna3 ? 2048 : cdna2 ? 1024 : 0) * 1e-3;
  info_.peak_bandwidth_gbps = mem_clock_khz * 1e3 * (bus_bits / 8.0) * 2.0 * 1e-9;
  if (cdna2 || cdna3) info_.features.insert(info_.features.end(), {"mfma", "bf16", "wave64"});
  if (cdna3) info_.features.push_back("fp8-fnuz");
  if (info_.arch != "gfx?") no_kernels_reason_ = missing_code_object_reason(info_.arch, built_targets());
  if (!no_kernels_reason_.empty()) info_.features.push_back("no-kernels-for-this-target");
}

void HipDevice::make_current() const { check(driver()->hipSetDevice(ordinal_), info_.name, "hipSetDevice"); }

void* HipDevice::allocate(std::size_t bytes) {
  make_current();
  // hipMalloc(0) returns nullptr; a unique pointer is required, so every
  // request gets at least 256 bytes (hipMalloc aligns to >= 256 bytes).
  const std::size_t request = bytes < 256 ? 256 : bytes;
  void* p = nullptr;
  check(driver()->hipMalloc(&p, request), info_.name, fmt::format("hipMalloc({} bytes)", request));
  return p;
}

void HipDevice::deallocate(void* ptr) noexcept {
  if (ptr == nullptr) return;
  const Driver* d = driver();
  if (d == nullptr) return;
  (void)d->hipSetDevice(ordinal_);
  (void)d->hipFree(ptr);
}

std::unique_ptr<StreamImpl> HipDevice::create_stream() { return std::make_unique<HipStream>(*this); }
std::unique_ptr<EventImpl> HipDevice::create_event() { return std::make_unique<HipEvent>(*this); }

PartitionSupport HipDevice::partition_support() const {
  return cu_mask_partition_support(info_.arch, caps_.compute_units);
}
std::unique_ptr<PartitionImpl> HipDevice::create_partition(int compute_units) {
  return create_cu_mask_partition(*this, cu_allocator_, compute_units);
}

Support HipDevice::supports(const OpCall& call) const {
  if (!no_kernels_reason_.empty()) return Support{false, no_kernels_reason_};
  return supports_call(call);
}

void HipDevice::execute(StreamImpl& stream, const OpCall& call) {
  gpu::execute<HipStream>(*this, stream, call);
}

BackendProbe probe() {
  BackendProbe p;
  p.status.name = "hip";
  try {
    const Driver* d = driver();
    if (d == nullptr) {
      p.status.reason = load_error();
      return p;
    }
    if (const hipError_t r = d->hipInit(0); r != hipSuccess) {
      // Typical on a machine with the runtime but no GPU (hipErrorInvalidDevice
      // or hipErrorNoDevice): say both what was loaded and what failed.
      p.status.reason = fmt::format("no usable HIP device: hipInit failed ({} loaded): {}", d->library, describe(r));
      return p;
    }
    int count = 0;
    if (const hipError_t r = d->hipGetDeviceCount(&count); r != hipSuccess) {
      p.status.reason = fmt::format("hipGetDeviceCount failed ({}): {}", d->library, describe(r));
      return p;
    }
    if (count == 0) {
      p.status.reason = fmt::format("no HIP devices ({} loaded)", d->library);
      return p;
    }
    for (int i = 0; i < count; ++i) p.devices.push_back(std::make_unique<HipDevice>(i));
    p.status.available = true;
    p.status.device_count = count;
  } catch (const std::exception& e) {
    p.devices.clear();
    p.status.available = false;
    p.status.reason = e.what();
  }
  return p;
}

}  // namespace hal::hip
