#pragma once
// The DAZ/FTZ arithmetic of the bf16 dot instructions (vdpbf16ps,
// TDPBF16PS), for the emulated kernels that model them in plain C++
// (baseline code only).
#include <bit>
#include <cstdint>

namespace hal::cpu_ref {

// bf16 bits widened to fp32; a subnormal input reads as (signed) zero.
inline float bf16_widen_daz(std::uint16_t h) {
  std::uint32_t bits = std::uint32_t{h} << 16;
  if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;
  return std::bit_cast<float>(bits);
}

// A subnormal result flushed to (signed) zero.
inline float flush_subnormal(float v) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
  return (bits & 0x7F800000u) == 0 ? std::bit_cast<float>(bits & 0x80000000u) : v;
}

}  // namespace hal::cpu_ref
