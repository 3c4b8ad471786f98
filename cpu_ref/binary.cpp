// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void binary(const BinaryCall&) { throw_unsupported("cpu", "binary", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
