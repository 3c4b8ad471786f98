#pragma once
// Unary ops of a 16-bit dtype (bf16, f16) as tables of all 65536 inputs. A
// 16-bit element has only 65536 values, so one lookup replaces widen + the
// fp32 function + narrow: for exp, sigmoid and silu about 30 vector
// instructions per 8 elements, for tanh and the gelus a libm call per element
// (a twentieth of the copy bandwidth on the 2-core VM).
//
// A table is filled by running the op's general path (gather, the fp32
// function, round once) over every bit pattern, so a lookup gives exactly the
// bits that path gives: NaN payloads, infinities and subnormals included.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "hal/dtype.h"
#include "hal/op.h"

namespace hal::cpu_ref {

inline constexpr std::int64_t kUnaryTable16Entries = 65536;
inline constexpr int kUnaryKinds = static_cast<int>(UnaryKind::silu) + 1;

// The tables of a process, built on first use (thread-safe).
class UnaryTables16 {
 public:
  // Fills table[i] = f(i) for the 65536 bit patterns `all` (all[i] == i).
  using Build = std::function<void(const std::uint16_t* all, std::uint16_t* table)>;
  // The table of `kind` over dtype t (bf16 or f16); `build` runs once per
  // (kind, t) and must give the same table on every call.
  const std::uint16_t* get(UnaryKind kind, DType t, const Build& build);

 private:
  std::once_flag once_[kUnaryKinds][2];
  std::unique_ptr<std::uint16_t[]> tables_[kUnaryKinds][2];
};

// y[i] = table[x[i]] for i < n; streaming writes y with non-temporal stores.
void lookup16(const std::uint16_t* table, const std::uint16_t* x, std::uint16_t* y, std::int64_t n, bool streaming);

}  // namespace hal::cpu_ref
