#include "hal/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace hal {

// ---------------------------------------------------------------------------
// Names and properties

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::bf16: return 2;
    case DType::f8e4m3: return 1;
    case DType::f8e5m2: return 1;
    case DType::i8: return 1;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::boolean: return 1;
    case DType::f64: return 8;
    case DType::f8e4m3fnuz: return 1;
    case DType::f8e5m2fnuz: return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f8e4m3: return "f8e4m3";
    case DType::f8e5m2: return "f8e5m2";
    case DType::i8: return "i8";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
    case DType::f64: return "f64";
    case DType::f8e4m3fnuz: return "f8e4m3fnuz";
    case DType::f8e5m2fnuz: return "f8e5m2fnuz";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"float32", DType::f32}, {"fp32", DType::f32},    {"float16", DType::f16}, {"fp16", DType::f16},
      {"bfloat16", DType::bf16}, {"float64", DType::f64}, {"int8", DType::i8},    {"int32", DType::i32},
      {"int64", DType::i64},   {"e4m3", DType::f8e4m3}, {"e5m2", DType::f8e5m2},
      {"e4m3fn", DType::f8e4m3}, {"f8e4m3fn", DType::f8e4m3}, {"float8_e4m3fn", DType::f8e4m3},
      {"float8_e5m2", DType::f8e5m2}, {"e4m3fnuz", DType::f8e4m3fnuz}, {"float8_e4m3fnuz", DType::f8e4m3fnuz},
      {"e5m2fnuz", DType::f8e5m2fnuz}, {"float8_e5m2fnuz", DType::f8e5m2fnuz},
  };
  for (const Alias& a : kAliases)
    if (a.name == name) return a.type;
  return std::nullopt;
}

bool is_floating(DType t) {
  switch (t) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
    case DType::f8e4m3:
    case DType::f8e5m2:
    case DType::f8e4m3fnuz:
    case DType::f8e5m2fnuz:
    case DType::f64: return true;
    default: return false;
  }
}

bool is_fp8(DType t) { return t == DType::f8e4m3 || t == DType::f8e5m2 || is_fp8_fnuz(t); }

bool is_fp8_fnuz(DType t) { return t == DType::f8e4m3fnuz || t == DType::f8e5m2fnuz; }

bool is_integer(DType t) { return t == DType::i8 || t == DType::i32 || t == DType::i64; }

double dtype_max_finite(DType t) {
  switch (t) {
    case DType::f32: return std::numeric_limits<float>::max();
    case DType::f16: return 65504.0;
    case DType::bf16: return 0x1.fep127;  // (2 - 2^-7) * 2^127
    case DType::f8e4m3: return 448.0;
    case DType::f8e5m2: return 57344.0;
    case DType::f8e4m3fnuz: return 240.0;
    case DType::f8e5m2fnuz: return 57344.0;
    case DType::f64: return std::numeric_limits<double>::max();
    // Not floating types; the largest representable value is the useful answer.
    case DType::i8: return 127.0;
    case DType::i32: return 2147483647.0;
    case DType::i64: return 9223372036854775807.0;
    case DType::boolean: return 1.0;
  }
  return 0.0;
}

double dtype_epsilon(DType t) {
  switch (t) {
    case DType::f32: return 0x1p-24;
    case DType::f16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
    case DType::f8e4m3: return 0x1p-4;
    case DType::f8e5m2: return 0x1p-3;
    case DType::f8e4m3fnuz: return 0x1p-4;
    case DType::f8e5m2fnuz: return 0x1p-3;
    case DType::f64: return 0x1p-53;
    default: return 0.0;
  }
}

// ---------------------------------------------------------------------------
// Conversions, by integer bit manipulation only: the results do not depend on
// the host's rounding mode, flush-to-zero flags or excess precision, and they
// match NVIDIA's cvt.rn (f16, bf16) and cvt.rn.satfinite (fp8) bit for bit.

namespace {

// A binary floating format without its special values: `mant_bits` stored
// mantissa bits, `exp_min` the exponent of the smallest normal (1 - bias).
struct Format {
  int mant_bits;
  int exp_min;
};

constexpr Format kF32{23, -126};
constexpr Format kF16{10, -14};
constexpr Format kBF16{7, -126};
constexpr Format kE4M3{3, -6};
constexpr Format kE5M2{2, -14};
constexpr Format kE4M3Fnuz{3, -7};   // bias 8
constexpr Format kE5M2Fnuz{2, -15};  // bias 16

enum class Rounding { nearest_even, odd };

// Encodes |v| = mant * 2^exp (mant != 0, below 2^63) in `f`: returns the
// magnitude bits (exponent field << mant_bits | mantissa), rounded. The result
// may exceed the format's largest finite encoding; callers handle overflow.
// One formula covers normals and subnormals: the quantum of the result is
// 2^q with q = max(exponent of v, exp_min) - mant_bits, and the encoding is
// ((q - exp_min + mant_bits) << mant_bits) + round(v / 2^q) because the
// rounded significand's leading bit carries into the exponent field.
std::uint64_t encode_magnitude(std::uint64_t mant, int exp, Format f, Rounding mode) {
  const int top = 63 - std::countl_zero(mant);
  const int value_exp = exp + top;
  const int q = (value_exp > f.exp_min ? value_exp : f.exp_min) - f.mant_bits;
  const int shift = q - exp;
  std::uint64_t r;
  if (shift <= 0) {
    r = mant << -shift;  // exact
  } else if (shift >= 64) {
    // Everything is below half a quantum (mant < 2^63 <= 2^(shift-1)).
    r = mode == Rounding::odd ? 1 : 0;
  } else {
    r = mant >> shift;
    const std::uint64_t rem = mant & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (mode == Rounding::odd) {
      if (rem != 0) r |= 1;
    } else if (rem > half || (rem == half && (r & 1))) {
      ++r;
    }
  }
  return (static_cast<std::uint64_t>(q - f.exp_min + f.mant_bits) << f.mant_bits) + r;
}

// A finite nonzero f32 as mant * 2^exp; returns false for zero.
bool decompose_f32(std::uint32_t abs_bits, std::uint64_t& mant, int& exp) {
  if (abs_bits == 0) return false;
  const std::uint32_t e = abs_bits >> 23, m = abs_bits & 0x7FFFFFu;
  if (e == 0) {
    mant = m;
    exp = -149;
  } else {
    mant = m | 0x800000u;
    exp = static_cast<int>(e) - 150;
  }
  return true;
}

// Decodes magnitude bits of format `f` (exponent field != all-ones handled by
// the caller) into f32 bits, exactly.
std::uint32_t decode_to_f32_bits(std::uint32_t abs_bits, Format f) {
  const std::uint32_t mant_mask = (1u << f.mant_bits) - 1;
  std::uint32_t m = abs_bits & mant_mask;
  int e = static_cast<int>(abs_bits >> f.mant_bits);
  if (e == 0) {
    if (m == 0) return 0;
    // Subnormal: normalise so the leading 1 becomes the implicit bit.
    e = 1;
    while ((m & (1u << f.mant_bits)) == 0) {
      m <<= 1;
      --e;
    }
    m &= mant_mask;
  }
  const int unbiased = e - 1 + f.exp_min;  // exponent of a normal with field e
  return static_cast<std::uint32_t>(unbiased + 127) << 23 | m << (23 - f.mant_bits);
}

std::uint32_t f32_bits(float v) { return std::bit_cast<std::uint32_t>(v); }
float f32_from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

// The narrow encodings below work on the magnitude; the sign is put back last.
struct SignedBits {
  std::uint32_t sign;  // 0 or 1
  std::uint32_t abs;
};
SignedBits split(float v) {
  const std::uint32_t b = f32_bits(v);
  return {b >> 31, b & 0x7FFFFFFFu};
}

constexpr std::uint32_t kF32Inf = 0x7F800000u;

// f16 and bf16: IEEE overflow to infinity. NaN becomes the canonical 0x7FFF
// that cvt.rn.f16.f32 / cvt.rn.bf16.f32 produce (sign not kept).
std::uint16_t f32_to_ieee16(float v, Format f, std::uint32_t inf_bits) {
  const SignedBits s = split(v);
  if (s.abs > kF32Inf) return 0x7FFF;
  std::uint64_t enc = inf_bits;
  std::uint64_t mant;
  int exp;
  if (s.abs == kF32Inf) {
    enc = inf_bits;
  } else if (!decompose_f32(s.abs, mant, exp)) {
    enc = 0;
  } else {
    enc = encode_magnitude(mant, exp, f, Rounding::nearest_even);
    if (enc > inf_bits) enc = inf_bits;
  }
  return static_cast<std::uint16_t>(s.sign << 15 | enc);
}

// fp8 with cvt.rn.satfinite semantics: beyond the largest finite value
// (infinities included) saturate; NaN becomes `nan_bits` with the sign kept.
std::uint8_t f32_to_fp8(float v, Format f, std::uint32_t max_bits, std::uint32_t nan_bits) {
  const SignedBits s = split(v);
  std::uint64_t enc;
  std::uint64_t mant;
  int exp;
  if (s.abs > kF32Inf) {
    enc = nan_bits;
  } else if (s.abs == kF32Inf) {
    enc = max_bits;
  } else if (!decompose_f32(s.abs, mant, exp)) {
    enc = 0;
  } else {
    enc = encode_magnitude(mant, exp, f, Rounding::nearest_even);
    if (enc > max_bits) enc = max_bits;
  }
  return static_cast<std::uint8_t>(s.sign << 7 | enc);
}

// FNUZ fp8: every encoding but 0x80 is finite (0x7F is the largest), so
// beyond it saturate; NaN is 0x80; zero, and anything rounding to zero, is
// +0 whatever its sign, because the negative-zero pattern is the NaN.
std::uint8_t f32_to_fp8_fnuz(float v, Format f) {
  const SignedBits s = split(v);
  if (s.abs > kF32Inf) return 0x80u;
  std::uint64_t enc = 0x7Fu;
  std::uint64_t mant;
  int exp;
  if (s.abs == kF32Inf) {
    enc = 0x7Fu;
  } else if (!decompose_f32(s.abs, mant, exp)) {
    return 0;
  } else {
    enc = encode_magnitude(mant, exp, f, Rounding::nearest_even);
    if (enc > 0x7Fu) enc = 0x7Fu;
    if (enc == 0) return 0;
  }
  return static_cast<std::uint8_t>(s.sign << 7 | enc);
}

float fp8_fnuz_to_f32(std::uint8_t bits, Format f) {
  if (bits == 0x80u) return f32_from_bits(0x7FC00000u);
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 7) << 31;
  return f32_from_bits(sign | decode_to_f32_bits(bits & 0x7Fu, f));
}

}  // namespace

float f16_to_f32(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 15) << 31;
  const std::uint32_t abs = bits & 0x7FFFu;
  if (abs >= 0x7C00u)  // Inf or NaN (payload kept, shifted into place)
    return f32_from_bits(sign | kF32Inf | (abs & 0x3FFu) << 13);
  return f32_from_bits(sign | decode_to_f32_bits(abs, kF16));
}

std::uint16_t f32_to_f16(float v) { return f32_to_ieee16(v, kF16, 0x7C00u); }

float bf16_to_f32(std::uint16_t bits) { return f32_from_bits(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t f32_to_bf16(float v) { return f32_to_ieee16(v, kBF16, 0x7F80u); }

float f8e4m3_to_f32(std::uint8_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 7) << 31;
  const std::uint32_t abs = bits & 0x7Fu;
  if (abs == 0x7Fu) return f32_from_bits(sign | 0x7FC00000u);  // the only NaN; no infinity
  return f32_from_bits(sign | decode_to_f32_bits(abs, kE4M3));
}

std::uint8_t f32_to_f8e4m3(float v) { return f32_to_fp8(v, kE4M3, 0x7Eu, 0x7Fu); }

float f8e5m2_to_f32(std::uint8_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 7) << 31;
  const std::uint32_t abs = bits & 0x7Fu;
  if (abs >= 0x7Cu) return f32_from_bits(sign | kF32Inf | (abs & 0x3u) << 21);
  return f32_from_bits(sign | decode_to_f32_bits(abs, kE5M2));
}

std::uint8_t f32_to_f8e5m2(float v) { return f32_to_fp8(v, kE5M2, 0x7Bu, 0x7Eu); }

float f8e4m3fnuz_to_f32(std::uint8_t bits) { return fp8_fnuz_to_f32(bits, kE4M3Fnuz); }
std::uint8_t f32_to_f8e4m3fnuz(float v) { return f32_to_fp8_fnuz(v, kE4M3Fnuz); }
float f8e5m2fnuz_to_f32(std::uint8_t bits) { return fp8_fnuz_to_f32(bits, kE5M2Fnuz); }
std::uint8_t f32_to_f8e5m2fnuz(float v) { return f32_to_fp8_fnuz(v, kE5M2Fnuz); }

float f64_to_f32_round_odd(double v) {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(v);
  const std::uint32_t sign = static_cast<std::uint32_t>(b >> 63) << 31;
  const std::uint64_t abs = b & 0x7FFFFFFFFFFFFFFFull;
  constexpr std::uint64_t kF64Inf = 0x7FF0000000000000ull;
  if (abs > kF64Inf) return f32_from_bits(sign | 0x7FC00000u | static_cast<std::uint32_t>((abs >> 29) & 0x3FFFFFu));
  if (abs == kF64Inf) return f32_from_bits(sign | kF32Inf);
  if (abs == 0) return f32_from_bits(sign);
  const std::uint64_t e = abs >> 52, m = abs & 0xFFFFFFFFFFFFFull;
  const std::uint64_t mant = e == 0 ? m : m | (std::uint64_t{1} << 52);
  const int exp = e == 0 ? -1074 : static_cast<int>(e) - 1075;
  std::uint64_t enc = encode_magnitude(mant, exp, kF32, Rounding::odd);
  // Round-to-odd never reaches infinity: past the largest finite float the
  // truncated result is 0x7F7FFFFF (odd), which any later RNE to a narrower
  // type still rounds to overflow/saturation as the exact value would.
  if (enc >= kF32Inf) enc = 0x7F7FFFFFu;
  return f32_from_bits(sign | static_cast<std::uint32_t>(enc));
}

// ---------------------------------------------------------------------------
// Element access

namespace {

template <typename T>
T load_as(const void* base, std::int64_t index) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + index * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
  return v;
}

template <typename T>
void store_as(void* base, std::int64_t index, T v) {
  std::memcpy(static_cast<char*>(base) + index * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
}

// Round to nearest, ties to even, saturate to [lo, hi], NaN -> 0. std::trunc
// and the subtraction below are exact, so no rounding mode is involved.
template <typename T>
T double_to_int(double v) {
  constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (std::isnan(v)) return 0;
  // -2^(bits-1) is exact in double; hi + 1 = 2^(bits-1) is too.
  const double lo_d = static_cast<double>(lo), hi_plus_one = -lo_d;
  if (v <= lo_d) return lo;
  if (v >= hi_plus_one) return hi;
  const double t = std::trunc(v);
  const double frac = v - t;  // exact: |v| < 2^63 and t is its integer part
  std::int64_t r = static_cast<std::int64_t>(t);
  if (frac > 0.5 || (frac == 0.5 && (r & 1))) ++r;
  else if (frac < -0.5 || (frac == -0.5 && (r & 1))) --r;
  if (r > static_cast<std::int64_t>(hi)) return hi;  // e.g. 127.5 -> 128 for i8
  if (r < static_cast<std::int64_t>(lo)) return lo;
  return static_cast<T>(r);
}

}  // namespace

double load_element(const void* base, DType t, std::int64_t index) {
  switch (t) {
    case DType::f64: return load_as<double>(base, index);
    case DType::i32: return load_as<std::int32_t>(base, index);
    case DType::i64: return static_cast<double>(load_as<std::int64_t>(base, index));
    default: return load_element_f32(base, t, index);
  }
}

void store_element(void* base, DType t, std::int64_t index, double v) {
  switch (t) {
    case DType::f64: store_as<double>(base, index, v); return;
    case DType::f32: store_as<float>(base, index, static_cast<float>(v)); return;  // IEEE RNE
    case DType::f16:
    case DType::bf16:
    case DType::f8e4m3:
    case DType::f8e5m2:
    case DType::f8e4m3fnuz:
    case DType::f8e5m2fnuz:
      // Round to odd first, so the second rounding (RNE) is the only one.
      store_element_f32(base, t, index, f64_to_f32_round_odd(v));
      return;
    case DType::i8: store_as<std::int8_t>(base, index, double_to_int<std::int8_t>(v)); return;
    case DType::i32: store_as<std::int32_t>(base, index, double_to_int<std::int32_t>(v)); return;
    case DType::i64: store_as<std::int64_t>(base, index, double_to_int<std::int64_t>(v)); return;
    case DType::boolean: store_as<std::uint8_t>(base, index, v != 0.0 ? 1 : 0); return;
  }
}

float load_element_f32(const void* base, DType t, std::int64_t index) {
  switch (t) {
    case DType::f32: return load_as<float>(base, index);
    case DType::f16: return f16_to_f32(load_as<std::uint16_t>(base, index));
    case DType::bf16: return bf16_to_f32(load_as<std::uint16_t>(base, index));
    case DType::f8e4m3: return f8e4m3_to_f32(load_as<std::uint8_t>(base, index));
    case DType::f8e5m2: return f8e5m2_to_f32(load_as<std::uint8_t>(base, index));
    case DType::f8e4m3fnuz: return f8e4m3fnuz_to_f32(load_as<std::uint8_t>(base, index));
    case DType::f8e5m2fnuz: return f8e5m2fnuz_to_f32(load_as<std::uint8_t>(base, index));
    case DType::i8: return load_as<std::int8_t>(base, index);
    case DType::i32: return static_cast<float>(load_as<std::int32_t>(base, index));
    case DType::i64: return static_cast<float>(load_as<std::int64_t>(base, index));
    case DType::boolean: return load_as<std::uint8_t>(base, index) != 0 ? 1.0f : 0.0f;
    case DType::f64: return static_cast<float>(load_as<double>(base, index));
  }
  return 0.0f;
}

void store_element_f32(void* base, DType t, std::int64_t index, float v) {
  switch (t) {
    case DType::f32: store_as<float>(base, index, v); return;
    case DType::f16: store_as<std::uint16_t>(base, index, f32_to_f16(v)); return;
    case DType::bf16: store_as<std::uint16_t>(base, index, f32_to_bf16(v)); return;
    case DType::f8e4m3: store_as<std::uint8_t>(base, index, f32_to_f8e4m3(v)); return;
    case DType::f8e5m2: store_as<std::uint8_t>(base, index, f32_to_f8e5m2(v)); return;
    case DType::f8e4m3fnuz: store_as<std::uint8_t>(base, index, f32_to_f8e4m3fnuz(v)); return;
    case DType::f8e5m2fnuz: store_as<std::uint8_t>(base, index, f32_to_f8e5m2fnuz(v)); return;
    case DType::f64: store_as<double>(base, index, static_cast<double>(v)); return;
    default: store_element(base, t, index, static_cast<double>(v)); return;  // integers, bool: exact widening
  }
}

}  // namespace hal
