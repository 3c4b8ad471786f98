// The `hal` Python module: registration of its parts, one file each.
#include "python/src/py_tensor.h"

PYBIND11_MODULE(hal, m) {
  using namespace hal::python;
  m.doc() = "hal: one operator interface over a CPU reference, NVIDIA and AMD GPUs";
  register_errors(m);
  register_devices(m);
  register_tensor(m);
  register_ops(m);
  register_reports(m);
}
