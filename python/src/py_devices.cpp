// hal.devices(), hal.device(name), hal.Stream, hal.Event, hal.synchronize().
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "hal/error.h"
#include "hal/registry.h"
#include "python/src/py_tensor.h"

namespace hal::python {

namespace {

std::shared_ptr<Stream> shared_default_stream(Device& device) {
  static std::mutex mutex;
  static auto* streams = new std::map<Device*, std::shared_ptr<Stream>>();
  // Never destroyed: Python may still hold tensors when the module is torn down.
  std::lock_guard lock(mutex);
  auto& s = (*streams)[&device];
  if (!s) s = std::make_shared<Stream>(device);
  return s;
}

}  // namespace

Stream& default_stream(Device& device) { return *shared_default_stream(device); }

Stream& last_writer(const PyTensor& t) { return t.writes->stream ? *t.writes->stream : default_stream(t.device()); }

Device& device_from_python(const py::handle& h) {
  if (h.is_none()) return default_device();
  if (py::isinstance<py::str>(h)) return hal::device(h.cast<std::string>());
  return h.cast<Device&>();
}

Stream& stream_for(Device& device, const py::object& stream) { return *shared_stream_for(device, stream); }

std::shared_ptr<Stream> shared_stream_for(Device& device, const py::object& stream) {
  if (stream.is_none()) return shared_default_stream(device);
  std::shared_ptr<Stream> shared = stream.cast<std::shared_ptr<Stream>>();
  Stream& s = *shared;
  if (&s.device() != &device)
    throw_invalid_argument("hal", "stream", fmt::format("a stream of {}", device.name()),
                           fmt::format("a stream of {}", s.device().name()));
  return shared;
}

namespace {

py::dict info_dict(const DeviceInfo& i) {
  py::dict d;
  d["name"] = i.name;
  d["backend"] = i.backend;
  d["index"] = i.index;
  d["model"] = i.model;
  d["arch"] = i.arch;
  d["compute_units"] = i.compute_units;
  d["memory_bytes"] = i.memory_bytes;
  d["warp_size"] = i.warp_size;
  d["l2_bytes"] = i.l2_bytes;
  d["clock_mhz"] = i.clock_mhz;
  d["peak_fp32_tflops"] = i.peak_fp32_tflops;
  d["peak_bf16_tflops"] = i.peak_bf16_tflops;
  d["peak_bandwidth_gbps"] = i.peak_bandwidth_gbps;
  d["features"] = i.features;
  py::dict kernels;
  for (const auto& [op, kernel] : i.kernels) kernels[py::str(op)] = kernel;
  d["kernels"] = kernels;
  return d;
}

}  // namespace

void register_devices(py::module_& m) {
  // Devices belong to the registry and live until the process exits.
  py::class_<Device, std::unique_ptr<Device, py::nodelete>>(m, "Device", "A hal device (owned by hal's registry)")
      .def_property_readonly("name", [](const Device& d) { return d.info().name; })
      .def_property_readonly("backend", [](const Device& d) { return d.info().backend; })
      .def_property_readonly("model", [](const Device& d) { return d.info().model; })
      .def_property_readonly("arch", [](const Device& d) { return d.info().arch; })
      .def_property_readonly("host_accessible", &Device::host_accessible)
      .def_property_readonly("info", [](const Device& d) { return info_dict(d.info()); })
      .def("__repr__", [](const Device& d) { return fmt::format("hal.device('{}')", d.name()); })
      .def("__str__", [](const Device& d) { return d.name(); })
      .def("__eq__", [](const Device& a, const py::object& b) {
        return py::isinstance<Device>(b) && &a == &b.cast<const Device&>();
      })
      .def("__hash__", [](const Device& d) { return std::hash<const void*>()(&d); });

  m.def("devices", [] { return hal::devices(); }, py::return_value_policy::reference,
        "The available devices, in backend order (cpu, cuda, hip).");
  m.def("device", [](const std::string& name) -> Device& { return hal::device(name); },
        py::return_value_policy::reference, py::arg("name"), "A device by name: 'cpu', 'cuda:0', 'hip:1'.");
  m.def("default_device", [] () -> Device& { return default_device(); }, py::return_value_policy::reference,
        "$HAL_DEVICE if set, else the CPU.");
  m.def("backends", [] {
    py::list out;
    for (const BackendStatus& b : hal::backends()) {
      py::dict d;
      d["name"] = b.name;
      d["available"] = b.available;
      d["reason"] = b.reason;
      d["device_count"] = b.device_count;
      out.append(d);
    }
    return out;
  }, "Every backend compiled in, with the reason when it is unavailable.");

  py::class_<Event, std::shared_ptr<Event>>(m, "Event", "A marker in a stream, for synchronisation and timing")
      .def(py::init([](const py::object& device) { return std::make_shared<Event>(device_from_python(device)); }),
           py::arg("device") = py::none())
      .def_property_readonly("device", [](const Event& e) -> Device& { return e.device(); },
                             py::return_value_policy::reference)
      .def("synchronize", [](Event& e) {
        py::gil_scoped_release release;
        e.synchronize();
      })
      .def("elapsed_ms_since", &Event::elapsed_ms_since, py::arg("start"));

  py::class_<Stream, std::shared_ptr<Stream>>(m, "Stream", "An in-order queue of work on one device")
      .def(py::init([](const py::object& device) { return std::make_shared<Stream>(device_from_python(device)); }),
           py::arg("device") = py::none())
      .def_property_readonly("device", [](const Stream& s) -> Device& { return s.device(); },
                             py::return_value_policy::reference)
      .def("synchronize", [](Stream& s) {
        py::gil_scoped_release release;
        s.synchronize();
      })
      .def("record", [](Stream& s, Event& e) { s.record(e); }, py::arg("event"))
      .def("wait", [](Stream& s, Event& e) { s.wait(e); }, py::arg("event"),
           "Later work on this stream waits for the event.")
      .def_property_readonly("native_handle", [](Stream& s) {
        return reinterpret_cast<std::uintptr_t>(s.impl().native_handle());
      }, "The vendor's stream handle (CUstream, hipStream_t) as an integer; 0 on the CPU.");

  m.def("default_stream", [](const py::object& device) { return shared_default_stream(device_from_python(device)); },
        py::arg("device") = py::none(),
        "The stream ops use on a device when no stream= is given.");
  m.def("synchronize", [](const py::object& device) {
    Stream& s = default_stream(device_from_python(device));
    py::gil_scoped_release release;
    s.synchronize();
  }, py::arg("device") = py::none(), "Waits for the device's default stream.");
}

}  // namespace hal::python
