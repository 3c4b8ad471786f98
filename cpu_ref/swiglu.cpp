// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void swiglu(const SwigluCall&) { throw_unsupported("cpu", "swiglu", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
