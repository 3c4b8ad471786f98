// Split planning and host emulation of the decode GEMM (gemm_decode_plan.h).
#include "backends/gpu/gemm_decode_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace hal::gpu {

namespace kp = kernel_params;

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

DecodeGemmPlan refuse(std::string why) {
  DecodeGemmPlan p;
  p.why = std::move(why);
  return p;
}

}  // namespace

DecodeGemmPlan plan_decode_gemm(const kp::GemmParams& p, int compute_units, int tile_m, int max_m_tiles,
                                const DecodeGemmTuning& tuning) {
  if (p.ab_type != 1 && p.ab_type != 2) return refuse("operands are not f16/bf16");
  if (p.m < 1 || p.m > kp::kDecodeMaxM) return refuse(fmt::format("m = {} is not in [1, {}]", p.m, kp::kDecodeMaxM));
  if (p.n < 1 || p.k < 1 || p.batch < 1) return refuse("empty operand");
  // a_vec8 / b_vec8 (kernel_args.cpp): K-contiguous, K % 8 == 0, 16-byte aligned
  // base, rows and batches: every pass-1 load is one whole 16-byte chunk.
  if (p.a_vec8 == 0) return refuse("op(A) is not K-contiguous with 16-byte aligned rows and K % 8 == 0");
  if (p.b_vec8 == 0) return refuse("op(B) is not K-contiguous with 16-byte aligned rows and K % 8 == 0");
  if (compute_units < 1 || tile_m < 1 || max_m_tiles < 1) return refuse("no compute units");
  return plan_decode_splits(p.m, p.n, p.k, p.batch, kp::kDecodeBlockK, compute_units, tile_m, max_m_tiles, tuning);
}

DecodeGemmPlan plan_decode_splits(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                                  std::int64_t block_k, int compute_units, int tile_m, int max_m_tiles,
                                  const DecodeGemmTuning& tuning) {
  DecodeGemmPlan plan;
  const std::int64_t m_tiles = ceil_div(m, tile_m);
  int variant = 1;
  while (variant < m_tiles) variant *= 2;
  if (variant > max_m_tiles) return refuse(fmt::format("m = {} needs {} M tiles, the kernels have {}", m, variant,
                                                       max_m_tiles));
  plan.m_tiles = variant;
  plan.n_tiles = ceil_div(n, kp::kDecodeTileN);
  const std::int64_t k_blocks = ceil_div(k, block_k);
  const std::int64_t base = plan.n_tiles * batch;
  const std::int64_t target = static_cast<std::int64_t>(compute_units) * tuning.warps_per_unit;
  const std::int64_t max_splits = std::max<std::int64_t>(1, k_blocks / std::max(1, tuning.min_blocks_per_split));
  std::int64_t splits = std::clamp<std::int64_t>(ceil_div(target, base), 1, max_splits);
  const std::int64_t blocks_per_split = ceil_div(k_blocks, splits);
  splits = ceil_div(k_blocks, blocks_per_split);  // no empty split
  plan.splits = splits;
  plan.k_per_split = blocks_per_split * block_k;
  plan.units = base * splits;
  plan.ctas = ceil_div(plan.units, kp::kDecodeWarpsPerCta);
  const std::int64_t outputs = batch * m * n;
  plan.reduce_blocks = std::min<std::int64_t>(ceil_div(outputs, kp::kDecodeReduceThreads), 65535 * 8);
  plan.workspace_floats = splits * outputs;
  if (plan.ctas > std::numeric_limits<std::int32_t>::max()) return refuse("too many units for one grid");
  // The workspace stays a small fraction of the weights read (a launcher
  // caches it per stream): refuse plans where it would not.
  if (plan.workspace_floats > (std::int64_t{1} << 28)) return refuse("workspace above 1 GiB");
  plan.ok = true;
  return plan;
}

kp::GemmDecodeParams decode_gemm_params(const kp::GemmParams& p, const DecodeGemmPlan& plan) {
  kp::GemmDecodeParams d{};
  d.a = p.a;
  d.b = p.b;
  d.partial = nullptr;
  d.m = p.m;
  d.n = p.n;
  d.k = p.k;
  d.batch = p.batch;
  d.a_batch_stride = p.a_batch_stride;
  d.a_m_stride = p.a_m_stride;
  d.b_batch_stride = p.b_batch_stride;
  d.b_n_stride = p.b_n_stride;
  d.n_tiles = plan.n_tiles;
  d.splits = plan.splits;
  d.k_per_split = plan.k_per_split;
  d.units = plan.units;
  return d;
}

namespace {

// 16 x 16 slot matrices of one matrix instruction, filled lane by lane as the
// hardware's documented fragment layout says, then multiplied in slot order.
struct SlotMma {
  std::array<std::array<float, 16>, 16> a{};  // [row (N side)][k slot]
  std::array<std::array<float, 16>, 16> b{};  // [k slot][col (M side)]
  void run(std::array<std::array<float, 16>, 16>& d) const {
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c) {
        float acc = d[r][c];
        for (int s = 0; s < 16; ++s) acc = std::fma(a[r][s], b[s][c], acc);
        d[r][c] = acc;
      }
  }
};

}  // namespace

std::vector<float> emulate_decode_reduce(const std::vector<float>& partial, std::int64_t splits, std::int64_t m,
                                         std::int64_t n) {
  std::vector<float> c(static_cast<std::size_t>(m * n));
  for (std::int64_t mm = 0; mm < m; ++mm)
    for (std::int64_t nn = 0; nn < n; ++nn) {
      float v = partial[static_cast<std::size_t>(kp::decode_partial_index(0, 0, mm, nn, 1, m, n))];
      for (std::int64_t s = 1; s < splits; ++s)
        v += partial[static_cast<std::size_t>(kp::decode_partial_index(s, 0, mm, nn, 1, m, n))];
      c[static_cast<std::size_t>(mm * n + nn)] = v;
    }
  return c;
}

std::vector<float> emulate_decode_gemm(const DecodeGemmPlan& plan, bool cuda, std::int64_t m, std::int64_t n,
                                       std::int64_t k, const std::vector<float>& a, const std::vector<float>& b,
                                       std::vector<float>* partial_out) {
  const int lanes = cuda ? 32 : 64;
  const int tile_m = cuda ? kp::kDecodeCudaTileM : kp::kDecodeHipTileM;
  std::vector<float> partial(static_cast<std::size_t>(plan.splits * m * n), std::nanf(""));
  // The 8 K-values at (row, k0) of a matrix, zero past its rows or K.
  const auto chunk = [&](const std::vector<float>& x, std::int64_t rows, std::int64_t row, std::int64_t k0) {
    std::array<float, 8> v{};
    if (row < rows && k0 < k)
      for (int i = 0; i < 8; ++i) v[i] = x[static_cast<std::size_t>(row * k + k0 + i)];
    return v;
  };
  for (std::int64_t u = 0; u < plan.units; ++u) {
    const kp::DecodeUnit unit = kp::decode_unit(u, plan.n_tiles, plan.splits);
    const std::int64_t n0 = unit.n_tile * kp::kDecodeTileN;
    const std::int64_t k_begin = unit.split * plan.k_per_split;
    const std::int64_t k_end = std::min(k, k_begin + plan.k_per_split);
    for (int j = 0; j < plan.m_tiles; ++j) {
      const std::int64_t m0 = std::int64_t{j} * tile_m;
      std::array<std::array<float, 16>, 16> d{};  // [n row][m col] (CUDA uses cols 0..7)
      for (std::int64_t k0 = k_begin; k0 < k_end; k0 += kp::kDecodeBlockK) {
        for (int half = 0; half < 2; ++half) {  // the two instructions of a block: K-values 0..3, 4..7 of each chunk
          SlotMma mma;
          for (int t = 0; t < lanes; ++t) {
            if (cuda) {
              // g, q: the hardware's lane coordinates (PTX ISA); the rows and
              // K offset the lane loads: the kernel's maps.
              const int g = t / 4, q = t % 4, row = kp::decode_cuda_row(t);
              const std::int64_t kk = k0 + kp::decode_cuda_k_offset(t);
              const auto w0 = chunk(b, n, n0 + row, kk), w1 = chunk(b, n, n0 + row + 8, kk);
              const auto x = chunk(a, m, m0 + row, kk);
              // a[0] = A[g][2q..], a[1] = A[g+8][2q..], a[2] = A[g][2q+8..], a[3] = A[g+8][2q+8..];
              // instruction `half` takes words 2*half, 2*half + 1 of each chunk.
              for (int e = 0; e < 2; ++e) {
                mma.a[g][2 * q + e] = w0[4 * half + e];
                mma.a[g + 8][2 * q + e] = w1[4 * half + e];
                mma.a[g][2 * q + 8 + e] = w0[4 * half + 2 + e];
                mma.a[g + 8][2 * q + 8 + e] = w1[4 * half + 2 + e];
                // b[0] = B[2q..][g], b[1] = B[2q+8..][g]
                mma.b[2 * q + e][g] = x[4 * half + e];
                mma.b[2 * q + 8 + e][g] = x[4 * half + 2 + e];
              }
            } else {
              const int r = t % 16, q = t / 16, row = kp::decode_hip_row(t);
              const std::int64_t kk = k0 + kp::decode_hip_k_offset(t);
              const auto w = chunk(b, n, n0 + row, kk);
              const auto x = chunk(a, m, m0 + row, kk);
              // A: lane l holds A[l%16][4(l/16) + 0..3]; B: B[4(l/16) + 0..3][l%16].
              for (int e = 0; e < 4; ++e) {
                mma.a[r][4 * q + e] = w[4 * half + e];
                mma.b[4 * q + e][r] = x[4 * half + e];
              }
            }
          }
          mma.run(d);
        }
      }
      // Each lane's accumulators (register r holds D[...] by the hardware's
      // layout) to partial(split, 0, m, n) where the kernel's maps store them.
      for (int t = 0; t < lanes; ++t) {
        for (int r = 0; r < 4; ++r) {
          const float value = cuda ? d[t / 4 + 8 * (r / 2)][2 * (t % 4) + r % 2] : d[4 * (t / 16) + r][t % 16];
          const int nn = cuda ? kp::decode_cuda_acc_n(t, r) : kp::decode_hip_acc_n(t, r);
          const int mm = cuda ? kp::decode_cuda_acc_m(t, r) : kp::decode_hip_acc_m(t);
          const std::int64_t gn = n0 + nn, gm = m0 + mm;
          if (gn < n && gm < m)
            partial[static_cast<std::size_t>(kp::decode_partial_index(unit.split, 0, gm, gn, 1, m, n))] = value;
        }
      }
    }
  }
  std::vector<float> c = emulate_decode_reduce(partial, plan.splits, m, n);
  if (partial_out) *partial_out = std::move(partial);
  return c;
}

}  // namespace hal::gpu
