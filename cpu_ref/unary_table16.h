#pragma once
// Unary maps (exp, sigmoid, silu) of a 16-bit dtype (bf16, f16) as tables of
// all 65536 inputs. A 16-bit element has only 65536 values, so one lookup
// replaces widen + the fp32 map + narrow (about 30 vector instructions per
// 8 elements for silu; the loop was compute-bound, not memory-bound).
//
// Each table is filled by a vector-kernel table's own widen, map entry and
// narrow over every bit pattern, so a lookup gives exactly the bits that
// composition gives: NaN payloads, infinities and subnormals included, and
// the same bits as the general (strided) path.
#include <cstdint>
#include <memory>
#include <mutex>

#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

inline constexpr std::int64_t kUnaryTable16Entries = 65536;

// The tables of one vector-kernel table (a process-lifetime static of the
// code that uses them).
class UnaryTables16 {
 public:
  // The table of `op` (exp, sigmoid or silu) over every bit pattern of t
  // (bf16 or f16), built from vk's entries on first use (thread-safe); null
  // for any other op or dtype. vk must be the same on every call.
  const std::uint16_t* get(const VectorKernels& vk, FusedOp op, DType t);

 private:
  static constexpr int kOps = 3, kDtypes = 2;
  std::once_flag once_[kOps][kDtypes];
  std::unique_ptr<std::uint16_t[]> tables_[kOps][kDtypes];
};

}  // namespace hal::cpu_ref
