// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void cast(const CastCall&) { throw_unsupported("cpu", "cast", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
