// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void fill_random(const FillRandomCall&) { throw_unsupported("cpu", "fill_random", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
