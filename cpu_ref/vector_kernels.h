#pragma once
// Contiguous fp32 loops for the memory-bound kernels (elementwise, softmax,
// norm), with one implementation per ISA chosen at run time, like the gemm
// micro-kernels: a portable one (baseline x86-64, any compiler) and an AVX2 +
// FMA + F16C one (vector_kernels_avx2.cpp). The choice is made once per
// process, so every call on a machine rounds the same way; results may differ
// between the two tables within the accuracy contract (exp's polynomial uses
// FMA on AVX2), never between thread counts.
//
// Every function works on contiguous runs; strided views are gathered into
// contiguous scratch first (rows_access.h, element_io.h), so fast and strided
// paths reach the same function and give the same bits.
//
// Contracts common to all entries: n >= 0; input and output runs either do not
// overlap or are the same array (in place); the 16-bit conversions are bit for
// bit hal::f32_to_bf16 / f32_to_f16 and their inverses (half_convert.h).
#include <cstdint>
#include <span>

#include "cpu_ref/prefetch.h"
#include "hal/dtype.h"
#include "hal/tensor.h"

namespace hal::cpu_ref {

// The elementwise ops with a fused contiguous form (VectorKernels::map1_fused /
// map2_fused). The binary ones are the IEEE operations of cpu_ref/binary.cpp
// (maximum/minimum propagate NaN and order -0 below +0); exp, sigmoid, silu,
// gelu, gelu_tanh, tanh and log are the entries below; relu, neg, abs, sqrt and rsqrt
// (1 / sqrt) are exact or correctly rounded, the bits of the scalar forms of
// cpu_ref/unary.cpp; swiglu is silu(a) * b.
enum class FusedOp : std::uint8_t {
  add, sub, mul, div, maximum, minimum, exp, sigmoid, silu, gelu, gelu_tanh, tanh, log, relu, neg, abs, sqrt, rsqrt, swiglu
};

// A row's max (NaN need not propagate, as in VectorKernels::max) and its
// largest magnitude, NaN when the row holds a NaN (it orders above +inf).
struct RowMax {
  float max;
  float abs_max;
};

struct VectorKernels {
  const char* name;

  // out[i] = src[i] widened to fp32; t is f32, bf16 or f16.
  void (*widen)(const void* src, DType t, std::int64_t n, float* out);
  // dst[i] = in[i] rounded once to t (f32, bf16 or f16).
  void (*narrow)(void* dst, DType t, std::int64_t n, const float* in);
  // The same bits as narrow, written with non-temporal (streaming) stores
  // and fenced before returning. For outputs much larger than the caches:
  // a plain store first reads the line it writes (read-for-ownership), so a
  // read-x-write-y kernel moves three bytes per two; streaming moves two.
  void (*narrow_streaming)(void* dst, DType t, std::int64_t n, const float* in);
  // memcpy(dst, src, bytes) with streaming stores (fenced before returning),
  // for the copy op's large outputs; the portable table calls memcpy.
  void (*copy_streaming)(void* dst, const void* src, std::int64_t bytes);

  // Elementwise maps. exp: <= 2 ulp over the whole float range (exp(-inf) = 0,
  // overflow to +inf, NaN stays NaN); sigmoid = 1 / (1 + exp(-x)); silu = x *
  // sigmoid(x); swiglu = silu(g) * u.
  void (*exp)(const float* x, float* y, std::int64_t n);
  void (*sigmoid)(const float* x, float* y, std::int64_t n);
  void (*silu)(const float* x, float* y, std::int64_t n);
  // gelu = x Phi(x), gelu_tanh = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2,
  // both on this exp (gelu_approx.h), within the contract's absolute bound.
  void (*gelu)(const float* x, float* y, std::int64_t n);
  void (*gelu_tanh)(const float* x, float* y, std::int64_t n);
  // tanh within the contract's 4 ulp (tanh_approx.h), on this exp.
  void (*tanh)(const float* x, float* y, std::int64_t n);
  // Natural log within the contract's bound (log_approx.h: Cephes' form,
  // about 1 ulp), C library special values.
  void (*log)(const float* x, float* y, std::int64_t n);
  void (*swiglu)(const float* g, const float* u, float* y, std::int64_t n);
  // y = x * s.
  void (*scale)(const float* x, float s, float* y, std::int64_t n);

  // Reductions in the fixed order of rows_math.h (32 interleaved lanes
  // combined pairwise): the order depends on n only.
  float (*max)(const float* x, std::int64_t n);  // n >= 1; NaN need not propagate (callers see it through exp)
  // rows::first_extreme: the index of the first largest / smallest x[i], or
  // of the first NaN (reduce's argmax, max and min).
  std::int64_t (*first_extreme)(const float* x, std::int64_t n, bool largest);
  float (*sum)(const float* x, std::int64_t n);
  float (*sum_squares)(const float* x, std::int64_t n);
  float (*sum_squared_deviations)(const float* x, float mean, std::int64_t n);  // sum (x - mean)^2
  // out[r] = sum a_r[i] * b[i] for the rows a_r = a + r * a_stride, r in
  // [0, count): each product rounded, then summed as sum is, so the same bits
  // in every table and for every count (attention's row path scores, several
  // query heads against one key, attention_rows.cpp). b is f32 or bf16,
  // widened (exactly) as it is read.
  void (*dot_rows)(const float* a, std::int64_t count, std::int64_t a_stride, const void* b, DType b_type,
                   std::int64_t n, float* out);
  // y = exp(x - m), returns the sum of y in the fixed lane order.
  // `abs_bound` is NaN, or a bound that every |x[i]| is known not to pass
  // (softmax's first pass gives it, RowMax): with it a table may skip a
  // range test of its own (the AVX2 table's pass over the row). The result
  // does not depend on it.
  //
  // This and the norms' store passes (rms/layer_apply_narrow) take the next
  // row as a PrefetchHint and request its lines spread over their loop
  // (prefetch.h); no effect on the result. Softmax's exp pass is its long
  // compute-only one; the norms have none, and requesting the next row
  // while storing this one keeps reads and writes flowing together, as a
  // copy does (on the 2-core VM: rmsnorm at 256 MiB about 75% -> 88% of copy).
  float (*exp_shifted_sum)(const float* x, float m, float* y, std::int64_t n, float abs_bound, PrefetchHint next);

  // Norm epilogues: rms: y = (x * rstd) * w; layer: y = ((x - mean) * rstd) * w
  // (+ b when b is not null).
  void (*rms_apply)(const float* x, float rstd, const float* w, float* y, std::int64_t n);
  void (*layer_apply)(const float* x, float mean, float rstd, const float* w, const float* b, float* y,
                      std::int64_t n);

  // Fused forms for contiguous rows, one pass instead of two: bit for bit the
  // composition of the entries above (so a strided row, gathered first, gives
  // the same result), with fewer loads and stores per element.
  // widen_sum: widen(src -> out), returns sum(out); widen_sum_squares likewise.
  float (*widen_sum)(const void* src, DType t, std::int64_t n, float* out);
  float (*widen_sum_squares)(const void* src, DType t, std::int64_t n, float* out);
  // scale + narrow / rms_apply + narrow / layer_apply + narrow into dst of
  // dtype t, streaming (narrow_streaming) when asked.
  void (*scale_narrow)(const float* x, float s, void* dst, DType t, std::int64_t n, bool streaming);
  void (*rms_apply_narrow)(const float* x, float rstd, const float* w, void* dst, DType t, std::int64_t n,
                           bool streaming, PrefetchHint next);
  void (*layer_apply_narrow)(const float* x, float mean, float rstd, const float* w, const float* b, void* dst,
                             DType t, std::int64_t n, bool streaming, PrefetchHint next);
  // widen(src -> out), then out *= scale unless scale is 1 (as scale does),
  // returns max(out) and the largest |out[i]| (n >= 1): the softmax row's
  // first pass, reading the source once.
  RowMax (*widen_scale_max)(const void* src, DType t, std::int64_t n, float scale, float* out);
  // widen_scale_max's result for an f32 row and scale 1, storing nothing:
  // softmax then reads such a row where it lies instead of copying it.
  RowMax (*row_max)(const float* x, std::int64_t n);

  // Whole elementwise ops on contiguous runs whose operands all have dtype t
  // (f32, bf16 or f16): widen, op, narrow (streaming when asked), in registers,
  // with no fp32 scratch. Bit for bit widen + the fp32 op + narrow, so the
  // result equals the general gather/compute/scatter path of elementwise.h.
  // map1_fused takes the unary ops of FusedOp; map2_fused the binary ops and
  // swiglu (a = gate, b = up). Null where a table has no fused form (the
  // caller then takes the general path).
  void (*map1_fused)(FusedOp op, const void* x, DType t, void* y, std::int64_t n, bool streaming);
  void (*map2_fused)(FusedOp op, const void* a, const void* b, DType t, void* y, std::int64_t n, bool streaming);

  // acc[c] += p[j] * rows[j * row_stride + c] for j = 0, 1, ... count - 1 in
  // turn: one fused multiply-add per step in the AVX2 table, a multiply and
  // an add in the portable one, as the gemm micro-kernels of the same ISA
  // step. So a run split into several calls gives the same bits. (Attention's
  // P V: the part a query does not share with its panel in
  // attention_blocked.cpp; all of it in attention_rows.cpp.)
  // The rows are f32 or bf16 (rows_type; row_stride in elements), widened
  // (exactly) as they are read.
  void (*weighted_row_sum)(const float* p, const void* rows, DType rows_type, std::int64_t count,
                           std::int64_t row_stride, std::int64_t n, float* acc);
};

const VectorKernels& vector_kernels_portable();
// Null when the build has no AVX2 version; only call it when the CPU has AVX2+FMA+F16C.
const VectorKernels* vector_kernels_avx2();

// Every table this CPU can run, portable first.
std::span<const VectorKernels* const> vector_kernels_available();
// The table every kernel uses: the most capable one, or the one named by the
// HAL_CPU_VECTOR_KERNELS environment variable (a name prefix), read once.
const VectorKernels& vector_kernels();

// Outputs at least this large are written with narrow_streaming: far beyond
// what the caches keep for the next op, so the stores would only evict.
inline constexpr std::int64_t kStreamingStoreBytes = std::int64_t{16} << 20;

// Whether a kernel writing y should use streaming stores.
inline bool streams_output(const Tensor& y) {
  return y.numel() * static_cast<std::int64_t>(dtype_size(y.dtype)) >= kStreamingStoreBytes;
}

// True when t has a widen/narrow entry (f32, bf16, f16).
inline bool vector_dtype(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

}  // namespace hal::cpu_ref
