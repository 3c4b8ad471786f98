#pragma once
// Element types and exact host conversions between them.
//
// Conversions to narrower floating types round to nearest, ties to even, keep
// NaN (quiet) and the sign of zero. f16 and bf16 overflow to infinity as IEEE
// says. The fp8 formats saturate, as the accuracy contract specifies (and as
// NVIDIA's cvt.satfinite does): every non-NaN value beyond the largest finite
// value, infinities included, becomes +-448 (f8e4m3, OCP "e4m3fn", which has no
// infinity) or +-57344 (f8e5m2); NaN stays NaN.
//
// Two fp8 families: OCP (f8e4m3 = e4m3fn, f8e5m2; NVIDIA's encoding) and FNUZ
// (f8e4m3fnuz, f8e5m2fnuz; AMD MI300's): FNUZ has no infinity, no negative
// zero and one NaN (0x80), and its exponent bias is one more (8 and 16), so
// its largest values are 240 and 57344. Converting to FNUZ saturates the same
// way; a negative value that rounds to zero becomes +0 (0x80 is the NaN).
// Data moved between the families must be re-encoded (cast does it exactly
// where the value exists in both; otherwise rounds and saturates).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hal {

enum class DType : std::uint8_t {
  f32,
  f16,
  bf16,
  f8e4m3,   // OCP e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa; max 448; no Inf
  f8e5m2,   // OCP e5m2: 1 sign, 5 exponent (bias 15), 2 mantissa; max 57344
  i8,
  i32,
  i64,
  boolean,  // one byte, 0 or 1
  f64,      // used by the CPU backend and the fp64 oracle; GPU backends decline it
  // Appended (not beside the OCP types) so the numbering above, which the GPU
  // kernels' element-type enums mirror, stays as it is.
  f8e4m3fnuz,  // FNUZ e4m3: bias 8; max 240; no Inf, no -0; NaN only 0x80
  f8e5m2fnuz,  // FNUZ e5m2: bias 16; max 57344; no Inf, no -0; NaN only 0x80
};

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16,  DType::bf16, DType::f8e4m3, DType::f8e5m2,
                                       DType::i8,  DType::i32,  DType::i64,  DType::boolean, DType::f64,
                                       DType::f8e4m3fnuz, DType::f8e5m2fnuz};

std::size_t dtype_size(DType t);           // bytes per element
std::string_view dtype_name(DType t);      // "f32", "bf16", "f8e4m3", "bool", ...
std::optional<DType> parse_dtype(std::string_view name);  // accepts the names above
bool is_floating(DType t);                 // f32 f16 bf16 f64 and the four fp8 types
bool is_fp8(DType t);                      // f8e4m3 f8e5m2 f8e4m3fnuz f8e5m2fnuz
bool is_fp8_fnuz(DType t);                 // f8e4m3fnuz f8e5m2fnuz
bool is_integer(DType t);                  // i8 i32 i64 (not bool)
double dtype_max_finite(DType t);          // largest finite value of a floating type
double dtype_epsilon(DType t);             // unit roundoff u = 2^-(mantissa bits + 1)

// Bit-exact scalar conversions.
float f16_to_f32(std::uint16_t bits);
std::uint16_t f32_to_f16(float v);
float bf16_to_f32(std::uint16_t bits);
std::uint16_t f32_to_bf16(float v);
float f8e4m3_to_f32(std::uint8_t bits);
std::uint8_t f32_to_f8e4m3(float v);       // saturating
float f8e5m2_to_f32(std::uint8_t bits);
std::uint8_t f32_to_f8e5m2(float v);       // saturating for finite values
float f8e4m3fnuz_to_f32(std::uint8_t bits);
std::uint8_t f32_to_f8e4m3fnuz(float v);   // saturating; NaN -> 0x80; never -0
float f8e5m2fnuz_to_f32(std::uint8_t bits);
std::uint8_t f32_to_f8e5m2fnuz(float v);   // saturating; NaN -> 0x80; never -0

// Rounds a double to float with round-to-odd. Converting that float on to a
// 16- or 8-bit type (RNE) gives the correctly rounded result of the double, so
// fp64 results are rounded once, not twice.
float f64_to_f32_round_odd(double v);

// Element access for reference code: reads element `index` of a contiguous
// array of type `t` as double / writes a double into it, rounding once to `t`
// (RNE; integers round to nearest and saturate; bool is v != 0).
double load_element(const void* base, DType t, std::int64_t index);
void store_element(void* base, DType t, std::int64_t index, double v);
// Same for float: fp32 compute paths use these to avoid a double round trip.
float load_element_f32(const void* base, DType t, std::int64_t index);
void store_element_f32(void* base, DType t, std::int64_t index, float v);

}  // namespace hal
