// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void reduce(const ReduceCall&) { throw_unsupported("cpu", "reduce", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
