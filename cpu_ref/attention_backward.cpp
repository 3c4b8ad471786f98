// The gradient of attention (hal/op_training.h states it), FlashAttention-2
// style: the probabilities are recomputed per tile from q, k and the row
// log-sum-exp the forward wrote, P_ij = exp(scale q_i . k_j - lse_i), so the
// [sq, sk] matrix never exists; with D_i = dy_i . y_i,
//   dS_ij = P_ij (dy_i . v_j - D_i)
//   dv_j = sum_i P_ij dy_i,  dk_j = scale sum_i dS_ij q_i,  dq_i = scale sum_j dS_ij k_j.
//
// Two passes, each owning what it writes, so nothing is added by two tasks
// (FlashAttention-2 adds dq with atomics across key blocks; here dq is its
// own pass, at the price of computing P and dS twice):
//   dk, dv  a task is (batch, kv head, block of kKeyBlock keys); it walks the
//           query heads of the kv head in ascending order, each over its
//           queries in ascending order, accumulating its keys' dk and dv.
//   dq      a task is (batch, query head, block of kQueryBlock queries); it
//           walks the key blocks in ascending order, each key in order.
// Every score, probability and dS is computed by the same code from the same
// operands in both passes (the same bits), and each output element is one
// fixed chain, so the result does not depend on how tasks are split over
// threads. Scratch is O(block) per task: tiles of K and V (or of Q and dY).
//
// fp32 compute for f32 / f16 / bf16 (each tile widened once as it is read,
// each output rounded once) on the vector kernels: the scores and dp are
// dot_rows, the sums of P dy, dS q and dS k weighted_row_sum (one FMA a step
// in the AVX2 table, as the forward's P V); fp64 for f64 (the conformance
// oracle) in plain loops of the same structure.
//
// Masked keys: a query only ever reads the keys it sees (keys_in_block), so a
// NaN or inf in a masked key reaches no gradient; a query with no unmasked
// key gets dq = 0 and adds nothing to dk and dv; a key no query sees gets
// dk = dv = 0. A row whose lse is -inf with keys it sees (all its scores
// -inf: the forward's y was NaN) gives NaN, as the forward did.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu_ref/attention_task.h"
#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/shape.h"

namespace hal::cpu_ref {

namespace {

using namespace attention_detail;

constexpr std::int64_t kKeyBlock = 64;
constexpr std::int64_t kQueryBlock = 16;

// Geometry reads q, k, v and the mask from an AttentionCall.
Geometry geometry_of(const AttentionBackwardCall& c) {
  AttentionCall a;
  a.q = c.q;
  a.k = c.k;
  a.v = c.v;
  a.causal = c.causal;
  return Geometry(a);
}

// The two kernels the passes are made of, in fp32 on the vector kernels
// (the AVX2 table when the CPU has it) and in fp64 as plain loops:
//   dots:       out[r] = rows_r . x, r < count (rows `stride` apart)
//   accumulate: acc += sum_j p[j] rows_j, j = 0, 1, ... count - 1 in turn
// Neither depends on how the work is split, so neither do the results.
void dots(const float* rows, std::int64_t count, std::int64_t stride, const float* x, std::int64_t n, float* out) {
  vector_kernels().dot_rows(rows, count, stride, x, DType::f32, n, out);
}
void dots(const double* rows, std::int64_t count, std::int64_t stride, const double* x, std::int64_t n, double* out) {
  for (std::int64_t r = 0; r < count; ++r) out[r] = rows::fixed_dot(rows + r * stride, x, n);
}
void accumulate(const float* p, const float* rows, std::int64_t count, std::int64_t stride, std::int64_t n, float* acc) {
  vector_kernels().weighted_row_sum(p, rows, DType::f32, count, stride, n, acc);
}
void accumulate(const double* p, const double* rows, std::int64_t count, std::int64_t stride, std::int64_t n,
                double* acc) {
  for (std::int64_t j = 0; j < count; ++j)
    for (std::int64_t c = 0; c < n; ++c) acc[c] += p[j] * rows[j * stride + c];
}

// A block of up to kQueryBlock query rows of one head: q_i, dy_i (widened),
// lse_i and D_i = dy_i . y_i.
template <class T> struct QueryBlock {
  std::vector<T> q, dy, y, lse, delta;
  std::int64_t d, dv, count = 0;

  QueryBlock(std::int64_t d_, std::int64_t dv_)
      : q(static_cast<std::size_t>(kQueryBlock * d_)), dy(static_cast<std::size_t>(kQueryBlock * dv_)),
        y(static_cast<std::size_t>(dv_)), lse(static_cast<std::size_t>(kQueryBlock)),
        delta(static_cast<std::size_t>(kQueryBlock)), d(d_), dv(dv_) {}

  void load(const AttentionBackwardCall& c, std::int64_t b, std::int64_t i0, std::int64_t n, std::int64_t h) {
    count = n;
    for (std::int64_t r = 0; r < n; ++r) {
      const std::int64_t i = i0 + r;
      rows::gather(c.q, row_start(c.q, b, i, h), c.q.strides[3], d, q.data() + r * d);
      rows::gather(c.dy, row_start(c.dy, b, i, h), c.dy.strides[3], dv, dy.data() + r * dv);
      rows::gather(c.y, row_start(c.y, b, i, h), c.y.strides[3], dv, y.data());
      rows::gather(c.lse, lse_index(c.lse, b, i, h), 1, 1, lse.data() + r);
      dots(dy.data() + r * dv, 1, dv, y.data(), dv, delta.data() + r);
    }
  }
};

// Keys [kb, kb + count) of kv head h: K and V rows, widened.
template <class T> struct KeyTile {
  std::vector<T> k, v;
  std::int64_t d, dv;

  KeyTile(std::int64_t d_, std::int64_t dv_)
      : k(static_cast<std::size_t>(kKeyBlock * d_)), v(static_cast<std::size_t>(kKeyBlock * dv_)), d(d_), dv(dv_) {}

  void load(const AttentionBackwardCall& c, std::int64_t b, std::int64_t h, std::int64_t kb, std::int64_t count) {
    for (std::int64_t j = 0; j < count; ++j) {
      rows::gather(c.k, row_start(c.k, b, kb + j, h), c.k.strides[3], d, k.data() + j * d);
      rows::gather(c.v, row_start(c.v, b, kb + j, h), c.v.strides[3], dv, v.data() + j * dv);
    }
  }
};

// P_ij and dS_ij of query row r against the first `valid` keys of a tile
// (dp lands in ds first): the one place both passes compute them, so they
// agree bit for bit.
template <class T>
void probabilities(const QueryBlock<T>& qb, std::int64_t r, const KeyTile<T>& tile, std::int64_t valid, T scale, T* p,
                   T* ds) {
  dots(tile.k.data(), valid, tile.d, qb.q.data() + r * qb.d, tile.d, p);
  dots(tile.v.data(), valid, tile.dv, qb.dy.data() + r * qb.dv, tile.dv, ds);
  const T lse = qb.lse[static_cast<std::size_t>(r)], delta = qb.delta[static_cast<std::size_t>(r)];
  for (std::int64_t j = 0; j < valid; ++j) {
    p[j] = std::exp(p[j] * scale - lse);
    ds[j] = p[j] * (ds[j] - delta);
  }
}

template <class T> void scale_in_place(T s, std::int64_t n, T* x) {
  for (std::int64_t c = 0; c < n; ++c) x[c] *= s;
}

// dk and dv. Per block of queries the block's P and dS are stored key-major
// (pt[j * kQueryBlock + r]), so each key's sums over the block are one
// accumulate over the rows that see it: under the causal mask a later query
// sees at least the keys an earlier one does, so those rows are a suffix of
// the block.
template <class T> void key_gradients(const AttentionBackwardCall& c, const Geometry& g, T scale) {
  const std::int64_t d = g.d, dv = g.dv, k_blocks = ceil_div(g.sk, kKeyBlock);
  rows::parallel_rows(g.batch * g.hkv * k_blocks, std::max<std::int64_t>(1, g.sq * g.group * kKeyBlock * (d + dv) * 2),
                      [&](std::int64_t begin, std::int64_t end) {
    QueryBlock<T> qb(d, dv);
    KeyTile<T> tile(d, dv);
    std::vector<T> dk(static_cast<std::size_t>(kKeyBlock * d)), dvv(static_cast<std::size_t>(kKeyBlock * dv));
    std::vector<T> p(static_cast<std::size_t>(kKeyBlock)), ds(static_cast<std::size_t>(kKeyBlock));
    std::vector<T> pt(static_cast<std::size_t>(kKeyBlock * kQueryBlock)), dst(static_cast<std::size_t>(kKeyBlock * kQueryBlock));
    std::vector<std::int64_t> valid(static_cast<std::size_t>(kQueryBlock));
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t kb = (task % k_blocks) * kKeyBlock, kv_head = (task / k_blocks) % g.hkv;
      const std::int64_t b = task / (k_blocks * g.hkv), count = std::min(kKeyBlock, g.sk - kb);
      tile.load(c, b, kv_head, kb, count);
      std::fill(dk.begin(), dk.end(), T(0));
      std::fill(dvv.begin(), dvv.end(), T(0));
      const std::int64_t heads_end = std::min(g.hq, (kv_head + 1) * g.group);  // hq = 0: no query heads
      for (std::int64_t h = kv_head * g.group; h < heads_end; ++h)
        for (std::int64_t i0 = 0; i0 < g.sq; i0 += kQueryBlock) {
          const std::int64_t n = std::min(kQueryBlock, g.sq - i0);
          if (g.keys_in_block(i0 + n - 1, kb, count) == 0) continue;  // the block's last query sees the most keys
          qb.load(c, b, i0, n, h);
          for (std::int64_t r = 0; r < n; ++r) {
            valid[static_cast<std::size_t>(r)] = g.keys_in_block(i0 + r, kb, count);
            const std::int64_t taken = valid[static_cast<std::size_t>(r)];
            if (taken == 0) continue;
            probabilities(qb, r, tile, taken, scale, p.data(), ds.data());
            for (std::int64_t j = 0; j < taken; ++j) {
              pt[static_cast<std::size_t>(j * kQueryBlock + r)] = p[static_cast<std::size_t>(j)];
              dst[static_cast<std::size_t>(j * kQueryBlock + r)] = ds[static_cast<std::size_t>(j)];
            }
          }
          std::int64_t r0 = 0;  // the first row that sees key j
          for (std::int64_t j = 0; j < count; ++j) {
            while (r0 < n && valid[static_cast<std::size_t>(r0)] <= j) ++r0;
            if (r0 == n) break;  // later keys: seen by no row of the block either
            const std::int64_t rows_taking = n - r0;
            accumulate(pt.data() + j * kQueryBlock + r0, qb.dy.data() + r0 * dv, rows_taking, dv, dv, dvv.data() + j * dv);
            accumulate(dst.data() + j * kQueryBlock + r0, qb.q.data() + r0 * d, rows_taking, d, d, dk.data() + j * d);
          }
        }
      for (std::int64_t j = 0; j < count; ++j) {
        scale_in_place(scale, d, dk.data() + j * d);
        rows::scatter(c.dk, row_start(c.dk, b, kb + j, kv_head), c.dk.strides[3], d, dk.data() + j * d);
        rows::scatter(c.dv, row_start(c.dv, b, kb + j, kv_head), c.dv.strides[3], dv, dvv.data() + j * dv);
      }
    }
  });
}

// dq: each query's sum over its keys, key block by key block in order.
template <class T> void query_gradients(const AttentionBackwardCall& c, const Geometry& g, T scale) {
  const std::int64_t d = g.d, dv = g.dv, q_blocks = ceil_div(g.sq, kQueryBlock);
  rows::parallel_rows(g.batch * g.hq * q_blocks, std::max<std::int64_t>(1, kQueryBlock * g.sk * (d + dv) * 2),
                      [&](std::int64_t begin, std::int64_t end) {
    QueryBlock<T> qb(d, dv);
    KeyTile<T> tile(d, dv);
    std::vector<T> dq(static_cast<std::size_t>(kQueryBlock * d));
    std::vector<T> p(static_cast<std::size_t>(kKeyBlock)), ds(static_cast<std::size_t>(kKeyBlock));
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t q_begin = (task % q_blocks) * kQueryBlock, h = (task / q_blocks) % g.hq;
      const std::int64_t b = task / (q_blocks * g.hq), q_count = std::min(kQueryBlock, g.sq - q_begin);
      const std::int64_t kv_head = std::min(h / g.group, g.hkv - 1);
      qb.load(c, b, q_begin, q_count, h);
      std::fill(dq.begin(), dq.end(), T(0));
      const std::int64_t keys_end = g.keys_of(q_begin + q_count - 1);  // the last query sees the most keys
      for (std::int64_t kb = 0; kb < keys_end; kb += kKeyBlock) {
        const std::int64_t count = std::min(kKeyBlock, keys_end - kb);
        tile.load(c, b, kv_head, kb, count);
        for (std::int64_t r = 0; r < q_count; ++r) {
          const std::int64_t valid = g.keys_in_block(q_begin + r, kb, count);
          if (valid == 0) continue;
          probabilities(qb, r, tile, valid, scale, p.data(), ds.data());
          accumulate(ds.data(), tile.k.data(), valid, d, d, dq.data() + r * d);
        }
      }
      for (std::int64_t r = 0; r < q_count; ++r) {
        scale_in_place(scale, d, dq.data() + r * d);
        rows::scatter(c.dq, row_start(c.dq, b, q_begin + r, h), c.dq.strides[3], d, dq.data() + r * d);
      }
    }
  });
}

template <class T> void attention_backward_as(const AttentionBackwardCall& c) {
  const Geometry g = geometry_of(c);
  if (g.hkv == 0) return;  // ops/ guarantees hkv divides hq (and hq >= hkv > 0 when any head exists)
  const T scale = g.scale<T>(c.scale);
  key_gradients<T>(c, g, scale);
  query_gradients<T>(c, g, scale);
}

}  // namespace

void attention_backward(const AttentionBackwardCall& call) {
  if (call.q.rank() != 4) return;  // ops/ guarantees rank 4
  if (call.q.dtype == DType::f64) attention_backward_as<double>(call);
  else attention_backward_as<float>(call);
}

}  // namespace hal::cpu_ref
