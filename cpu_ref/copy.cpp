// Copy: y = x element for element, through any strides (a permuted or
// broadcast x into a strided y).
//
// Same dtype: the element's bytes are moved unchanged, so every dtype
// (integers, bool, NaN payloads) is exact; nothing goes through a float.
// Different dtypes: the value is converted through fp64 and rounded once by
// hal::store_element (exact for every integer up to 2^53).
#include <cstring>

#include "cpu_ref/elementwise.h"
#include "cpu_ref/kernels.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

namespace {

// `streaming`: y is too large for the caches to keep (rows_access.h), so a
// contiguous block is written with streaming stores (no read of the lines it
// overwrites: two bytes of traffic per byte copied instead of three).
template <std::size_t Bytes>
void copy_bytes_block(const StridedLayout<2>& layout, const Tensor& x, const Tensor& y, std::int64_t start,
                      std::int64_t n, bool streaming) {
  const auto* src = static_cast<const unsigned char*>(x.data);
  auto* dst = static_cast<unsigned char*>(y.data);
  if (layout.contiguous[0] && layout.contiguous[1]) {
    unsigned char* to = dst + (layout.offsets[1] + start) * Bytes;
    const unsigned char* from = src + (layout.offsets[0] + start) * Bytes;
    const auto bytes = static_cast<std::int64_t>(static_cast<std::size_t>(n) * Bytes);
    if (streaming) vector_kernels().copy_streaming(to, from, bytes);
    else std::memcpy(to, from, static_cast<std::size_t>(bytes));
    return;
  }
  StridedCursor<2> cursor(layout, start);
  for (std::int64_t i = 0; i < n; ++i, cursor.advance())
    std::memcpy(dst + cursor.offset(1) * Bytes, src + cursor.offset(0) * Bytes, Bytes);
}

void copy_converting_block(const StridedLayout<2>& layout, const Tensor& x, const Tensor& y, std::int64_t start,
                           std::int64_t n) {
  StridedCursor<2> cursor(layout, start);
  for (std::int64_t i = 0; i < n; ++i, cursor.advance())
    store_element(y.data, y.dtype, cursor.offset(1), load_element(x.data, x.dtype, cursor.offset(0)));
}

}  // namespace

void copy(const CopyCall& call) {
  const Tensor x = broadcast_view(call.x, call.y.shape);
  const Tensor& y = call.y;
  const StridedLayout<2> layout(y.shape, {&x, &y});
  const bool same_dtype = x.dtype == y.dtype;
  const std::size_t bytes = dtype_size(y.dtype);
  const bool streaming = streams_output(y);
  parallel_blocks(y.numel(), [&](std::int64_t start, std::int64_t n) {
    if (!same_dtype) return copy_converting_block(layout, x, y, start, n);
    switch (bytes) {
      case 1: return copy_bytes_block<1>(layout, x, y, start, n, streaming);
      case 2: return copy_bytes_block<2>(layout, x, y, start, n, streaming);
      case 4: return copy_bytes_block<4>(layout, x, y, start, n, streaming);
      default: return copy_bytes_block<8>(layout, x, y, start, n, streaming);
    }
  });
}

}  // namespace hal::cpu_ref
