// DLPack both ways, zero-copy: hal.from_dlpack(obj) views a producer's memory
// (keeping the producer alive), Tensor.__dlpack__ / __dlpack_device__ let
// numpy.from_dlpack and torch.utils.dlpack.from_dlpack view hal's.
#include <fmt/format.h>

#include <vector>

#include "hal/error.h"
#include "hal/registry.h"
#include "python/src/dlpack_abi.h"
#include "python/src/dlpack_stream.h"
#include "python/src/gpu_stream_handshake.h"
#include "python/src/py_tensor.h"

namespace hal::python {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

// ---- dtypes -------------------------------------------------------------

// fp8 has codes only from DLPack 1.1 on: a consumer that asked for the legacy
// protocol (no max_version) cannot know them.
dlpack::DataType to_dlpack_dtype(DType t, bool consumer_knows_fp8) {
  const auto bits = static_cast<std::uint8_t>(dtype_size(t) * 8);
  switch (t) {
    case DType::f32:
    case DType::f16:
    case DType::f64: return {dlpack::kFloat, bits, 1};
    case DType::bf16: return {dlpack::kBfloat, 16, 1};
    case DType::i8:
    case DType::i32:
    case DType::i64: return {dlpack::kInt, bits, 1};
    case DType::boolean: return {dlpack::kBool, 8, 1};
    case DType::f8e4m3:
    case DType::f8e5m2:
      if (!consumer_knows_fp8)
        throw_unsupported("dlpack", "__dlpack__",
                          fmt::format("{}: fp8 needs DLPack >= 1.1 (__dlpack__(max_version=(1, 1))) and this consumer "
                                      "asked for an older version; cast to bf16 or f32 first",
                                      dtype_name(t)));
      return {t == DType::f8e4m3 ? dlpack::kFloat8_e4m3fn : dlpack::kFloat8_e5m2, 8, 1};
    case DType::f8e4m3fnuz:
    case DType::f8e5m2fnuz:
      if (!consumer_knows_fp8)
        throw_unsupported("dlpack", "__dlpack__",
                          fmt::format("{}: fp8 needs DLPack >= 1.1 (__dlpack__(max_version=(1, 1))) and this consumer "
                                      "asked for an older version; cast to bf16 or f32 first",
                                      dtype_name(t)));
      return {t == DType::f8e4m3fnuz ? dlpack::kFloat8_e4m3fnuz : dlpack::kFloat8_e5m2fnuz, 8, 1};
  }
  throw_unsupported("dlpack", "__dlpack__", std::string(dtype_name(t)));
}

const char* type_family(std::uint8_t code) {
  switch (code) {
    case dlpack::kInt: return "int";
    case dlpack::kUInt: return "uint";
    case dlpack::kFloat: return "float";
    case dlpack::kBfloat: return "bfloat";
    case 5: return "complex";
    case dlpack::kBool: return "bool";
    default: return "type-code-";
  }
}

DType from_dlpack_dtype(const dlpack::DataType& d) {
  if (d.lanes == 1) {
    if (d.code == dlpack::kFloat && d.bits == 32) return DType::f32;
    if (d.code == dlpack::kFloat && d.bits == 16) return DType::f16;
    if (d.code == dlpack::kFloat && d.bits == 64) return DType::f64;
    if (d.code == dlpack::kBfloat && d.bits == 16) return DType::bf16;
    if (d.code == dlpack::kInt && d.bits == 8) return DType::i8;
    if (d.code == dlpack::kInt && d.bits == 32) return DType::i32;
    if (d.code == dlpack::kInt && d.bits == 64) return DType::i64;
    if (d.code == dlpack::kBool && d.bits == 8) return DType::boolean;
    if (d.code == dlpack::kFloat8_e4m3fn && d.bits == 8) return DType::f8e4m3;
    if (d.code == dlpack::kFloat8_e5m2 && d.bits == 8) return DType::f8e5m2;
    if (d.code == dlpack::kFloat8_e4m3fnuz && d.bits == 8) return DType::f8e4m3fnuz;
    if (d.code == dlpack::kFloat8_e5m2fnuz && d.bits == 8) return DType::f8e5m2fnuz;
  }
  throw_invalid_argument("hal.from_dlpack", "dtype",
                         "f32, f16, f64, bf16, i8, i32, i64, bool, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz or float8_e5m2fnuz",
                         fmt::format("{}{}{} (DLPack code {} bits {} lanes {})", type_family(d.code), d.bits,
                                     d.lanes == 1 ? "" : fmt::format("x{}", d.lanes), d.code, d.bits, d.lanes));
}

// ---- devices ------------------------------------------------------------

dlpack::Device to_dlpack_device(const Device& d) {
  const DeviceInfo& i = d.info();
  if (d.host_accessible()) return {dlpack::kCPU, 0};
  if (i.backend == "cuda") return {dlpack::kCUDA, i.index};
  if (i.backend == "hip") return {dlpack::kROCM, i.index};
  throw_unsupported(i.backend, "__dlpack__", "a device DLPack has no type for");
}

Device& from_dlpack_device(std::int32_t type, std::int32_t id) {
  switch (type) {
    case dlpack::kCPU:
    case dlpack::kCUDAHost:  // pinned host memory: the CPU reads it
    case dlpack::kROCMHost: return hal::device("cpu");
    case dlpack::kCUDA: return hal::device(fmt::format("cuda:{}", id));
    case dlpack::kROCM: return hal::device(fmt::format("hip:{}", id));
    default:
      throw_unsupported("dlpack", "from_dlpack",
                        fmt::format("DLPack device type {} (hal takes CPU, CUDA and ROCm memory)", type));
  }
}

// ---- export -------------------------------------------------------------

// Owns what a capsule points to: the tensor (keeping hal's memory alive) and
// the shape and strides arrays the DLTensor points into.
template <class Managed>
struct ExportContext {
  Managed managed{};
  PyTensor tensor;
  std::vector<std::int64_t> shape, strides;
};

template <class Managed>
void delete_export(Managed* m) {
  delete static_cast<ExportContext<Managed>*>(m->manager_ctx);
}

template <class Managed>
void fill(ExportContext<Managed>& ctx, const PyTensor& t, bool knows_fp8) {
  ctx.tensor = t;
  ctx.shape.assign(t.view.shape.begin(), t.view.shape.end());
  ctx.strides.assign(t.view.strides.begin(), t.view.strides.end());
  dlpack::Tensor& d = ctx.managed.dl_tensor;
  d.data = t.view.first();
  d.device = to_dlpack_device(t.device());
  d.ndim = t.view.rank();
  d.dtype = to_dlpack_dtype(t.view.dtype, knows_fp8);
  d.shape = ctx.shape.data();
  d.strides = ctx.strides.data();
  d.byte_offset = 0;
  ctx.managed.manager_ctx = &ctx;
  ctx.managed.deleter = &delete_export<Managed>;
}

// A capsule not consumed (its name unchanged) is released by its destructor.
template <class Managed>
void capsule_destructor(PyObject* capsule) {
  const char* name = std::is_same_v<Managed, dlpack::ManagedTensor> ? kLegacyName : kVersionedName;
  if (!PyCapsule_IsValid(capsule, name)) return;  // renamed: the consumer owns it
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) m->deleter(m);
}

ConsumerOrdering interpret_stream_argument(std::int32_t device_type, const py::object& stream) {
  std::optional<std::int64_t> s;
  if (!stream.is_none()) {
    if (!py::isinstance<py::int_>(stream) || py::isinstance<py::bool_>(stream))
      throw py::type_error(fmt::format("hal.Tensor.__dlpack__: stream is an integer or None, not a {}",
                                       py::str(py::type::of(stream)).cast<std::string>()));
    s = stream.cast<std::int64_t>();
  }
  try {
    return interpret_consumer_stream(device_type, s);
  } catch (const ConsumerStreamRefused& e) {
    throw py::buffer_error(e.message);
  }
}

void order_consumer(const PyTensor& t, const ConsumerOrdering& o) {
  Stream& writer = last_writer(t);
  py::gil_scoped_release release;
  if (o.kind == ConsumerOrdering::Kind::host_wait) writer.synchronize();
  if (o.kind == ConsumerOrdering::Kind::stream_wait) make_foreign_stream_wait(t.device(), writer, o.stream);
}

py::object export_capsule(const PyTensor& t, const py::object& stream, const py::object& max_version,
                          const py::object& dl_device, const py::object& copy) {
  if (!copy.is_none() && copy.cast<bool>())
    throw py::buffer_error("hal.Tensor.__dlpack__: copy=True is not offered; hal exports views only");
  const dlpack::Device dev = to_dlpack_device(t.device());
  if (!dl_device.is_none()) {
    const auto want = dl_device.cast<std::pair<int, int>>();
    if (want.first != dev.device_type || want.second != dev.device_id)
      throw py::buffer_error(fmt::format("hal.Tensor.__dlpack__: the tensor is on {}, not on DLPack device ({}, {})",
                                         t.device().name(), want.first, want.second));
  }
  // Order the consumer after hal's last write to this tensor (DLPack leaves that to the producer).
  order_consumer(t, interpret_stream_argument(dev.device_type, stream));
  bool versioned = false;
  bool knows_fp8 = false;
  if (!max_version.is_none()) {
    const auto v = max_version.cast<std::pair<int, int>>();
    versioned = v.first >= 1;
    knows_fp8 = v.first > 1 || (v.first == 1 && v.second >= 1);
  }
  if (versioned) {
    auto* ctx = new ExportContext<dlpack::ManagedTensorVersioned>();
    try {
      fill(*ctx, t, knows_fp8);
    } catch (...) {
      delete ctx;
      throw;
    }
    ctx->managed.version = dlpack::kVersion;
    ctx->managed.flags = 0;
    return py::reinterpret_steal<py::object>(
        PyCapsule_New(&ctx->managed, kVersionedName, &capsule_destructor<dlpack::ManagedTensorVersioned>));
  }
  auto* ctx = new ExportContext<dlpack::ManagedTensor>();
  try {
    fill(*ctx, t, false);
  } catch (...) {
    delete ctx;
    throw;
  }
  return py::reinterpret_steal<py::object>(
      PyCapsule_New(&ctx->managed, kLegacyName, &capsule_destructor<dlpack::ManagedTensor>));
}

// ---- import -------------------------------------------------------------

// Calls the producer's deleter (which may drop Python references: it takes the
// GIL) when the last hal view of the memory is gone.
template <class Managed>
std::shared_ptr<void> keeper_of(Managed* m) {
  return std::shared_ptr<void>(m, [](void* p) {
    auto* managed = static_cast<Managed*>(p);
    if (!managed->deleter) return;
    if (!Py_IsInitialized()) return;  // at exit: the producer is gone with the interpreter
    PyGILState_STATE g = PyGILState_Ensure();
    managed->deleter(managed);
    PyGILState_Release(g);
  });
}

PyTensor import_dltensor(const dlpack::Tensor& d, std::shared_ptr<void> keeper) {
  Device& device = from_dlpack_device(d.device.device_type, d.device.device_id);
  const DType dtype = from_dlpack_dtype(d.dtype);
  if (d.ndim < 0 || d.ndim > kMaxRank)
    throw_invalid_argument("hal.from_dlpack", "ndim", fmt::format("0 to {}", kMaxRank), std::to_string(d.ndim));
  const Shape shape(std::span<const std::int64_t>(d.shape, static_cast<std::size_t>(d.ndim)));
  checked_numel(shape, "hal.from_dlpack: shape");
  Strides strides = contiguous_strides(shape);
  if (d.strides) {
    strides = Strides(std::span<const std::int64_t>(d.strides, static_cast<std::size_t>(d.ndim)));
    for (int i = 0; i < d.ndim; ++i)
      if (strides[i] < 0 && shape[i] > 1)
        throw_invalid_argument("hal.from_dlpack", "strides", "non-negative strides (hal has no negative strides)",
                               strides.str());
      else if (strides[i] < 0)
        strides[i] = 0;  // a size-0/1 axis: its stride is never used
  }
  void* data = static_cast<char*>(d.data) + d.byte_offset;
  return tensor_from_external_memory(device, data, dtype, shape, strides, std::move(keeper));
}

// A capsule hal exported itself: the view shares the exported tensor's write
// record, so that a later export still orders after hal's last write.
template <class Managed>
PyTensor with_record_of(Managed* m, PyTensor t) {
  if (m->deleter == &delete_export<Managed>) t.writes = static_cast<ExportContext<Managed>*>(m->manager_ctx)->tensor.writes;
  return t;
}

PyTensor import_capsule(const py::object& capsule) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kVersionedName)) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersionedName));
    if (m->version.major > dlpack::kVersion.major)
      throw_unsupported("dlpack", "from_dlpack", fmt::format("DLPack version {}.{}", m->version.major, m->version.minor));
    // The capsule is ours from here: renamed so that its destructor leaves it.
    PyCapsule_SetName(c, "used_dltensor_versioned");
    return with_record_of(m, import_dltensor(m->dl_tensor, keeper_of(m)));
  }
  if (PyCapsule_IsValid(c, kLegacyName)) {
    auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(c, kLegacyName));
    PyCapsule_SetName(c, "used_dltensor");
    return with_record_of(m, import_dltensor(m->dl_tensor, keeper_of(m)));
  }
  throw_invalid_argument("hal.from_dlpack", "obj", "an object with __dlpack__ or an unused DLPack capsule",
                         py::str(py::type::of(capsule)).cast<std::string>());
}

PyTensor from_dlpack(const py::object& obj) {
  if (py::isinstance<PyTensor>(obj)) return obj.cast<PyTensor>();
  if (!py::hasattr(obj, "__dlpack__")) return import_capsule(obj);
  py::object stream = py::none();
  if (py::hasattr(obj, "__dlpack_device__")) {
    const auto dev = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    if (dev.first == dlpack::kCUDA || dev.first == dlpack::kROCM) {
      // The producer orders its work before hal's default stream on that device.
      Device& d = from_dlpack_device(dev.first, dev.second);
      stream = py::int_(reinterpret_cast<std::uintptr_t>(default_stream(d).impl().native_handle()));
    }
  }
  py::object capsule;
  try {
    capsule = obj.attr("__dlpack__")(py::arg("stream") = stream, py::arg("max_version") = py::make_tuple(1, 1));
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    capsule = obj.attr("__dlpack__")(py::arg("stream") = stream);  // a pre-1.0 producer
  }
  return import_capsule(capsule);
}

}  // namespace

void register_dlpack(py::module_& m, py::class_<PyTensor>& tensor) {
  tensor.def("__dlpack__", &export_capsule, py::kw_only(), py::arg("stream") = py::none(),
             py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
             "A DLPack capsule viewing this tensor (strides kept). On a GPU the consumer's stream waits for "
             "hal's queued work; fp8 needs max_version >= (1, 1).");
  tensor.def("__dlpack_device__", [](const PyTensor& t) {
    const dlpack::Device d = to_dlpack_device(t.device());
    return py::make_tuple(d.device_type, d.device_id);
  });
  py::module_ testing = m.def_submodule("_testing", "Host-side logic exposed for hal's own tests");
  testing.def("consumer_ordering", [](std::int32_t device_type, const py::object& stream) -> py::object {
    const ConsumerOrdering o = interpret_stream_argument(device_type, stream);
    if (o.kind == ConsumerOrdering::Kind::none) return py::none();
    if (o.kind == ConsumerOrdering::Kind::host_wait) return py::str("host");
    return py::int_(o.stream);
  }, py::arg("device_type"), py::arg("stream"),
     "What __dlpack__(stream=...) does for a DLPack device type: None (no ordering), 'host' (waits on the host for "
     "the tensor's last writer) or the consumer stream handle made to wait on it.");
  m.def("from_dlpack", &from_dlpack, py::arg("obj"),
        "A hal tensor viewing obj's memory (anything with __dlpack__, or a DLPack capsule); obj stays alive "
        "as long as the view.");
}

}  // namespace hal::python
