#pragma once
// Geometry of the MFMA attention backward kernels
// (attention_backward_mfma.hip), shared with the host plan
// (backends/gpu/attention_backward_plan.cpp). Plain host/device header: no
// HIP include. The kernels take hal::kernel_params::AttentionBackwardParams.
//
//   hal_attention_bwd_dkdv_mfma_<t>_d<d>: grid x = ceil(sk / kMfmaBwdBlockKeys),
//     y = hkv, z = batch; each of the 4 wave64s owns 32 keys and walks the
//     query heads of its kv head, each in tiles of kMfmaBwdTile queries, in
//     ascending order.
//   hal_attention_bwd_dq_mfma_<t>_d<d>: grid x = ceil(sq / kMfmaBwdBlockQueries),
//     y = hq, z = batch; each wave owns 32 queries and walks the key tiles of
//     kMfmaBwdTile keys in ascending order.
// block = kMfmaBwdThreads; static LDS only. Requirements (checked by the
// plan): every tensor but lse of one dtype, f16 or bf16; d == dv in
// {64, 128}; channel stride 1, other strides multiples of 8 elements and
// 16-byte aligned first elements.
#include <stdint.h>

namespace hal::hip::kernels {

inline constexpr int kMfmaBwdWaves = 4;
inline constexpr int kMfmaBwdThreads = 64 * kMfmaBwdWaves;
inline constexpr int kMfmaBwdBlockKeys = 32 * kMfmaBwdWaves;
inline constexpr int kMfmaBwdBlockQueries = 32 * kMfmaBwdWaves;
inline constexpr int kMfmaBwdTile = 32;  // one 32x32x8 MFMA block
inline constexpr int kMfmaBwdLdsPad = 4;  // halfs added per LDS row

}  // namespace hal::hip::kernels
