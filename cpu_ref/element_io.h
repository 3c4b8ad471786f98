#pragma once
// Moving runs of elements between tensors of any dtype and fp32/fp64 scratch
// arrays, for the elementwise kernels.
//
// A kernel works a block at a time: gather each input's block into a scratch
// array of T (float for fp32 compute, double for the fp64 oracle), compute in a
// tight loop the compiler can vectorise, scatter the result, rounding each
// element once. Contiguous f32, bf16 and f16 runs go through the vector
// kernels' widen / narrow (vector_kernels.h: AVX2 when the CPU has it, bit for
// bit hal's conversions); everything else goes through hal::load_element /
// store_element (hal/dtype.h), which define the rounding rules.
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu_ref/strided_index.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/dtype.h"

namespace hal::cpu_ref {

// Elements per block: small enough that a few scratch arrays stay in L1, large
// enough that the per-block dispatch is noise.
inline constexpr std::int64_t kBlockElements = 1024;

// out[i] = element (first + i) of the contiguous array `base` of dtype t.
template <class T>
void load_run(const void* base, DType t, std::int64_t first, std::int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    if (t == DType::f32) {
      std::memcpy(out, static_cast<const float*>(base) + first, static_cast<std::size_t>(n) * sizeof(float));
      return;
    }
    if (t == DType::bf16 || t == DType::f16) {
      vector_kernels().widen(static_cast<const std::uint16_t*>(base) + first, t, n, out);
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) out[i] = load_element_f32(base, t, first + i);
  } else {
    if (t == DType::f64) {
      std::memcpy(out, static_cast<const double*>(base) + first, static_cast<std::size_t>(n) * sizeof(double));
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) out[i] = load_element(base, t, first + i);
  }
}

// Element (first + i) of the contiguous array `base` of dtype t = in[i],
// rounded once. `streaming`: non-temporal stores for f32/bf16/f16 (see
// VectorKernels::narrow_streaming); the bits are the same either way.
template <class T>
void store_run(void* base, DType t, std::int64_t first, std::int64_t n, const T* in, bool streaming = false) {
  if constexpr (std::is_same_v<T, float>) {
    if (vector_dtype(t)) {
      const VectorKernels& vk = vector_kernels();
      void* dst = static_cast<char*>(base) + first * static_cast<std::int64_t>(dtype_size(t));
      (streaming ? vk.narrow_streaming : vk.narrow)(dst, t, n, in);
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) store_element_f32(base, t, first + i, in[i]);
  } else {
    if (t == DType::f64) {
      std::memcpy(static_cast<double*>(base) + first, in, static_cast<std::size_t>(n) * sizeof(double));
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) store_element(base, t, first + i, in[i]);
  }
}

template <class T>
T load_one(const void* base, DType t, std::int64_t index) {
  if constexpr (std::is_same_v<T, float>) return load_element_f32(base, t, index);
  else return load_element(base, t, index);
}

template <class T>
void store_one(void* base, DType t, std::int64_t index, T v) {
  if constexpr (std::is_same_v<T, float>) store_element_f32(base, t, index, v);
  else store_element(base, t, index, v);
}

// Gathers logical elements [start, start + n) of operand k of `layout` (a view
// of `t`) into out[0, n).
template <class T, int N>
void gather_block(const StridedLayout<N>& layout, int k, const Tensor& t, std::int64_t start, std::int64_t n,
                  T* out) {
  if (layout.contiguous[k]) {
    load_run(t.data, t.dtype, layout.offsets[k] + start, n, out);
    return;
  }
  StridedCursor<N> cursor(layout, start);
  for (std::int64_t i = 0; i < n; ++i, cursor.advance()) out[i] = load_one<T>(t.data, t.dtype, cursor.offset(k));
}

// Writes in[0, n) to logical elements [start, start + n) of operand k.
template <class T, int N>
void scatter_block(const StridedLayout<N>& layout, int k, const Tensor& t, std::int64_t start, std::int64_t n,
                   const T* in, bool streaming = false) {
  if (layout.contiguous[k]) {
    store_run(t.data, t.dtype, layout.offsets[k] + start, n, in, streaming);
    return;
  }
  StridedCursor<N> cursor(layout, start);
  for (std::int64_t i = 0; i < n; ++i, cursor.advance()) store_one<T>(t.data, t.dtype, cursor.offset(k), in[i]);
}

}  // namespace hal::cpu_ref
