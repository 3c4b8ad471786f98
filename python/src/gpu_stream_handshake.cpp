// The vendor runtimes are loaded at run time (as the backends do), so this
// compiles in every build; it is reached only for a GPU device.
#include "python/src/gpu_stream_handshake.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include "hal/error.h"

namespace hal::python {

namespace {

void* symbol(void* lib, const char* lib_name, const char* name) {
  void* f = lib ? dlsym(lib, name) : nullptr;
  if (!f)
    throw Error(ErrorCode::device_error, fmt::format("hal.__dlpack__: {} not found in {}", name, lib_name));
  return f;
}

void check(int status, const char* call) {
  if (status != 0)
    throw Error(ErrorCode::device_error, fmt::format("hal.__dlpack__: {} failed with status {}", call, status));
}

void cuda_wait(int ordinal, void* hal_stream, void* foreign) {
  static void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  using DeviceGet = int (*)(int*, int);
  using PrimaryCtxRetain = int (*)(void**, int);
  using CtxPush = int (*)(void*);
  using CtxPop = int (*)(void**);
  using EventCreate = int (*)(void**, unsigned);
  using EventRecord = int (*)(void*, void*);
  using StreamWaitEvent = int (*)(void*, void*, unsigned);
  using EventDestroy = int (*)(void*);
  const char* n = "libcuda.so.1";
  int dev = 0;
  void* ctx = nullptr;
  check(reinterpret_cast<DeviceGet>(symbol(lib, n, "cuDeviceGet"))(&dev, ordinal), "cuDeviceGet");
  check(reinterpret_cast<PrimaryCtxRetain>(symbol(lib, n, "cuDevicePrimaryCtxRetain"))(&ctx, dev),
        "cuDevicePrimaryCtxRetain");
  check(reinterpret_cast<CtxPush>(symbol(lib, n, "cuCtxPushCurrent_v2"))(ctx), "cuCtxPushCurrent");
  void* event = nullptr;
  constexpr unsigned kDisableTiming = 2;  // CU_EVENT_DISABLE_TIMING
  int status = reinterpret_cast<EventCreate>(symbol(lib, n, "cuEventCreate"))(&event, kDisableTiming);
  if (status == 0) status = reinterpret_cast<EventRecord>(symbol(lib, n, "cuEventRecord"))(event, hal_stream);
  if (status == 0) status = reinterpret_cast<StreamWaitEvent>(symbol(lib, n, "cuStreamWaitEvent"))(foreign, event, 0);
  // Destroying an event a stream still waits on is allowed: it is released when done.
  if (event) reinterpret_cast<EventDestroy>(symbol(lib, n, "cuEventDestroy_v2"))(event);
  void* popped = nullptr;
  reinterpret_cast<CtxPop>(symbol(lib, n, "cuCtxPopCurrent_v2"))(&popped);
  check(status, "cuEventCreate/cuEventRecord/cuStreamWaitEvent");
}

void hip_wait(int ordinal, void* hal_stream, void* foreign) {
  static void* lib = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
  using SetDevice = int (*)(int);
  using EventCreate = int (*)(void**, unsigned);
  using EventRecord = int (*)(void*, void*);
  using StreamWaitEvent = int (*)(void*, void*, unsigned);
  using EventDestroy = int (*)(void*);
  const char* n = "libamdhip64.so";
  check(reinterpret_cast<SetDevice>(symbol(lib, n, "hipSetDevice"))(ordinal), "hipSetDevice");
  void* event = nullptr;
  constexpr unsigned kDisableTiming = 2;  // hipEventDisableTiming
  int status = reinterpret_cast<EventCreate>(symbol(lib, n, "hipEventCreateWithFlags"))(&event, kDisableTiming);
  if (status == 0) status = reinterpret_cast<EventRecord>(symbol(lib, n, "hipEventRecord"))(event, hal_stream);
  if (status == 0) status = reinterpret_cast<StreamWaitEvent>(symbol(lib, n, "hipStreamWaitEvent"))(foreign, event, 0);
  if (event) reinterpret_cast<EventDestroy>(symbol(lib, n, "hipEventDestroy"))(event);
  check(status, "hipEventCreateWithFlags/hipEventRecord/hipStreamWaitEvent");
}

}  // namespace

void make_foreign_stream_wait(Device& device, Stream& hal_stream, std::uintptr_t foreign_stream) {
  const DeviceInfo& info = device.info();
  void* foreign = reinterpret_cast<void*>(foreign_stream);
  if (info.backend == "cuda") return cuda_wait(info.index, hal_stream.impl().native_handle(), foreign);
  if (info.backend == "hip") return hip_wait(info.index, hal_stream.impl().native_handle(), foreign);
  throw_unsupported(info.backend, "__dlpack__", "a consumer stream (only cuda and hip streams are ordered)");
}

}  // namespace hal::python
