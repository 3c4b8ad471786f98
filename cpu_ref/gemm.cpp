// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void gemm(const GemmCall&) { throw_unsupported("cpu", "gemm", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
