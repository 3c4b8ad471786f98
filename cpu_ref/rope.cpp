// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void rope(const RopeCall&) { throw_unsupported("cpu", "rope", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
