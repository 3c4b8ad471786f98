// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void unary(const UnaryCall&) { throw_unsupported("cpu", "unary", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
