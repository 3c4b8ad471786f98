// TEMPORARY STUB: replaced by the real kernel.
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu_ref {

void embedding(const EmbeddingCall&) { throw_unsupported("cpu", "embedding", "anything (not implemented yet)"); }

}  // namespace hal::cpu_ref
