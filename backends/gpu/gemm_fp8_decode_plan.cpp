// Split planning and host emulation of the fp8 decode GEMM (gemm_fp8_decode_plan.h).
#include "backends/gpu/gemm_fp8_decode_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "hal/dtype.h"
#include "hal/fp8_codec.h"

namespace hal::gpu {

namespace kp = kernel_params;
namespace codec = fp8_codec;

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
bool aligned(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }
bool is_ocp(std::int32_t t) { return t == codec::kF8E4M3 || t == codec::kF8E5M2; }
bool is_fnuz(std::int32_t t) { return t == codec::kF8E4M3Fnuz || t == codec::kF8E5M2Fnuz; }
bool is_e5m2(std::int32_t t) { return t == codec::kF8E5M2 || t == codec::kF8E5M2Fnuz; }

Fp8DecodePlan refuse(std::string why) {
  Fp8DecodePlan p;
  p.why = std::move(why);
  return p;
}

}  // namespace

Fp8DecodePlan plan_fp8_decode_gemm(const kp::GemmFp8Params& p, int compute_units, const DecodeGemmTuning& tuning,
                                   int tile_m, bool accept_fnuz) {
  const kp::GemmParams& g = p.g;
  if (p.groups != 0) return refuse("gemm_fp8_grouped: the tiled kernels");
  const bool fnuz = accept_fnuz && is_fnuz(p.a_type) && is_fnuz(p.b_type);
  if (!fnuz && (!is_ocp(p.a_type) || !is_ocp(p.b_type)))
    return refuse(accept_fnuz ? "operands are neither both OCP nor both FNUZ e4m3/e5m2 (the tiled kernels)"
                              : "operands are not OCP e4m3/e5m2 (FNUZ: the tiled kernels)");
  if (g.m < 1 || g.m > kp::kDecodeMaxM) return refuse(fmt::format("m = {} is not in [1, {}]", g.m, kp::kDecodeMaxM));
  if (g.n < 1 || g.k < 1) return refuse("empty operand");
  if (g.batch != 1) return refuse("batched call");
  // Every pass-1 load is one whole 16-byte chunk of 16 K-values.
  if (g.k % 16 != 0) return refuse(fmt::format("k = {} is not a multiple of 16", g.k));
  if (g.a_k_stride != 1 || g.a_m_stride % 16 != 0 || !aligned(g.a))
    return refuse("a is not K-contiguous with 16-byte aligned base and rows");
  if (g.b_k_stride != 1 || g.b_n_stride % 16 != 0 || !aligned(g.b))
    return refuse("b is not K-contiguous with 16-byte aligned base and rows");
  if (compute_units < 1 || (tile_m != kp::kDecodeCudaTileM && tile_m != kp::kDecodeHipTileM))
    return refuse("no compute units or an unknown tile height");

  // Every variant fits: m <= 64 is at most 8 tiles of 8 (CUDA) or 4 of 16 (HIP).
  const int max_m_tiles = static_cast<int>(kp::kDecodeMaxM / tile_m);
  return plan_decode_splits(g.m, g.n, g.k, 1, kp::kFp8Block, compute_units, tile_m, max_m_tiles, tuning);
}

kp::GemmFp8DecodeParams fp8_decode_params(const kp::GemmFp8Params& p, const Fp8DecodePlan& plan) {
  kp::GemmFp8DecodeParams d{};
  d.a = p.g.a;
  d.b = p.g.b;
  d.partial = nullptr;
  d.a_scales = p.a_scales;
  d.b_scales = p.b_scales;
  d.sa_m_stride = p.sa_m_stride;
  d.sa_k_stride = p.sa_k_stride;
  d.sb_n_stride = p.sb_n_stride;
  d.sb_k_stride = p.sb_k_stride;
  d.m = p.g.m;
  d.n = p.g.n;
  d.k = p.g.k;
  d.a_m_stride = p.g.a_m_stride;
  d.b_n_stride = p.g.b_n_stride;
  d.n_tiles = plan.n_tiles;
  d.splits = plan.splits;
  d.k_per_split = plan.k_per_split;
  d.units = plan.units;
  return d;
}

const char* fp8_decode_kernel_name(const kp::GemmFp8Params& p, const Fp8DecodePlan& plan, bool hip) {
  if (hip) {
    // [FNUZ][a is e5m2][b is e5m2][log2 m_tiles]
    static constexpr const char* kHip[2][2][2][3] = {
        {{{"gemm_fp8_decode_e4m3_e4m3_m16", "gemm_fp8_decode_e4m3_e4m3_m32", "gemm_fp8_decode_e4m3_e4m3_m64"},
          {"gemm_fp8_decode_e4m3_e5m2_m16", "gemm_fp8_decode_e4m3_e5m2_m32", "gemm_fp8_decode_e4m3_e5m2_m64"}},
         {{"gemm_fp8_decode_e5m2_e4m3_m16", "gemm_fp8_decode_e5m2_e4m3_m32", "gemm_fp8_decode_e5m2_e4m3_m64"},
          {"gemm_fp8_decode_e5m2_e5m2_m16", "gemm_fp8_decode_e5m2_e5m2_m32", "gemm_fp8_decode_e5m2_e5m2_m64"}}},
        {{{"gemm_fp8_decode_fnuz_e4m3_e4m3_m16", "gemm_fp8_decode_fnuz_e4m3_e4m3_m32",
           "gemm_fp8_decode_fnuz_e4m3_e4m3_m64"},
          {"gemm_fp8_decode_fnuz_e4m3_e5m2_m16", "gemm_fp8_decode_fnuz_e4m3_e5m2_m32",
           "gemm_fp8_decode_fnuz_e4m3_e5m2_m64"}},
         {{"gemm_fp8_decode_fnuz_e5m2_e4m3_m16", "gemm_fp8_decode_fnuz_e5m2_e4m3_m32",
           "gemm_fp8_decode_fnuz_e5m2_e4m3_m64"},
          {"gemm_fp8_decode_fnuz_e5m2_e5m2_m16", "gemm_fp8_decode_fnuz_e5m2_e5m2_m32",
           "gemm_fp8_decode_fnuz_e5m2_e5m2_m64"}}}};
    const int v = plan.m_tiles <= 1 ? 0 : plan.m_tiles == 2 ? 1 : 2;
    return kHip[is_fnuz(p.a_type)][is_e5m2(p.a_type)][is_e5m2(p.b_type)][v];
  }
  // [a is e5m2][b is e5m2][log2 m_tiles]
  static constexpr const char* kNames[2][2][4] = {
      {{"hal_gemm_fp8_decode_e4m3_e4m3_m8", "hal_gemm_fp8_decode_e4m3_e4m3_m16", "hal_gemm_fp8_decode_e4m3_e4m3_m32",
        "hal_gemm_fp8_decode_e4m3_e4m3_m64"},
       {"hal_gemm_fp8_decode_e4m3_e5m2_m8", "hal_gemm_fp8_decode_e4m3_e5m2_m16", "hal_gemm_fp8_decode_e4m3_e5m2_m32",
        "hal_gemm_fp8_decode_e4m3_e5m2_m64"}},
      {{"hal_gemm_fp8_decode_e5m2_e4m3_m8", "hal_gemm_fp8_decode_e5m2_e4m3_m16", "hal_gemm_fp8_decode_e5m2_e4m3_m32",
        "hal_gemm_fp8_decode_e5m2_e4m3_m64"},
       {"hal_gemm_fp8_decode_e5m2_e5m2_m8", "hal_gemm_fp8_decode_e5m2_e5m2_m16", "hal_gemm_fp8_decode_e5m2_e5m2_m32",
        "hal_gemm_fp8_decode_e5m2_e5m2_m64"}}};
  const int v = plan.m_tiles <= 1 ? 0 : plan.m_tiles == 2 ? 1 : plan.m_tiles == 4 ? 2 : 3;
  return kNames[p.a_type == codec::kF8E5M2][p.b_type == codec::kF8E5M2][v];
}

namespace {

// One instruction's [16 rows (N side)][kSlots] x [kSlots][8 cols (M side)],
// filled lane by lane from the documented fragment layouts, multiplied in
// slot order from the incoming accumulator.
template <int kSlots>
struct SlotMma {
  std::array<std::array<float, kSlots>, 16> a{};
  std::array<std::array<float, 8>, kSlots> b{};
  void run(std::array<std::array<float, 8>, 16>& d) const {
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 8; ++c) {
        float acc = d[r][c];
        for (int s = 0; s < kSlots; ++s) acc = std::fma(a[r][s], b[s][c], acc);
        d[r][c] = acc;
      }
  }
};

std::uint32_t chunk_word(const std::vector<std::uint8_t>& x, std::int64_t rows, std::int64_t k, std::int64_t row,
                         std::int64_t k0, std::int64_t k_end, int w) {
  if (row >= rows || k0 >= k_end) return 0;  // the kernel's zero chunk
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{x[static_cast<std::size_t>(row * k + k0 + 4 * w + i)]} << (8 * i);
  return v;
}

float f16_half(std::uint32_t pair, int half) { return f16_to_f32(static_cast<std::uint16_t>(pair >> (16 * half))); }

}  // namespace

std::vector<float> emulate_fp8_decode_gemm(const Fp8DecodePlan& plan, bool fp8_mma, std::int64_t m, std::int64_t n,
                                           std::int64_t k, std::int32_t a_type, std::int32_t b_type,
                                           const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                                           const std::vector<float>& sa, const std::vector<float>& sb) {
  const std::int64_t kbs = ceil_div(k, kp::kFp8Block);
  const bool a5 = a_type == codec::kF8E5M2, b5 = b_type == codec::kF8E5M2;
  const float unscale = fp8_mma ? 1.0f : kp::fp8_decode_unscale(a5, b5);
  std::vector<float> partial(static_cast<std::size_t>(plan.splits * m * n), std::nanf(""));
  for (std::int64_t u = 0; u < plan.units; ++u) {
    const kp::DecodeUnit unit = kp::decode_unit(u, plan.n_tiles, plan.splits);
    const std::int64_t n0 = unit.n_tile * kp::kDecodeTileN;
    const std::int64_t k_begin = unit.split * plan.k_per_split;
    const std::int64_t k_end = std::min(k, k_begin + plan.k_per_split);
    for (int j = 0; j < plan.m_tiles; ++j) {
      const std::int64_t m0 = std::int64_t{j} * kp::kDecodeCudaTileM;
      std::array<std::array<float, 8>, 16> total{};  // [n row][m col]
      for (std::int64_t kb0 = k_begin; kb0 < k_end; kb0 += kp::kFp8Block) {
        std::array<std::array<float, 8>, 16> blk{};
        for (int s = 0; s < kp::kFp8DecodeStepsPerBlock; ++s) {
          const std::int64_t k0 = kb0 + std::int64_t{kp::kFp8DecodeStepK} * s;
          const int instructions = fp8_mma ? 2 : 4;
          for (int i = 0; i < instructions; ++i) {
            SlotMma<32> m32;
            SlotMma<16> m16;
            for (int t = 0; t < 32; ++t) {
              const int g = t / 4, q = t % 4;
              const std::int64_t kk = k0 + 16 * q;
              const auto w0 = [&](int w) { return chunk_word(b, n, k, n0 + g, kk, k_end, w); };
              const auto w1 = [&](int w) { return chunk_word(b, n, k, n0 + g + 8, kk, k_end, w); };
              const auto x = [&](int w) { return chunk_word(a, m, k, m0 + g, kk, k_end, w); };
              if (fp8_mma) {
                // a = {w0[2i], w1[2i], w0[2i+1], w1[2i+1]}, b = {x[2i], x[2i+1]}; mma_sm89.cuh's layout:
                // a[0] = A[g][4q..], a[1] = A[g+8][4q..], a[2] = A[g][16+4q..], a[3] = A[g+8][16+4q..];
                // b[0] = B[4q..][g], b[1] = B[16+4q..][g]; byte e of a word is element e.
                const std::uint32_t ra[4] = {w0(2 * i), w1(2 * i), w0(2 * i + 1), w1(2 * i + 1)};
                const std::uint32_t rb[2] = {x(2 * i), x(2 * i + 1)};
                for (int e = 0; e < 4; ++e) {
                  const auto byte = [](std::uint32_t v, int e2) { return static_cast<std::uint8_t>(v >> (8 * e2)); };
                  m32.a[g][4 * q + e] = codec::fp8_to_f32(byte(ra[0], e), b_type);
                  m32.a[g + 8][4 * q + e] = codec::fp8_to_f32(byte(ra[1], e), b_type);
                  m32.a[g][16 + 4 * q + e] = codec::fp8_to_f32(byte(ra[2], e), b_type);
                  m32.a[g + 8][16 + 4 * q + e] = codec::fp8_to_f32(byte(ra[3], e), b_type);
                  m32.b[4 * q + e][g] = codec::fp8_to_f32(byte(rb[0], e), a_type);
                  m32.b[16 + 4 * q + e][g] = codec::fp8_to_f32(byte(rb[1], e), a_type);
                }
              } else {
                // a = {lo(w0[i]), lo(w1[i]), hi(w0[i]), hi(w1[i])}, b = {lo(x[i]), hi(x[i])}; mma_sm80.cuh's
                // layout: a[0] = A[g][2q..], a[1] = A[g+8][2q..], a[2] = A[g][2q+8..], a[3] = A[g+8][2q+8..];
                // b[0] = B[2q..][g], b[1] = B[2q+8..][g]; the low half is the lower element.
                const std::uint32_t ra[4] = {kp::fp8_decode_to_f16_pair(w0(i), b5, 0),
                                             kp::fp8_decode_to_f16_pair(w1(i), b5, 0),
                                             kp::fp8_decode_to_f16_pair(w0(i), b5, 1),
                                             kp::fp8_decode_to_f16_pair(w1(i), b5, 1)};
                const std::uint32_t rb[2] = {kp::fp8_decode_to_f16_pair(x(i), a5, 0),
                                             kp::fp8_decode_to_f16_pair(x(i), a5, 1)};
                for (int e = 0; e < 2; ++e) {
                  m16.a[g][2 * q + e] = f16_half(ra[0], e);
                  m16.a[g + 8][2 * q + e] = f16_half(ra[1], e);
                  m16.a[g][2 * q + 8 + e] = f16_half(ra[2], e);
                  m16.a[g + 8][2 * q + 8 + e] = f16_half(ra[3], e);
                  m16.b[2 * q + e][g] = f16_half(rb[0], e);
                  m16.b[2 * q + 8 + e][g] = f16_half(rb[1], e);
                }
              }
            }
            if (fp8_mma) m32.run(blk);
            else m16.run(blk);
          }
        }
        // Promotion, as the kernel: each lane's c[r] at (n = g + 8 (r/2), m = 2q + r%2).
        const std::int64_t kb = kb0 / kp::kFp8Block;
        const float s_b = sb[static_cast<std::size_t>((n0 / kp::kFp8Block) * kbs + kb)];
        for (int t = 0; t < 32; ++t)
          for (int r = 0; r < 4; ++r) {
            const int nn = kp::decode_cuda_acc_n(t, r), mm = kp::decode_cuda_acc_m(t, r);
            const std::int64_t gm = m0 + mm;
            const float s_a = gm < m ? sa[static_cast<std::size_t>(gm * kbs + kb)] : 0.0f;
            total[nn][mm] = std::fma(s_a * s_b, blk[nn][mm] * unscale, total[nn][mm]);
          }
      }
      for (int nn = 0; nn < 16; ++nn)
        for (int mm = 0; mm < 8; ++mm) {
          const std::int64_t gn = n0 + nn, gm = m0 + mm;
          if (gn < n && gm < m)
            partial[static_cast<std::size_t>(kp::decode_partial_index(unit.split, 0, gm, gn, 1, m, n))] = total[nn][mm];
        }
    }
  }
  return emulate_decode_reduce(partial, plan.splits, m, n);
}

std::vector<float> emulate_fp8_decode_gemm_hip(const Fp8DecodePlan& plan, std::int64_t m, std::int64_t n,
                                               std::int64_t k, std::int32_t a_type, std::int32_t b_type,
                                               const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                                               const std::vector<float>& sa, const std::vector<float>& sb) {
  const std::int64_t kbs = ceil_div(k, kp::kFp8Block);
  const bool a5 = is_e5m2(a_type), b5 = is_e5m2(b_type), fnuz = is_fnuz(a_type);
  const float unscale = fnuz ? kp::fp8_fnuz_decode_unscale(a5, b5) : kp::fp8_decode_unscale(a5, b5);
  const auto to_f16 = fnuz ? &kp::fp8_fnuz_decode_to_f16_pair : &kp::fp8_decode_to_f16_pair;
  constexpr int kTileM = kp::kDecodeHipTileM;
  std::vector<float> partial(static_cast<std::size_t>(plan.splits * m * n), std::nanf(""));
  for (std::int64_t u = 0; u < plan.units; ++u) {
    const kp::DecodeUnit unit = kp::decode_unit(u, plan.n_tiles, plan.splits);
    const std::int64_t n0 = unit.n_tile * kp::kDecodeTileN;
    const std::int64_t k_begin = unit.split * plan.k_per_split;
    const std::int64_t k_end = std::min(k, k_begin + plan.k_per_split);
    for (int j = 0; j < plan.m_tiles; ++j) {
      const std::int64_t m0 = std::int64_t{j} * kTileM;
      std::array<std::array<float, 16>, 16> total{};  // [n row][m col]
      for (std::int64_t kb0 = k_begin; kb0 < k_end; kb0 += kp::kFp8Block) {
        std::array<std::array<float, 16>, 16> blk{};
        for (int s = 0; s < kp::kFp8DecodeStepsPerBlock; ++s) {
          const std::int64_t k0 = kb0 + std::int64_t{kp::kFp8DecodeStepK} * s;
          for (int i = 0; i < 4; ++i) {
            std::array<std::array<float, 16>, 16> ma{}, mb{};  // ma[row][slot], mb[slot][col]
            for (int l = 0; l < 64; ++l) {
              const int r = l % 16, q = l / 16;
              const std::int64_t kk = k0 + 16 * q;
              const std::uint32_t w = chunk_word(b, n, k, n0 + r, kk, k_end, i);
              const std::uint32_t x = chunk_word(a, m, k, m0 + r, kk, k_end, i);
              for (int e = 0; e < 4; ++e) {
                ma[r][4 * q + e] = f16_half(to_f16(w, b5, e / 2), e % 2);
                mb[4 * q + e][r] = f16_half(to_f16(x, a5, e / 2), e % 2);
              }
            }
            for (int rr = 0; rr < 16; ++rr)
              for (int c = 0; c < 16; ++c) {
                float acc = blk[rr][c];
                for (int t = 0; t < 16; ++t) acc = std::fma(ma[rr][t], mb[t][c], acc);
                blk[rr][c] = acc;
              }
          }
        }
        const std::int64_t kb = kb0 / kp::kFp8Block;
        const float s_b = sb[static_cast<std::size_t>((n0 / kp::kFp8Block) * kbs + kb)];
        for (int l = 0; l < 64; ++l)
          for (int r = 0; r < 4; ++r) {
            const int nn = kp::decode_hip_acc_n(l, r), mm = kp::decode_hip_acc_m(l);
            const std::int64_t gm = m0 + mm;
            const float s_a = gm < m ? sa[static_cast<std::size_t>(gm * kbs + kb)] : 0.0f;
            total[nn][mm] = std::fma(s_a * s_b, blk[nn][mm] * unscale, total[nn][mm]);
          }
      }
      for (int nn = 0; nn < 16; ++nn)
        for (int mm = 0; mm < kTileM; ++mm) {
          const std::int64_t gn = n0 + nn, gm = m0 + mm;
          if (gn < n && gm < m)
            partial[static_cast<std::size_t>(kp::decode_partial_index(unit.split, 0, gm, gn, 1, m, n))] = total[nn][mm];
        }
    }
  }
  return emulate_decode_reduce(partial, plan.splits, m, n);
}

}  // namespace hal::gpu
