#pragma once
// hal.Tensor: an owning tensor of the Python module. The view (hal::Tensor)
// shares its memory's lifetime through `owner`: a hal::Buffer the module
// allocated, or an imported DLPack tensor whose producer is kept alive until
// the last view of it is gone.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "hal/buffer.h"
#include "hal/stream.h"
#include "hal/tensor.h"

namespace hal::python {

namespace py = pybind11;

// The stream of hal's last write to a tensor's memory, shared by every view
// of it (views copy the PyTensor): __dlpack__ orders its consumer after that
// stream, numpy() reads on it. Updated with the GIL held.
struct WriteRecord {
  std::shared_ptr<Stream> stream;  // null: no write queued by hal (ordered by the default stream)
};

struct PyTensor {
  Tensor view;
  std::shared_ptr<void> owner;
  std::shared_ptr<WriteRecord> writes = std::make_shared<WriteRecord>();

  Device& device() const { return *view.device; }
};

// A new contiguous tensor on `device` (contents undefined).
PyTensor allocate_tensor(Device& device, DType dtype, const Shape& shape);

// Wraps memory the module does not own (a DLPack import). `keeper` releases
// it when the last view is gone. Every import goes through this one function,
// so that a registration of external memory (e.g. with a validation layer)
// has one place to go.
PyTensor tensor_from_external_memory(Device& device, void* data, DType dtype, const Shape& shape,
                                     const Strides& strides, std::shared_ptr<void> keeper);

// The stream ops use when none is given: one per device, created on first use.
Stream& default_stream(Device& device);
// A stream argument (hal.Stream or None) resolved against the device.
Stream& stream_for(Device& device, const py::object& stream);
std::shared_ptr<Stream> shared_stream_for(Device& device, const py::object& stream);
// The stream that last wrote t (its device's default stream when hal queued no write).
Stream& last_writer(const PyTensor& t);

// dtype arguments: a hal.DType, a name ("bf16", "float32"), a NumPy dtype or None.
std::optional<DType> dtype_from_python(const py::handle& h);
// The NumPy dtype holding a hal dtype exactly, or none (bf16, fp8).
std::optional<py::dtype> numpy_dtype_of(DType t);
// Device arguments: a hal.Device, a name, or None (hal's default device).
Device& device_from_python(const py::handle& h);

Shape shape_from_python(const py::handle& h, const char* what);
py::tuple dims_to_tuple(const Dims& d);

void register_errors(py::module_& m);
void register_devices(py::module_& m);
void register_tensor(py::module_& m);
void register_dlpack(py::module_& m, py::class_<PyTensor>& tensor);
void register_ops(py::module_& m);
void register_reports(py::module_& m);

// Python's host view of a CPU tensor's memory, strides included; keeps `t` alive.
py::array host_view(const PyTensor& t);

}  // namespace hal::python
