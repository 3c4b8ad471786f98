#pragma once
// The vendor BLAS of a device, loaded at run time so that it stays optional:
// OpenBLAS on the CPU, cuBLAS on NVIDIA. hal's numbers are reported as a
// ratio to these, measured in the same run.
#include <memory>
#include <string>

#include "hal/stream.h"

namespace hal::bench {

class VendorGemm {
 public:
  virtual ~VendorGemm() = default;
  virtual std::string name() const = 0;  // "OpenBLAS cblas_sgemm", "cuBLAS cublasGemmEx"
  virtual bool supports(DType dtype) const = 0;
  // Row-major C[M,N] = A[M,K] @ B[K,N], all contiguous, one dtype, on the stream's device.
  virtual void gemm(Stream& stream, const Tensor& a, const Tensor& b, const Tensor& c) = 0;
  // Row-major C[M,N] = A[M,K] @ W[N,K]^T (the decode layout); only where supports_nt().
  virtual bool supports_nt() const { return false; }
  virtual void gemm_nt(Stream& stream, const Tensor& a, const Tensor& w, const Tensor& c);
};

// nullptr (and *why set) when the device's vendor library cannot be loaded.
std::unique_ptr<VendorGemm> open_vendor_gemm(Device& device, std::string* why);

}  // namespace hal::bench
