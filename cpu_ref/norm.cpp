// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void norm(const NormCall&) { throw_unsupported("cpu", "norm", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
