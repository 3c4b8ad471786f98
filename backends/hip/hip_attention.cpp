// Launcher of attention. Calls the MFMA kernel attention_flash_<dtype>_d<d>
// (hip/kernels/attention_flash.hip) when
//   q/k/v/y are one dtype, f16 or bf16; d == dv in {64, 128};
//   every channel stride is 1, every other stride a multiple of 8 elements and
//   each first element 16-byte aligned (K/V rows move in 16-byte chunks);
//   the grid fits (hq, batch <= 65535) and the device has the LDS;
//   the path is not disabled (HAL_HIP_DISABLE=flash, or =all);
// and attention_general (hip/kernels/attention_general.hip: any strides,
// dtypes and head dims up to 256, one wave64 per (batch, query, head) row)
// otherwise. f32 always takes the general kernel. With the lse output the
// same choice picks the *_lse variant of either kernel (never run on a GPU:
// the support matrix admits lse only with HAL_GPU_UNVERIFIED=1).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hal/error.h"
#include "hip/kernels/attention_geometry.h"

namespace hal::hip {

// False when `path` is listed in $HAL_HIP_DISABLE (comma-separated, "all"
// disables every fast path; read once per process), to bisect a wrong answer
// on a GPU without rebuilding, as HAL_CUDA_DISABLE does for the CUDA backend.
bool hip_path_enabled(std::string_view path) {
  static const std::string disabled = [] {
    const char* v = std::getenv("HAL_HIP_DISABLE");
    return std::string(",") + (v ? v : "") + ",";
  }();
  if (disabled.find(",all,") != std::string::npos) return false;
  return disabled.find(std::string(",") + std::string(path) + ",") == std::string::npos;
}

namespace {

bool rows_are_16_byte_aligned(const Tensor& t) {
  if (t.strides[3] != 1) return false;
  for (int d = 0; d < 3; ++d)
    if (t.strides[d] % 8 != 0) return false;
  return reinterpret_cast<std::uintptr_t>(t.first()) % 16 == 0;
}

// The flash kernel's name, or nullptr when the call needs the general kernel.
const char* flash_kernel(const AttentionCall& c, const kernel_params::AttentionParams& p, const HipDeviceCaps& caps) {
  const DType t = c.q.dtype;
  if (t != DType::f16 && t != DType::bf16) return nullptr;
  if (c.k.dtype != t || c.v.dtype != t || c.y.dtype != t) return nullptr;
  if (p.d != p.dv || (p.d != 64 && p.d != 128)) return nullptr;
  if (p.hkv <= 0 || p.hq % p.hkv != 0) return nullptr;
  if (p.hq > 65535 || p.batch > 65535) return nullptr;  // grid y, z
  // grid x * block x must stay below 2^32 work-items.
  if ((p.sq + kernels::kFlashBlockQ - 1) / kernels::kFlashBlockQ >= (std::int64_t{1} << 32) / kernels::kFlashThreads)
    return nullptr;
  for (const Tensor* x : {&c.q, &c.k, &c.v, &c.y})
    if (!rows_are_16_byte_aligned(*x)) return nullptr;
  if (caps.max_shared_per_block > 0 &&
      static_cast<std::int64_t>(kernels::flash_lds_bytes(static_cast<int>(p.d))) > caps.max_shared_per_block)
    return nullptr;
  static constexpr const char* kNames[2][2][2] = {
      {{"attention_flash_f16_d64", "attention_flash_f16_d128"}, {"attention_flash_bf16_d64", "attention_flash_bf16_d128"}},
      {{"attention_flash_f16_d64_lse", "attention_flash_f16_d128_lse"},
       {"attention_flash_bf16_d64_lse", "attention_flash_bf16_d128_lse"}}};
  return kNames[p.lse != nullptr][t == DType::bf16][p.d == 128];
}

}  // namespace

AttentionLaunch attention_launch(const AttentionCall& c, const HipDeviceCaps& caps, bool flash_enabled) {
  AttentionLaunch l;
  l.params = gpu::attention_params(c, "hip");
  const kernel_params::AttentionParams& p = l.params;
  // Beyond the general kernel's reach (and never a flash shape).
  if (p.d > kernels::kAttentionMaxHeadDim || p.dv > kernels::kAttentionMaxHeadDim)
    throw Error(ErrorCode::unsupported, fmt::format("hip: attention is not supported for head dims {} / {} "
                                                    "(the kernel holds at most {} per row in registers)",
                                                    p.d, p.dv, kernels::kAttentionMaxHeadDim));
  const std::int64_t rows = p.batch * p.sq * p.hq;
  if (rows == 0 || (p.dv == 0 && p.lse == nullptr)) return l;  // dv == 0 still writes lse

  if (const char* flash = flash_enabled ? flash_kernel(c, p, caps) : nullptr) {
    l.kernel = flash;
    l.shape.grid[0] = static_cast<unsigned>((p.sq + kernels::kFlashBlockQ - 1) / kernels::kFlashBlockQ);
    l.shape.grid[1] = static_cast<unsigned>(p.hq);
    l.shape.grid[2] = static_cast<unsigned>(p.batch);
    l.shape.block[0] = kernels::kFlashThreads;
    return l;
  }

  constexpr int kRowsPerBlock = kernels::kAttentionThreads / 64;
  l.kernel = p.lse != nullptr ? "attention_general_lse" : "attention_general";
  l.shape.block[0] = kernels::kAttentionThreads;
  l.shape.grid[0] = static_cast<unsigned>(std::min<std::int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, 1 << 20));
  return l;
}

void run_attention(HipStream& s, const AttentionCall& c) {
  const AttentionLaunch l = attention_launch(c, stream_caps(s), hip_path_enabled("flash"));
  if (l.kernel != nullptr) launch(s, l.kernel, l.shape, l.params);
}

}  // namespace hal::hip
