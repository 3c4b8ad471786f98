#pragma once
// The device registry: every backend compiled in is probed once, on first use.
//
//   hal::devices()            available devices, in backend order (cpu, cuda, hip)
//   hal::backends()           every backend compiled in, with why it is unavailable
//   hal::device("cuda:1")     lookup by name; throws listing what exists
//   hal::default_device()     $HAL_DEVICE if set, else "cpu"
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hal/device.h"

namespace hal {

struct BackendStatus {
  std::string name;       // "cpu", "cuda", "hip", or a test backend's name
  bool available = false;
  std::string reason;     // why not, e.g. "libcuda.so.1 not found (dlopen: ...)"
  int device_count = 0;
};

// What a backend's probe returns.
struct BackendProbe {
  BackendStatus status;
  std::vector<std::unique_ptr<Device>> devices;
};

std::vector<Device*> devices();
std::vector<BackendStatus> backends();
Device& device(std::string_view name);
Device& default_device();

// Adds a device at run time (tests register fault-injecting backends here).
// The registry owns it. Throws if the name is already taken.
Device& register_device(std::unique_ptr<Device> device, std::string backend_name);

}  // namespace hal
