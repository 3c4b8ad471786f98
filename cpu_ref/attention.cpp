// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void attention(const AttentionCall&) { throw_unsupported("cpu", "attention", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
