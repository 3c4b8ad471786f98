// cuBLASLt's FP8 GEMM, loaded at run time (dlopen) so that `hal bench` starts
// where it is absent. Prototypes and constants are declared here from
// cublasLt.h / library_types.h (stable ABI values), not included: the bench
// builds without the CUDA toolkit.
#include "bench/suite/vendor_fp8.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>

#include "hal/buffer.h"
#include "hal/error.h"

namespace hal::bench {

namespace {

constexpr int kCublasOpN = 0, kCublasOpT = 1;
constexpr int kCudaR32F = 0, kCudaR16BF = 14, kCudaR8FE4M3 = 28;
constexpr int kCublasCompute32F = 68;
constexpr int kDescTransA = 3, kDescTransB = 4, kDescAScalePointer = 17, kDescBScalePointer = 18;
constexpr int kPrefMaxWorkspaceBytes = 1;
constexpr std::size_t kWorkspaceBytes = 32u << 20;  // what NVIDIA's guide suggests for Hopper

struct MatmulAlgo {
  std::uint64_t data[8];
};
struct HeuristicResult {  // cublasLtMatmulHeuristicResult_t
  MatmulAlgo algo;
  std::size_t workspace_size;
  int state;
  float waves_count;
  int reserved[4];
};

using Create_fn = int (*)(void**);
using Destroy_fn = int (*)(void*);
using DescCreate_fn = int (*)(void**, int, int);
using DescDestroy_fn = int (*)(void*);
using DescSet_fn = int (*)(void*, int, const void*, std::size_t);
using LayoutCreate_fn = int (*)(void**, int, std::uint64_t, std::uint64_t, std::int64_t);
using LayoutDestroy_fn = int (*)(void*);
using PrefCreate_fn = int (*)(void**);
using PrefDestroy_fn = int (*)(void*);
using PrefSet_fn = int (*)(void*, int, const void*, std::size_t);
using Heuristic_fn = int (*)(void*, void*, void*, void*, void*, void*, void*, int, HeuristicResult*, int*);
using Matmul_fn = int (*)(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*,
                          void*, void*, void*, const MatmulAlgo*, void*, std::size_t, void*);

class CublasLtFp8Gemm final : public VendorFp8Gemm {
 public:
  CublasLtFp8Gemm(void* lib, Device& dev) : dev_(dev) {
    const auto sym = [&](const char* n) { return dlsym(lib, n); };
    create_ = reinterpret_cast<Create_fn>(sym("cublasLtCreate"));
    destroy_ = reinterpret_cast<Destroy_fn>(sym("cublasLtDestroy"));
    desc_create_ = reinterpret_cast<DescCreate_fn>(sym("cublasLtMatmulDescCreate"));
    desc_destroy_ = reinterpret_cast<DescDestroy_fn>(sym("cublasLtMatmulDescDestroy"));
    desc_set_ = reinterpret_cast<DescSet_fn>(sym("cublasLtMatmulDescSetAttribute"));
    layout_create_ = reinterpret_cast<LayoutCreate_fn>(sym("cublasLtMatrixLayoutCreate"));
    layout_destroy_ = reinterpret_cast<LayoutDestroy_fn>(sym("cublasLtMatrixLayoutDestroy"));
    pref_create_ = reinterpret_cast<PrefCreate_fn>(sym("cublasLtMatmulPreferenceCreate"));
    pref_destroy_ = reinterpret_cast<PrefDestroy_fn>(sym("cublasLtMatmulPreferenceDestroy"));
    pref_set_ = reinterpret_cast<PrefSet_fn>(sym("cublasLtMatmulPreferenceSetAttribute"));
    heuristic_ = reinterpret_cast<Heuristic_fn>(sym("cublasLtMatmulAlgoGetHeuristic"));
    matmul_ = reinterpret_cast<Matmul_fn>(sym("cublasLtMatmul"));
    const bool all = create_ && destroy_ && desc_create_ && desc_destroy_ && desc_set_ && layout_create_ &&
                     layout_destroy_ && pref_create_ && pref_destroy_ && pref_set_ && heuristic_ && matmul_;
    status_ = all ? create_(&handle_) : -1;
  }
  ~CublasLtFp8Gemm() override {
    if (handle_) destroy_(handle_);
  }
  bool ok() const { return handle_ != nullptr && status_ == 0; }
  int status() const { return status_; }
  std::string name() const override { return "cuBLASLt cublasLtMatmul e4m3 (per-tensor scales)"; }

  void gemm(Stream& s, const Tensor& a, const Tensor& a_scale, const Tensor& b, const Tensor& b_scale,
            const Tensor& c) override {
    if (workspace_.data() == nullptr) workspace_ = Buffer(dev_, kWorkspaceBytes);
    const std::uint64_t m = static_cast<std::uint64_t>(a.shape[0]), k = static_cast<std::uint64_t>(a.shape[1]),
                        n = static_cast<std::uint64_t>(b.shape[0]);
    // Row-major C[M,N] = A B^T is column-major C^T[N,M] = B^T' ... with B [N,K]
    // row-major = column-major K x N: op T gives N x K; A [M,K] row-major =
    // column-major K x M, op N. The "TN" layout FP8 matmuls require.
    void *desc = nullptr, *la = nullptr, *lb = nullptr, *lc = nullptr, *pref = nullptr;
    const auto check = [&](int st, const char* what) {
      if (st != 0) {
        release(desc, la, lb, lc, pref);
        throw Error(ErrorCode::device_error, fmt::format("{} failed with cuBLAS status {}", what, st));
      }
    };
    check(desc_create_(&desc, kCublasCompute32F, kCudaR32F), "cublasLtMatmulDescCreate");
    const int trans_t = kCublasOpT, trans_n = kCublasOpN;
    const void* sb = b_scale.first();
    const void* sa = a_scale.first();
    check(desc_set_(desc, kDescTransA, &trans_t, sizeof(trans_t)), "cublasLtMatmulDescSetAttribute(TRANSA)");
    check(desc_set_(desc, kDescTransB, &trans_n, sizeof(trans_n)), "cublasLtMatmulDescSetAttribute(TRANSB)");
    check(desc_set_(desc, kDescAScalePointer, &sb, sizeof(sb)), "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)");
    check(desc_set_(desc, kDescBScalePointer, &sa, sizeof(sa)), "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)");
    check(layout_create_(&la, kCudaR8FE4M3, k, n, static_cast<std::int64_t>(k)), "cublasLtMatrixLayoutCreate(B)");
    check(layout_create_(&lb, kCudaR8FE4M3, k, m, static_cast<std::int64_t>(k)), "cublasLtMatrixLayoutCreate(A)");
    check(layout_create_(&lc, kCudaR16BF, n, m, static_cast<std::int64_t>(n)), "cublasLtMatrixLayoutCreate(C)");
    check(pref_create_(&pref), "cublasLtMatmulPreferenceCreate");
    const std::uint64_t ws = kWorkspaceBytes;
    check(pref_set_(pref, kPrefMaxWorkspaceBytes, &ws, sizeof(ws)), "cublasLtMatmulPreferenceSetAttribute");
    HeuristicResult h{};
    int found = 0;
    check(heuristic_(handle_, desc, la, lb, lc, lc, pref, 1, &h, &found), "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) check(-1, "cublasLtMatmulAlgoGetHeuristic (no FP8 algorithm for this shape)");
    const float alpha = 1.0f, beta = 0.0f;
    check(matmul_(handle_, desc, &alpha, b.first(), la, a.first(), lb, &beta, c.first(), lc, c.first(), lc, &h.algo,
                  workspace_.data(), kWorkspaceBytes, s.impl().native_handle()),
          "cublasLtMatmul");
    release(desc, la, lb, lc, pref);
  }

 private:
  void release(void* desc, void* la, void* lb, void* lc, void* pref) {
    if (pref) pref_destroy_(pref);
    if (lc) layout_destroy_(lc);
    if (lb) layout_destroy_(lb);
    if (la) layout_destroy_(la);
    if (desc) desc_destroy_(desc);
  }

  Device& dev_;
  Buffer workspace_;
  Create_fn create_ = nullptr;
  Destroy_fn destroy_ = nullptr;
  DescCreate_fn desc_create_ = nullptr;
  DescDestroy_fn desc_destroy_ = nullptr;
  DescSet_fn desc_set_ = nullptr;
  LayoutCreate_fn layout_create_ = nullptr;
  LayoutDestroy_fn layout_destroy_ = nullptr;
  PrefCreate_fn pref_create_ = nullptr;
  PrefDestroy_fn pref_destroy_ = nullptr;
  PrefSet_fn pref_set_ = nullptr;
  Heuristic_fn heuristic_ = nullptr;
  Matmul_fn matmul_ = nullptr;
  void* handle_ = nullptr;
  int status_ = -1;
};

}  // namespace

std::unique_ptr<VendorFp8Gemm> open_vendor_fp8_gemm(Device& dev, std::string* why) {
  std::string tried;
  if (dev.info().backend == "cuda") {
    void* lib = nullptr;
    if (const char* p = std::getenv("HAL_CUBLASLT_PATH")) {
      lib = dlopen(p, RTLD_NOW | RTLD_LOCAL);
      if (!lib) tried = fmt::format("{}: {}", p, dlerror());
    }
    for (const char* n : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", "/usr/local/cuda/lib64/libcublasLt.so"}) {
      if (lib) break;
      lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (!lib) tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", n, dlerror());
    }
    if (lib) {
      auto g = std::make_unique<CublasLtFp8Gemm>(lib, dev);
      if (g->ok()) return g;
      tried = fmt::format("cublasLtCreate failed with status {}", g->status());
    }
  } else {
    tried = fmt::format("no vendor FP8 GEMM wired up for backend '{}' (cuBLASLt on cuda only)", dev.info().backend);
  }
  if (why) *why = tried;
  return nullptr;
}

}  // namespace hal::bench
