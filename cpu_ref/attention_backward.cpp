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
// each output rounded once), fp64 for f64 (the conformance oracle).
// Plain loops: dots are rows::fixed_dot's fixed lane order; the rank-one
// updates are element-wise, so they vectorise without reordering a sum.
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

// One query row's operands: q_i, dy_i (widened), lse_i and D_i = dy_i . y_i.
template <class T> struct QueryRow {
  std::vector<T> q, dy, y;
  T lse = 0, delta = 0;

  QueryRow(std::int64_t d, std::int64_t dv)
      : q(static_cast<std::size_t>(d)), dy(static_cast<std::size_t>(dv)), y(static_cast<std::size_t>(dv)) {}

  void load(const AttentionBackwardCall& c, std::int64_t b, std::int64_t i, std::int64_t h) {
    const std::int64_t d = static_cast<std::int64_t>(q.size()), dv = static_cast<std::int64_t>(dy.size());
    rows::gather(c.q, row_start(c.q, b, i, h), c.q.strides[3], d, q.data());
    rows::gather(c.dy, row_start(c.dy, b, i, h), c.dy.strides[3], dv, dy.data());
    rows::gather(c.y, row_start(c.y, b, i, h), c.y.strides[3], dv, y.data());
    rows::gather(c.lse, lse_index(c.lse, b, i, h), 1, 1, &lse);
    delta = rows::fixed_dot(dy.data(), y.data(), dv);
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

// P_ij and dS_ij of one query against the first `valid` keys of a tile: the
// one place both passes compute them, so they agree bit for bit.
template <class T>
void probabilities(const QueryRow<T>& row, const KeyTile<T>& tile, std::int64_t valid, T scale, T* p, T* ds) {
  for (std::int64_t j = 0; j < valid; ++j) {
    const T score = rows::fixed_dot(row.q.data(), tile.k.data() + j * tile.d, tile.d) * scale;
    p[j] = std::exp(score - row.lse);
    const T dp = rows::fixed_dot(row.dy.data(), tile.v.data() + j * tile.dv, tile.dv);
    ds[j] = p[j] * (dp - row.delta);
  }
}

template <class T> void axpy(T a, const T* x, std::int64_t n, T* acc) {
  for (std::int64_t c = 0; c < n; ++c) acc[c] += a * x[c];
}

template <class T> void scale_in_place(T s, std::int64_t n, T* x) {
  for (std::int64_t c = 0; c < n; ++c) x[c] *= s;
}

template <class T> void key_gradients(const AttentionBackwardCall& c, const Geometry& g, T scale) {
  const std::int64_t d = g.d, dv = g.dv, k_blocks = ceil_div(g.sk, kKeyBlock);
  rows::parallel_rows(g.batch * g.hkv * k_blocks, std::max<std::int64_t>(1, g.sq * g.group * kKeyBlock * (d + dv) * 2),
                      [&](std::int64_t begin, std::int64_t end) {
    QueryRow<T> row(d, dv);
    KeyTile<T> tile(d, dv);
    std::vector<T> dk(static_cast<std::size_t>(kKeyBlock * d)), dvv(static_cast<std::size_t>(kKeyBlock * dv));
    std::vector<T> p(static_cast<std::size_t>(kKeyBlock)), ds(static_cast<std::size_t>(kKeyBlock));
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t kb = (task % k_blocks) * kKeyBlock, kv_head = (task / k_blocks) % g.hkv;
      const std::int64_t b = task / (k_blocks * g.hkv), count = std::min(kKeyBlock, g.sk - kb);
      tile.load(c, b, kv_head, kb, count);
      std::fill(dk.begin(), dk.end(), T(0));
      std::fill(dvv.begin(), dvv.end(), T(0));
      const std::int64_t heads_end = std::min(g.hq, (kv_head + 1) * g.group);  // hq = 0: no query heads
      for (std::int64_t h = kv_head * g.group; h < heads_end; ++h)
        for (std::int64_t i = 0; i < g.sq; ++i) {
          const std::int64_t valid = g.keys_in_block(i, kb, count);
          if (valid == 0) continue;
          row.load(c, b, i, h);
          probabilities(row, tile, valid, scale, p.data(), ds.data());
          for (std::int64_t j = 0; j < valid; ++j) {
            axpy(p[j], row.dy.data(), dv, dvv.data() + j * dv);
            axpy(ds[j], row.q.data(), d, dk.data() + j * d);
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

template <class T> void query_gradients(const AttentionBackwardCall& c, const Geometry& g, T scale) {
  const std::int64_t d = g.d, dv = g.dv, q_blocks = ceil_div(g.sq, kQueryBlock);
  rows::parallel_rows(g.batch * g.hq * q_blocks, std::max<std::int64_t>(1, kQueryBlock * g.sk * (d + dv) * 2),
                      [&](std::int64_t begin, std::int64_t end) {
    std::vector<QueryRow<T>> rows_(static_cast<std::size_t>(kQueryBlock), QueryRow<T>(d, dv));
    KeyTile<T> tile(d, dv);
    std::vector<T> dq(static_cast<std::size_t>(kQueryBlock * d));
    std::vector<T> p(static_cast<std::size_t>(kKeyBlock)), ds(static_cast<std::size_t>(kKeyBlock));
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t q_begin = (task % q_blocks) * kQueryBlock, h = (task / q_blocks) % g.hq;
      const std::int64_t b = task / (q_blocks * g.hq), q_count = std::min(kQueryBlock, g.sq - q_begin);
      const std::int64_t kv_head = std::min(h / g.group, g.hkv - 1);
      for (std::int64_t r = 0; r < q_count; ++r) rows_[static_cast<std::size_t>(r)].load(c, b, q_begin + r, h);
      std::fill(dq.begin(), dq.end(), T(0));
      const std::int64_t keys_end = g.keys_of(q_begin + q_count - 1);  // the last query sees the most keys
      for (std::int64_t kb = 0; kb < keys_end; kb += kKeyBlock) {
        const std::int64_t count = std::min(kKeyBlock, keys_end - kb);
        tile.load(c, b, kv_head, kb, count);
        for (std::int64_t r = 0; r < q_count; ++r) {
          const std::int64_t valid = g.keys_in_block(q_begin + r, kb, count);
          if (valid == 0) continue;
          probabilities(rows_[static_cast<std::size_t>(r)], tile, valid, scale, p.data(), ds.data());
          for (std::int64_t j = 0; j < valid; ++j) axpy(ds[j], tile.k.data() + j * d, d, dq.data() + r * d);
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
