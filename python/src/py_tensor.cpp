// hal.Tensor, hal.DType, hal.asarray / empty / zeros and Tensor.numpy().
#include "python/src/py_tensor.h"

#include <fmt/format.h>

#include <cstring>

#include "hal/error.h"
#include "ops/ops.h"

namespace hal::python {

PyTensor allocate_tensor(Device& device, DType dtype, const Shape& shape) {
  auto buffer = std::make_shared<Buffer>(Buffer::for_tensor(device, dtype, shape));
  PyTensor t;
  t.view = buffer->view(dtype, shape);
  t.owner = std::move(buffer);
  return t;
}

namespace {

// The producer's memory stays registered with the device (the validation
// layer accepts views only inside live allocations) exactly as long as the
// producer is kept alive: members are destroyed in reverse order, so the
// registration goes before the producer is released.
struct ExternalOwner {
  std::shared_ptr<void> producer;
  ExternalAllocation registration;
};

// Bytes from `data` to one past the last element the view can reach
// (DLPack imports have no negative strides: those are refused earlier).
std::size_t reach_in_bytes(DType dtype, const Shape& shape, const Strides& strides) {
  std::int64_t last = 0;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == 0) return 0;
    last += (shape[d] - 1) * strides[d];
  }
  return static_cast<std::size_t>(last + 1) * dtype_size(dtype);
}

}  // namespace

PyTensor tensor_from_external_memory(Device& device, void* data, DType dtype, const Shape& shape,
                                     const Strides& strides, std::shared_ptr<void> keeper) {
  auto owner = std::make_shared<ExternalOwner>();
  owner->producer = std::move(keeper);
  owner->registration = device.register_external(data, reach_in_bytes(dtype, shape, strides));
  keeper = std::move(owner);
  PyTensor t;
  t.view.data = data;
  t.view.device = &device;
  t.view.dtype = dtype;
  t.view.shape = shape;
  t.view.strides = strides;
  t.view.offset = 0;
  t.owner = std::move(keeper);
  return t;
}

std::optional<py::dtype> numpy_dtype_of(DType t) {
  switch (t) {
    case DType::f32: return py::dtype("float32");
    case DType::f16: return py::dtype("float16");
    case DType::f64: return py::dtype("float64");
    case DType::i8: return py::dtype("int8");
    case DType::i32: return py::dtype("int32");
    case DType::i64: return py::dtype("int64");
    case DType::boolean: return py::dtype("bool");
    default: return std::nullopt;
  }
}

std::optional<DType> dtype_from_python(const py::handle& h) {
  if (h.is_none()) return std::nullopt;
  if (py::isinstance<DType>(h)) return h.cast<DType>();
  std::string name;
  if (py::isinstance<py::str>(h)) {
    name = h.cast<std::string>();
  } else {
    // NumPy dtypes and scalar types (np.float32), torch dtypes (torch.bfloat16).
    py::object np = py::module_::import("numpy");
    try {
      name = py::str(np.attr("dtype")(h).attr("name")).cast<std::string>();
    } catch (const py::error_already_set&) {
      name = py::str(h).cast<std::string>();
      if (name.rfind("torch.", 0) == 0) name = name.substr(6);
    }
  }
  static const std::pair<const char*, DType> aliases[] = {
      {"float32", DType::f32}, {"float16", DType::f16}, {"bfloat16", DType::bf16}, {"float64", DType::f64},
      {"int8", DType::i8},     {"int32", DType::i32},   {"int64", DType::i64},     {"bool", DType::boolean},
      {"float8_e4m3fn", DType::f8e4m3}, {"float8_e5m2", DType::f8e5m2}};
  for (const auto& [alias, t] : aliases)
    if (name == alias) return t;
  if (auto t = parse_dtype(name)) return t;
  throw_invalid_argument("hal", "dtype", "a hal dtype (f32, f16, bf16, f8e4m3, f8e5m2, f64, i8, i32, i64, bool)",
                         name);
}

Shape shape_from_python(const py::handle& h, const char* what) {
  std::vector<std::int64_t> dims;
  if (py::isinstance<py::int_>(h)) {
    dims.push_back(h.cast<std::int64_t>());
  } else {
    for (const py::handle& d : h) dims.push_back(d.cast<std::int64_t>());
  }
  if (dims.size() > static_cast<std::size_t>(kMaxRank))
    throw_invalid_argument("hal", what, fmt::format("at most {} dimensions", kMaxRank), std::to_string(dims.size()));
  for (std::int64_t d : dims)
    if (d < 0) throw_invalid_argument("hal", what, "non-negative dimensions", fmt::format("{}", fmt::join(dims, ", ")));
  return Shape(std::span<const std::int64_t>(dims));
}

py::tuple dims_to_tuple(const Dims& d) {
  py::tuple t(static_cast<std::size_t>(d.rank()));
  for (int i = 0; i < d.rank(); ++i) t[static_cast<std::size_t>(i)] = d[i];
  return t;
}

py::array host_view(const PyTensor& t) {
  const auto np_dtype = numpy_dtype_of(t.view.dtype);
  if (!np_dtype || !t.device().host_accessible())
    throw_invalid_argument("hal", "tensor", "a host-accessible tensor of a NumPy dtype", t.view.str());
  std::vector<py::ssize_t> shape, strides;
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(t.view.dtype));
  for (int i = 0; i < t.view.rank(); ++i) {
    shape.push_back(t.view.shape[i]);
    strides.push_back(t.view.strides[i] * elem);
  }
  // The capsule holds the tensor's owner: the array keeps the memory alive.
  auto* keep = new std::shared_ptr<void>(t.owner);
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  return py::array(*np_dtype, shape, strides, t.view.first(), base);
}

namespace {

// NumPy has no bf16 or fp8: those come to the host as f32 (exact: every value
// of them is an f32), converted by hal's own cast.
DType host_dtype_of(DType t) { return numpy_dtype_of(t) ? t : DType::f32; }

py::array to_numpy(const PyTensor& t) {
  Device& dev = t.device();
  Stream& s = last_writer(t);  // reads after hal's last write, whichever stream it was on
  const DType host_dtype = host_dtype_of(t.view.dtype);
  PyTensor src = t;
  if (host_dtype != t.view.dtype) {
    src = allocate_tensor(dev, host_dtype, t.view.shape);
    py::gil_scoped_release release;
    ops::cast(s, t.view, src.view);
  } else if (!dev.host_accessible() && !t.view.is_contiguous()) {
    src = allocate_tensor(dev, host_dtype, t.view.shape);
    py::gil_scoped_release release;
    ops::copy(s, t.view, src.view);
  }
  if (dev.host_accessible()) {
    {
      py::gil_scoped_release release;
      s.synchronize();
    }
    return host_view(src).attr("copy")();  // C order
  }
  std::vector<py::ssize_t> shape(src.view.shape.begin(), src.view.shape.end());
  py::array out(*numpy_dtype_of(host_dtype), shape);
  if (src.view.numel() > 0) {
    void* dst = out.mutable_data();
    py::gil_scoped_release release;
    s.download(dst, src.view);
    s.synchronize();
  }
  return out;
}

// The hal dtype of a NumPy array's dtype, or an error naming it.
DType dtype_of_numpy(const py::array& a) {
  const std::string name = py::str(a.dtype().attr("name")).cast<std::string>();
  static const std::pair<const char*, DType> map[] = {
      {"float32", DType::f32}, {"float16", DType::f16}, {"float64", DType::f64}, {"int8", DType::i8},
      {"int32", DType::i32},   {"int64", DType::i64},   {"bool", DType::boolean}};
  for (const auto& [n, t] : map)
    if (name == n) return t;
  throw_invalid_argument("hal.asarray", "array", "an array of float16/32/64, int8/32/64 or bool (or dtype=...)",
                         name);
}

PyTensor from_host(const py::object& obj, std::optional<DType> dtype, Device& device) {
  py::object np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(obj);
  const DType target = dtype ? *dtype : dtype_of_numpy(a);
  // bf16 and fp8 go through f32 and hal's cast (round to nearest even,
  // fp8 saturating); every other dtype is converted by NumPy first.
  const DType staged = numpy_dtype_of(target) ? target : DType::f32;
  if (!numpy_dtype_of(target) && !is_floating(target))
    throw_invalid_argument("hal.asarray", "dtype", "a dtype", std::string(dtype_name(target)));
  py::array host = np.attr("ascontiguousarray")(a, *numpy_dtype_of(staged));
  const Shape shape = shape_from_python(host.attr("shape"), "shape");
  PyTensor staging = allocate_tensor(device, staged, shape);
  Stream& s = default_stream(device);
  const void* src = host.data();
  {
    py::gil_scoped_release release;
    if (staging.view.numel() > 0) s.upload(staging.view, src);
    s.synchronize();  // the host array may go once we return
  }
  if (staged == target) return staging;
  PyTensor out = allocate_tensor(device, target, shape);
  py::gil_scoped_release release;
  ops::cast(s, staging.view, out.view);
  s.synchronize();  // staging is freed on return
  return out;
}

}  // namespace

void register_tensor(py::module_& m) {
  py::enum_<DType> dtype(m, "DType", "hal's element types");
  for (DType t : kAllDTypes) dtype.value(std::string(dtype_name(t)).c_str(), t);
  dtype.def("__str__", [](DType t) { return std::string(dtype_name(t)); });
  dtype.def_property_readonly("itemsize", [](DType t) { return dtype_size(t); });
  for (DType t : kAllDTypes) m.attr(std::string(dtype_name(t)).c_str()) = t;
  m.attr("float32") = DType::f32;
  m.attr("float16") = DType::f16;
  m.attr("bfloat16") = DType::bf16;
  m.attr("float64") = DType::f64;
  m.attr("int8") = DType::i8;
  m.attr("int32") = DType::i32;
  m.attr("int64") = DType::i64;

  py::class_<PyTensor> tensor(m, "Tensor", "A tensor on a hal device (owning, or keeping its DLPack producer alive)");
  tensor.def_property_readonly("shape", [](const PyTensor& t) { return dims_to_tuple(t.view.shape); })
      .def_property_readonly("strides", [](const PyTensor& t) { return dims_to_tuple(t.view.strides); },
                             "Strides in elements (not bytes, unlike NumPy).")
      .def_property_readonly("offset", [](const PyTensor& t) { return t.view.offset; })
      .def_property_readonly("dtype", [](const PyTensor& t) { return t.view.dtype; })
      .def_property_readonly("device", [](const PyTensor& t) -> Device& { return t.device(); },
                             py::return_value_policy::reference)
      .def_property_readonly("ndim", [](const PyTensor& t) { return t.view.rank(); })
      .def_property_readonly("size", [](const PyTensor& t) { return t.view.numel(); })
      .def_property_readonly("is_contiguous", [](const PyTensor& t) { return t.view.is_contiguous(); })
      .def_property_readonly("data_ptr", [](const PyTensor& t) {
        return reinterpret_cast<std::uintptr_t>(t.view.first());
      })
      .def_property_readonly("stream", [](const PyTensor& t) -> py::object {
        return t.writes->stream ? py::cast(t.writes->stream) : py::object(py::none());
      }, "The hal.Stream of hal's last write to this memory (an op's output), or None when hal queued none; "
         "__dlpack__ orders its consumer after it and numpy() reads on it. Views share it.")
      .def("numpy", &to_numpy,
           "A copy on the host; bf16 and fp8 come as float32 (exact), other dtypes as themselves.")
      .def("transpose", [](const PyTensor& t, int a, int b) {
        PyTensor v = t;
        v.view = t.view.transposed(a, b);
        return v;
      }, py::arg("axis0") = -2, py::arg("axis1") = -1, "A view with two axes swapped (no copy).")
      .def_property_readonly("T", [](const PyTensor& t) {
        PyTensor v = t;
        v.view = t.view.transposed(-2, -1);
        return v;
      })
      .def("permute", [](const PyTensor& t, const py::args& perm) {
        PyTensor v = t;
        py::object dims = perm.size() == 1 && !py::isinstance<py::int_>(perm[0]) ? py::object(perm[0]) : py::object(perm);
        std::vector<std::int64_t> p;
        for (const py::handle& d : dims) p.push_back(d.cast<std::int64_t>());
        if (p.size() > static_cast<std::size_t>(kMaxRank))
          throw_invalid_argument("Tensor.permute", "perm", "a permutation", std::to_string(p.size()) + " axes");
        v.view = t.view.permuted(Dims(std::span<const std::int64_t>(p)));
        return v;
      }, "A view with the axes permuted (no copy).")
      .def("__len__", [](const PyTensor& t) {
        if (t.view.rank() == 0) throw py::type_error("len() of a 0-d hal.Tensor");
        return t.view.shape[0];
      })
      .def("__repr__", [](const PyTensor& t) { return "hal.Tensor(" + t.view.str() + ")"; });

  m.def("asarray", [](const py::object& obj, const py::object& dtype, const py::object& device) -> PyTensor {
    Device& dev = device_from_python(device);
    const std::optional<DType> dt = dtype_from_python(dtype);
    if (py::isinstance<PyTensor>(obj)) {
      const PyTensor& t = obj.cast<const PyTensor&>();
      if (&t.device() == &dev && (!dt || *dt == t.view.dtype)) return t;
      if (&t.device() == &dev) {
        PyTensor out = allocate_tensor(dev, *dt, t.view.shape);
        py::gil_scoped_release release;
        ops::cast(default_stream(dev), t.view, out.view);
        return out;
      }
      return from_host(to_numpy(t), dt ? dt : std::optional<DType>(t.view.dtype), dev);
    }
    return from_host(obj, dt, dev);
  }, py::arg("obj"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
     "A hal tensor with obj's values (anything numpy.asarray takes), on device, converted to dtype.");

  m.def("empty", [](const py::object& shape, const py::object& dtype, const py::object& device) {
    return allocate_tensor(device_from_python(device), dtype_from_python(dtype).value_or(DType::f32),
                           shape_from_python(shape, "shape"));
  }, py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def("zeros", [](const py::object& shape, const py::object& dtype, const py::object& device) {
    Device& dev = device_from_python(device);
    PyTensor t = allocate_tensor(dev, dtype_from_python(dtype).value_or(DType::f32), shape_from_python(shape, "shape"));
    const std::size_t bytes = static_cast<std::size_t>(t.view.numel()) * dtype_size(t.view.dtype);
    Stream& s = default_stream(dev);
    py::gil_scoped_release release;
    if (bytes > 0) s.memset(t.view.data, 0, bytes);
    return t;
  }, py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none());

  register_dlpack(m, tensor);
}

}  // namespace hal::python
