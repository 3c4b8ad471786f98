// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void copy(const CopyCall&) { throw_unsupported("cpu", "copy", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
