// TEMPORARY: minimal validation; the full per-op validation replaces this file.
#include "hal/error.h"
#include "ops/ops.h"

namespace hal::ops {

OpCall validate(const OpCall& call) { return call; }

}  // namespace hal::ops
