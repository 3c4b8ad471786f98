// global_norm: sqrt of the sum of squares of a list of tensors.
//
// Each tensor's logical elements are cut into fixed chunks of kChunk; chunks
// are summed in parallel (each in the fixed lane order), then the chunk sums
// in order, then the tensors in list order, then one sqrt. The chunking
// depends on the sizes alone, so the bits do not depend on the thread count.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/strided_index.h"

namespace hal::cpu_ref {

namespace {

constexpr std::int64_t kChunk = 1 << 14;

template <class T> T sum_squares(const Tensor& x) {
  const std::int64_t n = x.numel();
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<T> partial(static_cast<std::size_t>(chunks), T(0));
  const StridedLayout<1> layout(x.shape, {&x});
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, chunks), [&](const tbb::blocked_range<std::int64_t>& br) {
    std::vector<T> v(static_cast<std::size_t>(kChunk));
    for (std::int64_t k = br.begin(); k != br.end(); ++k) {
      const std::int64_t first = k * kChunk, len = std::min(kChunk, n - first);
      StridedCursor<1> at(layout, first);
      for (std::int64_t i = 0; i < len; ++i, at.advance()) v[static_cast<std::size_t>(i)] = rows::load<T>(x.data, x.dtype, at.offset(0));
      partial[static_cast<std::size_t>(k)] = rows::fixed_dot(v.data(), v.data(), len);
    }
  });
  T total = T(0);
  for (T p : partial) total += p;
  return total;
}

template <class T> void global_norm_typed(const GlobalNormCall& c) {
  T total = T(0);
  for (const Tensor& x : c.xs) total += sum_squares<T>(x);
  rows::store<T>(c.y.data, c.y.dtype, c.y.offset, std::sqrt(total));
}

}  // namespace

void global_norm(const GlobalNormCall& call) {
  if (call.y.dtype == DType::f64)
    global_norm_typed<double>(call);
  else
    global_norm_typed<float>(call);
}

}  // namespace hal::cpu_ref
