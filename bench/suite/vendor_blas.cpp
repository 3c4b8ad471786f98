#include "bench/suite/vendor_blas.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

#include "hal/error.h"
#include "hal/registry.h"

namespace hal::bench {

namespace {

void* open_first(std::initializer_list<const char*> names, std::string* tried) {
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
    if (tried) *tried += fmt::format("{}{}: {}", tried->empty() ? "" : "; ", n, dlerror());
  }
  return nullptr;
}

// --- OpenBLAS ---------------------------------------------------------------
// OpenBLAS's worker threads spin for 2^OPENBLAS_THREAD_TIMEOUT cycles after
// each call before they sleep: 2^28 by default, about 0.1 s. hal and vendor
// samples alternate, so those spinning threads took the cores from hal's
// next sample: on the 2-core VM f32 2048^3 read 0.76-0.99 of OpenBLAS and
// M = 128 0.43-0.88, against 0.91-0.95 and 0.83-0.88 with the shortest
// timeout, OpenBLAS's own rate no lower. The shortest (2^4) is asked for
// unless the user set one; OpenBLAS reads it when it loads, so before dlopen.
constexpr const char* kOpenBlasThreadTimeout = "4";
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111;
using cblas_sgemm_fn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                                float*, int);
using openblas_set_threads_fn = void (*)(int);

class OpenBlasGemm final : public VendorGemm {
 public:
  explicit OpenBlasGemm(void* lib) : lib_(lib) {
    sgemm_ = reinterpret_cast<cblas_sgemm_fn>(dlsym(lib, "cblas_sgemm"));
    if (auto set = reinterpret_cast<openblas_set_threads_fn>(dlsym(lib, "openblas_set_num_threads"))) {
      const int threads = static_cast<int>(device("cpu").info().compute_units);
      set(threads);  // the same threads hal's oneTBB pool uses
    }
  }
  bool ok() const { return sgemm_ != nullptr; }
  std::string name() const override {
    const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
    return fmt::format("OpenBLAS cblas_sgemm (OPENBLAS_THREAD_TIMEOUT={})", timeout ? timeout : "default");
  }
  bool supports(DType t) const override { return t == DType::f32; }
  void gemm(Stream&, const Tensor& a, const Tensor& b, const Tensor& c) override {
    const int m = static_cast<int>(a.shape[0]), k = static_cast<int>(a.shape[1]), n = static_cast<int>(b.shape[1]);
    sgemm_(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, 1.0f, static_cast<const float*>(a.first()), k,
           static_cast<const float*>(b.first()), n, 0.0f, static_cast<float*>(c.first()), n);
  }

 private:
  void* lib_;
  cblas_sgemm_fn sgemm_ = nullptr;
};

// --- cuBLAS -----------------------------------------------------------------
// Constants from cublas_api.h / library_types.h (stable ABI values).
constexpr int kCublasOpN = 0, kCublasOpT = 1;
constexpr int kCudaR32F = 0, kCudaR16F = 2, kCudaR16BF = 14;
constexpr int kCublasCompute32F = 68;
constexpr int kCublasGemmDefault = -1;
using cublasCreate_fn = int (*)(void**);
using cublasDestroy_fn = int (*)(void*);
using cublasSetStream_fn = int (*)(void*, void*);
using cublasGemmEx_fn = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int,
                                int, const void*, void*, int, int, int, int);

class CublasGemm final : public VendorGemm {
 public:
  explicit CublasGemm(void* lib) {
    create_ = reinterpret_cast<cublasCreate_fn>(dlsym(lib, "cublasCreate_v2"));
    destroy_ = reinterpret_cast<cublasDestroy_fn>(dlsym(lib, "cublasDestroy_v2"));
    set_stream_ = reinterpret_cast<cublasSetStream_fn>(dlsym(lib, "cublasSetStream_v2"));
    gemm_ex_ = reinterpret_cast<cublasGemmEx_fn>(dlsym(lib, "cublasGemmEx"));
    if (create_ && destroy_ && set_stream_ && gemm_ex_) status_ = create_(&handle_);
  }
  ~CublasGemm() override {
    if (handle_) destroy_(handle_);
  }
  bool ok() const { return handle_ != nullptr && status_ == 0; }
  int status() const { return status_; }
  std::string name() const override { return "cuBLAS cublasGemmEx"; }
  bool supports(DType t) const override { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }
  void gemm(Stream& s, const Tensor& a, const Tensor& b, const Tensor& c) override {
    const int m = static_cast<int>(a.shape[0]), k = static_cast<int>(a.shape[1]), n = static_cast<int>(b.shape[1]);
    const int type = a.dtype == DType::f32 ? kCudaR32F : a.dtype == DType::f16 ? kCudaR16F : kCudaR16BF;
    const float alpha = 1.0f, beta = 0.0f;
    set_stream_(handle_, s.impl().native_handle());
    // Row-major C = A B is column-major C^T = B^T A^T.
    const int st = gemm_ex_(handle_, kCublasOpN, kCublasOpN, n, m, k, &alpha, b.first(), type, n, a.first(), type, k,
                            &beta, c.first(), type, n, kCublasCompute32F, kCublasGemmDefault);
    if (st != 0) throw Error(ErrorCode::device_error, fmt::format("cublasGemmEx failed with status {}", st));
  }
  bool supports_nt() const override { return true; }
  void gemm_nt(Stream& s, const Tensor& a, const Tensor& w, const Tensor& c) override {
    const int m = static_cast<int>(a.shape[0]), k = static_cast<int>(a.shape[1]), n = static_cast<int>(w.shape[0]);
    const int type = a.dtype == DType::f32 ? kCudaR32F : a.dtype == DType::f16 ? kCudaR16F : kCudaR16BF;
    const float alpha = 1.0f, beta = 0.0f;
    set_stream_(handle_, s.impl().native_handle());
    // Row-major C = A W^T is column-major C^T = W A^T, W (column-major [K, N], ld K) transposed.
    const int st = gemm_ex_(handle_, kCublasOpT, kCublasOpN, n, m, k, &alpha, w.first(), type, k, a.first(), type, k,
                            &beta, c.first(), type, n, kCublasCompute32F, kCublasGemmDefault);
    if (st != 0) throw Error(ErrorCode::device_error, fmt::format("cublasGemmEx (op T) failed with status {}", st));
  }

 private:
  cublasCreate_fn create_ = nullptr;
  cublasDestroy_fn destroy_ = nullptr;
  cublasSetStream_fn set_stream_ = nullptr;
  cublasGemmEx_fn gemm_ex_ = nullptr;
  void* handle_ = nullptr;
  int status_ = -1;
};

}  // namespace

void VendorGemm::gemm_nt(Stream&, const Tensor&, const Tensor&, const Tensor&) {
  throw Error(ErrorCode::unsupported, fmt::format("{} has no A W^T form here", name()));
}

std::unique_ptr<VendorGemm> open_vendor_gemm(Device& dev, std::string* why) {
  std::string tried;
  const std::string backend = dev.info().backend;
  if (backend == "cpu") {
    setenv("OPENBLAS_THREAD_TIMEOUT", kOpenBlasThreadTimeout, /*overwrite=*/0);
    void* lib = open_first({"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0"}, &tried);
    if (lib) {
      auto g = std::make_unique<OpenBlasGemm>(lib);
      if (g->ok()) return g;
      tried = "cblas_sgemm not found in OpenBLAS";
    }
  } else if (backend == "cuda") {
    std::string custom;
    if (const char* p = std::getenv("HAL_CUBLAS_PATH")) custom = p;
    void* lib = custom.empty() ? nullptr : dlopen(custom.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = open_first({"libcublas.so.13", "libcublas.so.12", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so"}, &tried);
    if (lib) {
      auto g = std::make_unique<CublasGemm>(lib);
      if (g->ok()) return g;
      tried = fmt::format("cublasCreate failed with status {}", g->status());
    }
  } else {
    tried = fmt::format("no vendor library wired up for backend '{}'", backend);
  }
  if (why) *why = tried;
  return nullptr;
}

}  // namespace hal::bench
