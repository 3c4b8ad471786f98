#pragma once
// hal::Device: one execution device (the CPU, a CUDA GPU, a HIP GPU).
//
// This is also the backend interface: each backend implements Device once.
// Devices are owned by the registry (hal/registry.h) and live until the
// process exits; user code holds references or pointers to them.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hal/allocations.h"
#include "hal/op.h"

namespace hal {

struct DeviceInfo {
  std::string name;          // "cpu", "cuda:0", "hip:1"
  std::string backend;       // "cpu", "cuda", "hip"
  int index = 0;             // ordinal within the backend
  std::string model;         // "NVIDIA H200", "AMD Instinct MI300X", CPU brand string
  std::string arch;          // "x86-64+avx512f", "sm_90", "gfx942:sramecc+:xnack-"
  int compute_units = 0;     // SMs, CUs, or hardware threads
  std::uint64_t memory_bytes = 0;
  int warp_size = 1;         // 32 on NVIDIA, 64 on CDNA, 1 on the CPU
  std::uint64_t l2_bytes = 0;
  int clock_mhz = 0;
  double peak_fp32_tflops = 0;   // nominal, from clocks and units; 0 if unknown
  double peak_bf16_tflops = 0;
  double peak_bandwidth_gbps = 0;
  std::vector<std::string> features;  // "avx512f", "wgmma", "tma", "mfma", ...
  // Kernels this device chose at run time, per op class ("gemm bf16" ->
  // "amx_32x32"), so that a result can say what computed it; empty where a
  // backend makes no such choice.
  std::vector<std::pair<std::string, std::string>> kernels;
};

// DeviceInfo::kernels as one line: "gemm f32: avx512_12x32, gemm bf16: amx_32x32"
// (empty when there are none).
std::string kernels_text(const std::vector<std::pair<std::string, std::string>>& kernels);

// Answer of Device::supports(): whether an op call can run, and if not why.
struct Support {
  bool ok = true;
  std::string reason;  // "cuda: f8e4m3 softmax not implemented", empty when ok
};

enum class CopyKind { host_to_device, device_to_host, device_to_device };

class StreamImpl;
class EventImpl;
class PartitionImpl;

// Answer of Device::partition_support() (hal/partition.h).
struct PartitionSupport {
  bool supported = false;
  std::string unit;       // "threads", "SMs", "CUs"
  int granularity = 1;    // a partition's unit count is a multiple of this
  int max_units = 0;      // units the partitions may share in all
  std::string reason;     // why not (supported == false), or how (e.g. "green contexts")
};

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual const DeviceInfo& info() const = 0;
  const std::string& name() const { return info().name; }
  // True when data of this device is directly addressable by the host.
  virtual bool host_accessible() const { return false; }

  // Memory. allocate() returns 256-byte-aligned memory or throws
  // out_of_memory; allocate(0) returns a valid unique pointer.
  // These are the backend's raw hooks: memory that tensors view should come
  // from a hal::Buffer, which also records it in allocations().
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* ptr) noexcept = 0;

  // The extents of this device's live allocations, which the validation layer
  // (hal/bounds_check.h) checks every op's and copy's tensors against.
  AllocationTable& allocations() noexcept { return allocations_; }
  const AllocationTable& allocations() const noexcept { return allocations_; }
  // Records memory that hal did not allocate (a DLPack import, a user's
  // pointer) as a live allocation of this device, so that views of it are
  // accepted until the returned handle is destroyed or released. The memory
  // must stay valid that long; zero bytes record nothing (an empty view is
  // always accepted). Throws invalid_argument for a null pointer.
  [[nodiscard]] ExternalAllocation register_external(const void* ptr, std::size_t bytes);

  virtual std::unique_ptr<StreamImpl> create_stream() = 0;
  virtual std::unique_ptr<EventImpl> create_event() = 0;

  // Ops. `call` has already been validated by ops/ (shapes, dtypes, devices);
  // the default supports() accepts everything. execute() queues the op on
  // `stream` (created by this device) or throws unsupported / device_error.
  virtual Support supports(const OpCall& call) const;
  virtual void execute(StreamImpl& stream, const OpCall& call) = 0;

  // Partitions of the compute units (hal/partition.h). Defaults: none, with
  // the backend named in the reason; create_partition() is called only after
  // hal::partition() has checked the request against partition_support().
  virtual PartitionSupport partition_support() const;
  virtual std::unique_ptr<PartitionImpl> create_partition(int compute_units);

 protected:
  Device() = default;

 private:
  AllocationTable allocations_;
};

// Backend-private stream and event implementations.
class StreamImpl {
 public:
  virtual ~StreamImpl() = default;
  virtual void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) = 0;
  virtual void memset(void* dst, int value, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
  virtual void record(EventImpl& event) = 0;
  virtual void wait(EventImpl& event) = 0;  // later work on this stream waits for event
  // The vendor's stream handle (CUstream, hipStream_t), for interop with vendor
  // libraries such as cuBLAS in the benchmarks; nullptr on the CPU.
  virtual void* native_handle() { return nullptr; }
};

// A share of a device's compute units; streams created from it run only there.
class PartitionImpl {
 public:
  virtual ~PartitionImpl() = default;
  virtual int compute_units() const = 0;
  virtual std::unique_ptr<StreamImpl> create_stream() = 0;
};

class EventImpl {
 public:
  virtual ~EventImpl() = default;
  virtual void synchronize() = 0;
  // Milliseconds between two recorded events of the same device.
  virtual double elapsed_ms(const EventImpl& start) const = 0;
};

}  // namespace hal
