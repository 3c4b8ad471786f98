#pragma once
// Launch geometry of the tensor-core attention backward kernels
// (attention_backward_mma.cu), shared with the host plan
// (backends/gpu/attention_backward_plan.cpp). Plain host/device header: no
// CUDA include. The kernels take hal::kernel_params::AttentionBackwardParams.
//
//   hal_attention_bwd_dkdv_mma_<t>_d<d>: grid x = ceil(sk / kBwdBlockKeys) key
//     blocks, y = hkv, z = batch; each of the kBwdWarps warps owns 16 keys and
//     walks the query heads of its kv head, each in query tiles of
//     bwd_dkdv_tile(d), in ascending order.
//   hal_attention_bwd_dq_mma_<t>_d<d>: grid x = ceil(sq / kBwdBlockQueries)
//     query blocks, y = hq, z = batch; each warp owns 16 queries and walks the
//     key tiles of bwd_dq_tile(d) keys in ascending order.
// block = 32 * bwd_dkdv_warps(d) (dk/dv) or 32 * kBwdWarps (dq) threads;
// dynamic shared memory bwd_*_shared_bytes(d) (above 48 KiB at d = 128:
// enabled per function by the launcher).
// Requirements (checked by the plan): every tensor but lse of one dtype, f16
// or bf16; d == dv in {64, 128}; channel stride 1, other strides multiples of
// 8 elements and 16-byte aligned first elements.
#include <stdint.h>

namespace hal::ptx {

inline constexpr int kBwdWarps = 4;
inline constexpr int kBwdBlockKeys = 16 * kBwdWarps;     // keys per dk/dv block
inline constexpr int kBwdBlockQueries = 16 * kBwdWarps;  // queries per dq block

// Warps of the dk/dv kernel: 4 (each owns 16 keys and both their dK and dV)
// for d = 64; 8 for d = 128, where warps 0-3 own dV and warps 4-7 dK of the
// same 16-key slices (each computes S, the dK warps also dP): with both
// 16 x 128 fp32 accumulators in one warp ptxas needed 255 registers and
// spilled on sm_80 even with 16-query tiles.
constexpr int bwd_dkdv_warps(int d) { return d <= 64 ? kBwdWarps : 2 * kBwdWarps; }
// Queries per inner tile of the dk/dv kernel and keys per tile of the dq
// kernel, so that the accumulators and the tile's S and dP stay in registers.
constexpr int bwd_dkdv_tile(int d) { return d <= 64 ? 64 : 32; }
constexpr int bwd_dq_tile(int d) { return d <= 64 ? 64 : 32; }

// K and V blocks, Q and dY tiles (16-bit), and the tile's lse and D (fp32).
constexpr uint32_t bwd_dkdv_shared_bytes(int d) {
  return static_cast<uint32_t>((2 * kBwdBlockKeys + 2 * bwd_dkdv_tile(d)) * d * 2 + 2 * bwd_dkdv_tile(d) * 4);
}
// Q and dY blocks, K and V tiles (16-bit), and the block's lse and D (fp32).
constexpr uint32_t bwd_dq_shared_bytes(int d) {
  return static_cast<uint32_t>((2 * kBwdBlockQueries + 2 * bwd_dq_tile(d)) * d * 2 + 2 * kBwdBlockQueries * 4);
}

}  // namespace hal::ptx
