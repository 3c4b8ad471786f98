#pragma once
// Decodes a fuzz input into one op call on the CPU device (op_fuzzer.cpp).
//
// Every tensor is a view into one arena of host memory, in its own region
// with a gap of canary bytes before it, so a write outside an output view
// (past its end, into a hole of a strided view, into an input) changes bytes
// that must not change. The bytes choose the op, its dtypes (mostly the ones
// it accepts, sometimes any), its shapes (mostly consistent, sometimes
// perturbed), layouts (contiguous, transposed, broadcast, padded or arbitrary
// strides, offsets, a misaligned base), attributes and values.
//
// Values are either "nice" (multiples of 1/16 in [-8, 8), where the
// accuracy contract applies and the fuzzer scores the result against the
// fp64 oracle) or raw bytes (NaN, infinities, subnormals, huge values: only
// the no-crash and no-stray-write properties are checked).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "hal/op.h"

namespace hal::fuzz {

// Inputs that reach defects known and being fixed elsewhere (issue 17's
// list): attention with zero query heads, empty tensors with a null base
// (nullptr + offset), out-of-range enum values. Generated unless the
// environment sets HAL_FUZZ_AVOID_KNOWN_DEFECTS=1 (for fuzzing a tree that
// still has them, to find others); CI never sets it.
bool avoid_known_defects();

struct OpCase {
  std::vector<std::byte> arena;  // every tensor's memory; never reallocated
  OpCall call;
  bool nice_values = true;       // the accuracy contract applies
};

// Fills `out` from the input; false when the input is too short or asks for
// more memory than the arena has (the fuzzer then returns at once).
bool decode_op_case(const std::uint8_t* data, std::size_t size, OpCase& out);

// Copies the bytes of the view's elements (a view into c's arena) from `from`
// into `to` (both arena-sized), leaving every other byte of `to` alone.
void restore_elements(const OpCase& c, const Tensor& t, const std::vector<std::byte>& from,
                      std::vector<std::byte>& to);

// The view's elements in logical (row-major) order, as bytes.
std::vector<std::uint8_t> gather(const Tensor& t);

}  // namespace hal::fuzz
