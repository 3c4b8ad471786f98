#include "comm/rank_order_reduce.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <limits>

namespace hal::comm {
namespace {

template <class Acc>
Acc combine(Acc a, Acc b, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return a + b;
    case ReduceOp::max:
      if constexpr (std::is_floating_point_v<Acc>)
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<Acc>::quiet_NaN();
      return a < b ? b : a;
    case ReduceOp::min:
      if constexpr (std::is_floating_point_v<Acc>)
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<Acc>::quiet_NaN();
      return b < a ? b : a;
  }
  return a;
}

std::int64_t load_int(const void* p, DType t, std::int64_t i) {
  return t == DType::i32 ? static_cast<const std::int32_t*>(p)[i] : static_cast<const std::int64_t*>(p)[i];
}

void store_int(void* p, DType t, std::int64_t i, std::int64_t v) {
  if (t == DType::i64) {
    static_cast<std::int64_t*>(p)[i] = v;
    return;
  }
  const std::int64_t lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
  static_cast<std::int32_t*>(p)[i] = static_cast<std::int32_t>(v < lo ? lo : v > hi ? hi : v);
}

}  // namespace

void rank_order_reduce(const std::vector<const void*>& parts, DType dtype, std::int64_t count, ReduceOp op,
                       void* out) {
  const std::size_t P = parts.size();
  constexpr std::int64_t kGrain = 16384;
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, kGrain), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t i = r.begin(); i != r.end(); ++i) {
      if (dtype == DType::f64) {
        double acc = load_element(parts[0], dtype, i);
        for (std::size_t k = 1; k < P; ++k) acc = combine(acc, load_element(parts[k], dtype, i), op);
        if (op == ReduceOp::avg) acc /= static_cast<double>(P);
        store_element(out, dtype, i, acc);
      } else if (is_integer(dtype)) {
        // Integer sums wrap only past int64 (unsigned arithmetic: no UB).
        std::int64_t acc = load_int(parts[0], dtype, i);
        for (std::size_t k = 1; k < P; ++k) {
          const std::int64_t v = load_int(parts[k], dtype, i);
          acc = op == ReduceOp::sum ? static_cast<std::int64_t>(static_cast<std::uint64_t>(acc) + static_cast<std::uint64_t>(v))
                                    : combine(acc, v, op);
        }
        store_int(out, dtype, i, acc);
      } else {
        float acc = load_element_f32(parts[0], dtype, i);
        for (std::size_t k = 1; k < P; ++k) acc = combine(acc, load_element_f32(parts[k], dtype, i), op);
        if (op == ReduceOp::avg) acc /= static_cast<float>(P);
        store_element_f32(out, dtype, i, acc);
      }
    }
  });
}

}  // namespace hal::comm
