#pragma once
// The validation layer. Tensors are non-owning views, so nothing else stops a
// view whose offset or stride reaches past its allocation, or one used after
// its Buffer was freed, from reading or writing other memory. Every op
// (ops::run, for every backend) and every copy, upload, download and memset
// (hal::Stream) checks that each tensor or byte range lies inside one live
// allocation of its device (hal/allocations.h), and a refusal names the op or
// function, the argument, the view and what is wrong with it:
//   "softmax: argument 'y': expected a view inside one live allocation of cpu,
//    given f32[4, 8] strides [8, 1] on cpu, offset 8: bytes [0x..., 0x...)
//    run 32 bytes past the end of 128 bytes at 0x... (a hal buffer)"
// Empty views (and zero-byte copies) touch no memory and are always accepted.
// A freed address that a later allocation reuses is live again: such a stale
// view is not detected (AddressSanitizer's quarantine catches some of those).
//
// On by default (its cost is a lock and a map lookup per tensor: see
// docs/validation.md for the measurement). HAL_VALIDATE=0 in the environment
// turns it off, HAL_VALIDATE=1 on; set_bounds_checks() overrides both.
#include <cstddef>
#include <string_view>

#include "hal/op.h"
#include "hal/tensor.h"

namespace hal {

class Device;

bool bounds_checks_enabled() noexcept;
void set_bounds_checks(bool enabled) noexcept;

// Each tensor of `call` (named as in its each_tensor) against the allocations
// of its device; throws invalid_argument "<op>: argument '<name>': ...".
void check_op_bounds(const OpCall& call);

// One tensor, for the whole-tensor copies: "<fn>: argument '<arg>': ...".
void check_tensor_bounds(std::string_view fn, std::string_view arg, const Tensor& t);

// `bytes` bytes at `ptr` in `device`'s memory, for the raw copies.
void check_range_bounds(const Device& device, std::string_view fn, std::string_view arg, const void* ptr,
                        std::size_t bytes);

// The checks run only when enabled: these are what the hooks call.
inline void validate_op_bounds(const OpCall& call) {
  if (bounds_checks_enabled()) check_op_bounds(call);
}
inline void validate_range_bounds(const Device& device, std::string_view fn, std::string_view arg, const void* ptr,
                                  std::size_t bytes) {
  if (bytes != 0 && bounds_checks_enabled()) check_range_bounds(device, fn, arg, ptr, bytes);
}

}  // namespace hal
