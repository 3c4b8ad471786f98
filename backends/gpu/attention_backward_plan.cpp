// The kernel choice and grids of attention_backward (see the header).
#include "backends/gpu/attention_backward_plan.h"

#include <algorithm>
#include <cstdint>

#include "hal/error.h"
#include "hip/kernels/attention_backward_geometry.h"
#include "ptx/kernels/attention_backward_geometry.h"

namespace hal::gpu {

namespace {

constexpr int kGeneralThreads = 256;  // attention_backward_general.cu: 8 warps (4 waves on CDNA)
constexpr std::int64_t kMaxGridX = 0x7fffffffLL;
constexpr std::int64_t kMaxGridYZ = 65535;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool rows_are_16_byte_aligned(const Tensor& t) {
  if (t.strides[3] != 1) return false;
  for (int d = 0; d < 3; ++d)
    if (t.strides[d] % 8 != 0) return false;
  return reinterpret_cast<std::uintptr_t>(t.first()) % 16 == 0;
}

int dtype_index(DType t) { return t == DType::f32 ? 0 : (t == DType::f16 ? 1 : 2); }

bool takes_tensor_cores(const AttentionBackwardCall& c, const kernel_params::AttentionBackwardParams& p,
                        const AttentionBackwardTarget& target) {
  if (!target.tensor_cores) return false;
  if (c.q.dtype != DType::f16 && c.q.dtype != DType::bf16) return false;
  if (p.d != p.dv_dim || (p.d != 64 && p.d != 128)) return false;
  if (p.hkv <= 0 || p.hq % p.hkv != 0) return false;
  if (p.hq > kMaxGridYZ || p.batch > kMaxGridYZ) return false;
  // Both vendors' blocks are at least 64 rows; HIP's grid x times 256 threads
  // must stay below 2^32 work-items.
  const std::int64_t max_x = target.mfma ? (std::int64_t{1} << 32) / hip::kernels::kMfmaBwdThreads - 1 : kMaxGridX;
  if (ceil_div(p.sq, 64) > max_x || ceil_div(p.sk, 64) > max_x) return false;
  for (const Tensor* x : {&c.q, &c.k, &c.v, &c.dy, &c.dq, &c.dk, &c.dv})
    if (!rows_are_16_byte_aligned(*x)) return false;
  if (target.mfma) return true;  // static LDS, under 64 KiB (attention_backward_mfma.hip)
  const std::int64_t shared = std::max(ptx::bwd_dkdv_shared_bytes(p.d), ptx::bwd_dq_shared_bytes(p.d));
  return shared <= target.max_shared_per_block;
}

AttentionBackwardStep warp_rows(const char* kernel, std::int64_t rows, int warp_size, const char* backend) {
  AttentionBackwardStep s;
  if (rows == 0) return s;
  const std::int64_t blocks = ceil_div(rows, kGeneralThreads / warp_size);
  if (blocks > kMaxGridX) throw_unsupported(backend, "attention_backward", "at most 2^31 - 1 blocks of rows");
  s.kernel = kernel;
  s.grid[0] = blocks;
  s.block = kGeneralThreads;
  return s;
}

}  // namespace

AttentionBackwardPlan plan_attention_backward(const AttentionBackwardCall& c,
                                              const kernel_params::AttentionBackwardParams& p,
                                              const AttentionBackwardTarget& target, const char* backend) {
  static constexpr const char* kDelta[3] = {"hal_attention_bwd_delta_f32", "hal_attention_bwd_delta_f16",
                                            "hal_attention_bwd_delta_bf16"};
  static constexpr const char* kDkdvGeneral[3] = {"hal_attention_bwd_dkdv_general_f32",
                                                  "hal_attention_bwd_dkdv_general_f16",
                                                  "hal_attention_bwd_dkdv_general_bf16"};
  static constexpr const char* kDqGeneral[3] = {"hal_attention_bwd_dq_general_f32", "hal_attention_bwd_dq_general_f16",
                                                "hal_attention_bwd_dq_general_bf16"};
  // [bf16][d == 128]
  static constexpr const char* kDkdvMma[2][2] = {
      {"hal_attention_bwd_dkdv_mma_f16_d64", "hal_attention_bwd_dkdv_mma_f16_d128"},
      {"hal_attention_bwd_dkdv_mma_bf16_d64", "hal_attention_bwd_dkdv_mma_bf16_d128"}};
  static constexpr const char* kDqMma[2][2] = {{"hal_attention_bwd_dq_mma_f16_d64", "hal_attention_bwd_dq_mma_f16_d128"},
                                               {"hal_attention_bwd_dq_mma_bf16_d64", "hal_attention_bwd_dq_mma_bf16_d128"}};
  static constexpr const char* kDkdvMfma[2][2] = {
      {"hal_attention_bwd_dkdv_mfma_f16_d64", "hal_attention_bwd_dkdv_mfma_f16_d128"},
      {"hal_attention_bwd_dkdv_mfma_bf16_d64", "hal_attention_bwd_dkdv_mfma_bf16_d128"}};
  static constexpr const char* kDqMfma[2][2] = {
      {"hal_attention_bwd_dq_mfma_f16_d64", "hal_attention_bwd_dq_mfma_f16_d128"},
      {"hal_attention_bwd_dq_mfma_bf16_d64", "hal_attention_bwd_dq_mfma_bf16_d128"}};

  AttentionBackwardPlan plan;
  if (p.hkv <= 0 || p.batch == 0) return plan;  // no heads or no batch: every gradient is empty
  const std::int64_t query_rows = p.batch * p.sq * p.hq, key_rows = p.batch * p.sk * p.hkv;
  const int t = dtype_index(c.q.dtype);
  // D of every query row (the dq kernels read it even for rows with no key).
  if (query_rows > 0) {
    plan.delta = warp_rows(kDelta[t], query_rows, target.warp_size, backend);
    plan.delta_floats = query_rows;
  }

  if (takes_tensor_cores(c, p, target)) {
    plan.tensor_cores = true;
    const bool bf16 = c.q.dtype == DType::bf16, wide = p.d == 128, amd = target.mfma;
    const int keys_per_block = amd ? hip::kernels::kMfmaBwdBlockKeys : ptx::kBwdBlockKeys;
    const int queries_per_block = amd ? hip::kernels::kMfmaBwdBlockQueries : ptx::kBwdBlockQueries;
    const int threads = amd ? hip::kernels::kMfmaBwdThreads : 32 * ptx::kBwdWarps;
    if (key_rows > 0) {
      AttentionBackwardStep& s = plan.dkdv;
      s.kernel = amd ? kDkdvMfma[bf16][wide] : kDkdvMma[bf16][wide];
      s.grid[0] = ceil_div(p.sk, keys_per_block);
      s.grid[1] = p.hkv;
      s.grid[2] = p.batch;
      s.block = amd ? threads : 32 * ptx::bwd_dkdv_warps(p.d);
      s.shared_bytes = amd ? 0 : ptx::bwd_dkdv_shared_bytes(p.d);
    }
    if (query_rows > 0) {
      AttentionBackwardStep& s = plan.dq;
      s.kernel = amd ? kDqMfma[bf16][wide] : kDqMma[bf16][wide];
      s.grid[0] = ceil_div(p.sq, queries_per_block);
      s.grid[1] = p.hq;
      s.grid[2] = p.batch;
      s.block = threads;
      s.shared_bytes = amd ? 0 : ptx::bwd_dq_shared_bytes(p.d);
    }
    return plan;
  }
  plan.dkdv = warp_rows(kDkdvGeneral[t], key_rows, target.warp_size, backend);
  plan.dq = warp_rows(kDqGeneral[t], query_rows, target.warp_size, backend);
  return plan;
}

}  // namespace hal::gpu
