#pragma once
// The vendor FP8 GEMM that `hal bench --op gemm_fp8` reports hal's scaled
// FP8 GEMM against: cuBLASLt's FP8 matmul with per-tensor scales on NVIDIA
// (loaded at run time, like cuBLAS in vendor_blas.h). Per-tensor scaling is
// what cuBLASLt offers on Hopper; hal's gemm_fp8 does DeepSeek-V3's finer
// 1 x 128 / 128 x 128 scaling, so the comparison is the rate of the
// coarser, simpler recipe on the same shapes.
#include <memory>
#include <string>

#include "hal/stream.h"

namespace hal::bench {

class VendorFp8Gemm {
 public:
  virtual ~VendorFp8Gemm() = default;
  virtual std::string name() const = 0;  // "cuBLASLt cublasLtMatmul e4m3 (per-tensor scales)"
  // Row-major C[M,N] (bf16) = (a_scale * A[M,K]) (b_scale * B[N,K])^T, A and B
  // f8e4m3 contiguous, the scales f32 [1] on the stream's device.
  virtual void gemm(Stream& stream, const Tensor& a, const Tensor& a_scale, const Tensor& b, const Tensor& b_scale,
                    const Tensor& c) = 0;
};

// nullptr (and *why set) when the device has no vendor FP8 GEMM that loads.
std::unique_ptr<VendorFp8Gemm> open_vendor_fp8_gemm(Device& device, std::string* why);

}  // namespace hal::bench
