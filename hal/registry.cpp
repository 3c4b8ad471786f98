#include "hal/registry.h"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "hal/error.h"

namespace hal {
namespace detail {
// Defined in backends/backend_list.cpp: probes every backend compiled in.
std::vector<BackendProbe> probe_compiled_backends();
}  // namespace detail

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<BackendStatus> statuses;
  std::vector<std::unique_ptr<Device>> devices;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // never destroyed: devices outlive static destructors of users
    for (BackendProbe& probe : detail::probe_compiled_backends()) {
      probe.status.device_count = static_cast<int>(probe.devices.size());
      reg->statuses.push_back(probe.status);
      for (auto& d : probe.devices) reg->devices.push_back(std::move(d));
    }
    return reg;
  }();
  return *r;
}

}  // namespace

std::vector<Device*> devices() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<Device*> out;
  for (auto& d : r.devices) out.push_back(d.get());
  return out;
}

std::vector<BackendStatus> backends() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.statuses;
}

Device& device(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (auto& d : r.devices) {
    if (d->name() == name) return *d;
    names.push_back(d->name());
  }
  // Say why a known backend has no such device.
  std::string why;
  for (const BackendStatus& s : r.statuses) {
    if (name.substr(0, name.find(':')) == s.name && !s.available) why = fmt::format(" ({}: {})", s.name, s.reason);
  }
  throw_invalid_argument("hal::device", "name", fmt::format("one of [{}]", fmt::join(names, ", ")),
                         fmt::format("'{}'{}", name, why));
}

Device& default_device() {
  const char* env = std::getenv("HAL_DEVICE");
  return device(env && *env ? env : "cpu");
}

Device& register_device(std::unique_ptr<Device> dev, std::string backend_name) {
  if (!dev) throw_invalid_argument("hal::register_device", "device", "a device", "a null pointer");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto& d : r.devices) {
    if (d->name() == dev->name())
      throw_invalid_argument("hal::register_device", "device", "a name not yet registered", dev->name());
  }
  bool known = false;
  for (BackendStatus& s : r.statuses) {
    if (s.name == backend_name) {
      known = true;
      ++s.device_count;
    }
  }
  if (!known) r.statuses.push_back({backend_name, true, "", 1});
  r.devices.push_back(std::move(dev));
  return *r.devices.back();
}

}  // namespace hal
