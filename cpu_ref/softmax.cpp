// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void softmax(const SoftmaxCall&) { throw_unsupported("cpu", "softmax", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
