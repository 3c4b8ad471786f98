#pragma once
// What the CPU device hands its kernels (cpu_ref/): the validated call with
// its empty views made harmless, or nothing when there is nothing to do.
//
// Validation lets an empty tensor carry any data pointer (null included),
// offset and strides: it has no element to address. Kernels form addresses
// such as data + (offset + row * stride) * size before they know a row is
// empty, which is undefined behaviour for a null data pointer. So every
// empty view goes to the kernels with offset 0 and strides 0 (each address
// it yields is its data pointer itself, null + 0 being defined), and a call
// whose outputs are all empty is not run at all (attention with zero query
// heads, for one, would otherwise size its tasks from hq / hkv = 0).
#include <optional>

#include "hal/op.h"

namespace hal::cpu {

std::optional<OpCall> prepare_kernel_call(const OpCall& validated);

}  // namespace hal::cpu
