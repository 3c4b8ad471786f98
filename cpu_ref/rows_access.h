#pragma once
// Row access for the row-wise reference kernels (reduce, softmax, norm, rope,
// attention): loading a strided row of any dtype into a contiguous scratch
// array of the compute type T (float, or double for the fp64 oracle), storing
// it back with one rounding per element, and locating row starts in tensors of
// arbitrary (non-negative) strides.
//
// Element indices are relative to Tensor::data (they already include
// Tensor::offset), as hal::load_element expects.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu_ref/half_convert.h"
#include "cpu_ref/prefetch.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/dtype.h"
#include "hal/tensor.h"

namespace hal::cpu_ref::rows {

template <class T> inline T load(const void* base, DType t, std::int64_t index) {
  if constexpr (std::is_same_v<T, double>) {
    return load_element(base, t, index);
  } else {
    return load_element_f32(base, t, index);
  }
}

template <class T> inline void store(void* base, DType t, std::int64_t index, T v) {
  if constexpr (std::is_same_v<T, double>) {
    store_element(base, t, index, v);
  } else {
    store_element_f32(base, t, index, v);
  }
}

// The dtype whose values T holds exactly, for the memcpy fast path.
template <class T> inline constexpr DType native_dtype = std::is_same_v<T, double> ? DType::f64 : DType::f32;

// out[k] = x[start + k * stride], k < n, widened to T. fp32 rows of f32, bf16
// or f16 take the vector kernels (contiguous) or the inline converters
// (strided); the conversion is exact either way.
template <class T> void gather(const Tensor& x, std::int64_t start, std::int64_t stride, std::int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    if (stride == 1 && vector_dtype(x.dtype)) {
      vector_kernels().widen(static_cast<const char*>(x.data) + start * static_cast<std::int64_t>(dtype_size(x.dtype)),
                             x.dtype, n, out);
      return;
    }
    if (x.dtype == DType::bf16 || x.dtype == DType::f16) {
      const auto* p = static_cast<const std::uint16_t*>(x.data) + start;
      if (x.dtype == DType::bf16) {
        for (std::int64_t k = 0; k < n; ++k) out[k] = bf16_bits_to_float(p[k * stride]);
      } else {
        for (std::int64_t k = 0; k < n; ++k) out[k] = f16_bits_to_float(p[k * stride]);
      }
      return;
    }
  }
  if (x.dtype == native_dtype<T>) {
    const T* p = static_cast<const T*>(x.data) + start;
    if (stride == 1) {
      if (n > 0) std::memcpy(out, p, static_cast<std::size_t>(n) * sizeof(T));
    } else {
      for (std::int64_t k = 0; k < n; ++k) out[k] = p[k * stride];
    }
    return;
  }
  for (std::int64_t k = 0; k < n; ++k) out[k] = load<T>(x.data, x.dtype, start + k * stride);
}

// y[start + k * stride] = in[k], k < n, each rounded once to y's dtype (the
// same fast paths as gather; `streaming` asks for non-temporal stores on the
// contiguous one, see VectorKernels::narrow_streaming).
template <class T>
void scatter(const Tensor& y, std::int64_t start, std::int64_t stride, std::int64_t n, const T* in,
             bool streaming = false) {
  if constexpr (std::is_same_v<T, float>) {
    if (stride == 1 && vector_dtype(y.dtype)) {
      const VectorKernels& vk = vector_kernels();
      (streaming ? vk.narrow_streaming : vk.narrow)(
          static_cast<char*>(y.data) + start * static_cast<std::int64_t>(dtype_size(y.dtype)), y.dtype, n, in);
      return;
    }
    if (y.dtype == DType::bf16 || y.dtype == DType::f16) {
      auto* p = static_cast<std::uint16_t*>(y.data) + start;
      if (y.dtype == DType::bf16) {
        for (std::int64_t k = 0; k < n; ++k) p[k * stride] = float_to_bf16_bits(in[k]);
      } else {
        for (std::int64_t k = 0; k < n; ++k) p[k * stride] = float_to_f16_bits(in[k]);
      }
      return;
    }
  }
  if (y.dtype == native_dtype<T>) {
    T* p = static_cast<T*>(y.data) + start;
    if (stride == 1) {
      if (n > 0) std::memcpy(p, in, static_cast<std::size_t>(n) * sizeof(T));
    } else {
      for (std::int64_t k = 0; k < n; ++k) p[k * stride] = in[k];
    }
    return;
  }
  for (std::int64_t k = 0; k < n; ++k) store<T>(y.data, y.dtype, start + k * stride, in[k]);
}

// Element index (relative to data) of the element whose row-major linear
// index over `shape` is `linear`, in a tensor with `strides` and `offset`.
inline std::int64_t offset_of(std::int64_t linear, const Shape& shape, const Strides& strides, std::int64_t offset) {
  std::int64_t index = offset;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    const std::int64_t extent = shape[d];
    if (extent <= 0) return index;
    index += (linear % extent) * strides[d];
    linear /= extent;
  }
  return index;
}

// The row x[start + k * stride], k < n, as a prefetch hint: empty unless it is
// contiguous (see prefetch.h).
inline PrefetchHint row_hint(const Tensor& x, std::int64_t start, std::int64_t stride, std::int64_t n) {
  if (stride != 1) return {};
  const auto esize = static_cast<std::int64_t>(dtype_size(x.dtype));
  return {static_cast<const char*>(x.data) + start * esize, n * esize};
}

// Shape of the outer dimensions when axis `axis` is the row axis.
inline Shape without_axis(const Dims& dims, int axis) {
  Dims out = dims;
  out.erase(axis);
  return out;
}

}  // namespace hal::cpu_ref::rows
