// Launcher of the attention kernels. With HAL_GPU_UNVERIFIED=1 on an sm_90
// device, first tries the unverified sm_90a kernel
// hal_attention_sm90a_<dtype>_d<d> (cuda_attention_sm90a.cpp: TMA + wgmma,
// FlashAttention-3 style; HAL_CUDA_DISABLE=wgmma_attention switches it off).
// Otherwise (the default) calls the tensor-core kernel
// hal_attention_flash_<dtype>_d<d> (ptx/kernels/attention_flash.cu) when
//   q/k/v/y are one dtype, f16 or bf16; d == dv in {64, 128};
//   every channel stride is 1, every other stride a multiple of 8 elements and
//   each first element 16-byte aligned (cp.async copies 16-byte rows);
//   the path is not disabled (HAL_CUDA_DISABLE=flash) and the device grants
//   the shared memory;
// and hal_attention_general (ptx/kernels/attention_general.cu: any head dims,
// strides and float dtype, one warp per (batch, query, head)) otherwise.
// With the lse output the same choice picks the *_lse variant of either
// kernel (never run on a GPU: the support matrix admits lse only with
// HAL_GPU_UNVERIFIED=1).
#include <atomic>
#include <cstdint>

#include "backends/cuda/cuda_attention_sm90a.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/kernel_args.h"
#include "hal/error.h"
#include "ptx/kernels/attention_geometry.h"

namespace hal::cuda {

// Test hook (declared by tests/cuda/attention_flash_test.cpp): how many times
// the flash kernel was launched in this process, so a test can prove that the
// fast path (not the fallback) produced the answer it checked.
std::uint64_t attention_flash_launch_count() noexcept;

namespace {

constexpr int kWarpsPerBlock = 8;  // attention_general.cu
std::atomic<std::uint64_t> g_flash_launches{0};

bool rows_are_16_byte_aligned(const Tensor& t) {
  if (t.strides[3] != 1) return false;
  for (int d = 0; d < 3; ++d)
    if (t.strides[d] % 8 != 0) return false;
  return reinterpret_cast<std::uintptr_t>(t.first()) % 16 == 0;
}

// The kernel name, or nullptr when the call needs the general kernel.
const char* flash_kernel(CudaStream& s, const AttentionCall& call, const kernel_params::AttentionParams& p) {
  const DType t = call.q.dtype;
  if (t != DType::f16 && t != DType::bf16) return nullptr;
  if (call.k.dtype != t || call.v.dtype != t || call.y.dtype != t) return nullptr;
  if (p.d != p.dv || (p.d != 64 && p.d != 128)) return nullptr;
  if (p.hkv <= 0 || p.hq % p.hkv != 0 || p.sk == 0) return nullptr;
  if (p.hq > 65535 || p.batch > 65535) return nullptr;  // grid y, z
  if ((p.sq + ptx::kFlashBlockQ - 1) / ptx::kFlashBlockQ > 0x7fffffffLL) return nullptr;
  if (p.sq > (std::int64_t{1} << 40) || p.sk > (std::int64_t{1} << 40)) return nullptr;
  for (const Tensor* x : {&call.q, &call.k, &call.v, &call.y})
    if (!rows_are_16_byte_aligned(*x)) return nullptr;
  if (static_cast<std::int64_t>(ptx::flash_shared_bytes(p.d)) > stream_caps(s).max_shared_per_block_optin)
    return nullptr;
  if (!path_enabled("flash")) return nullptr;
  static constexpr const char* kNames[2][2][2] = {
      {{"hal_attention_flash_f16_d64", "hal_attention_flash_f16_d128"},
       {"hal_attention_flash_bf16_d64", "hal_attention_flash_bf16_d128"}},
      {{"hal_attention_flash_f16_d64_lse", "hal_attention_flash_f16_d128_lse"},
       {"hal_attention_flash_bf16_d64_lse", "hal_attention_flash_bf16_d128_lse"}}};
  return kNames[p.lse != nullptr][t == DType::bf16][p.d == 128];
}

}  // namespace

std::uint64_t attention_flash_launch_count() noexcept { return g_flash_launches.load(); }

void run_attention(CudaStream& s, const AttentionCall& call) {
  const kernel_params::AttentionParams p = gpu::attention_params(call, "cuda");
  const std::int64_t rows = p.batch * p.sq * p.hq;
  if (rows == 0 || (p.dv == 0 && p.lse == nullptr)) return;  // dv == 0 still writes lse

  // Unverified (never run): only with HAL_GPU_UNVERIFIED=1; today's flash
  // kernel stays the default.
  if (try_attention_sm90a(s, call, p)) return;

  if (const char* flash = flash_kernel(s, call, p)) {
    LaunchShape shape;
    shape.grid[0] = static_cast<unsigned>((p.sq + ptx::kFlashBlockQ - 1) / ptx::kFlashBlockQ);
    shape.grid[1] = static_cast<unsigned>(p.hq);
    shape.grid[2] = static_cast<unsigned>(p.batch);
    shape.block[0] = 32 * ptx::kFlashWarps;
    shape.shared_bytes = ptx::flash_shared_bytes(p.d);
    launch(s, flash, shape, p);
    g_flash_launches.fetch_add(1, std::memory_order_relaxed);
    return;
  }

  const std::int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > 0x7fffffffLL) throw_unsupported("cuda", "attention", "at most 2^34 query rows");
  LaunchShape shape;
  shape.grid[0] = static_cast<unsigned>(blocks);
  shape.block[0] = 32 * kWarpsPerBlock;
  launch(s, p.lse != nullptr ? "hal_attention_general_lse" : "hal_attention_general", shape, p);
}

}  // namespace hal::cuda
