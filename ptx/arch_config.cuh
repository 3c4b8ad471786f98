#pragma once
// The ONE place that decides which PTX instruction families a device compile
// may use. Every wrapper header includes this and guards its body with
// HAL_PTX_REQUIRE(...) so that using, say, wgmma in an sm_80 compile fails at
// compile time with a message naming the wrapper and the missing feature --
// never a silent runtime trap (CuTe's fallback) and never a second scheme.
//
// Feature macros (each 0 or 1; 0 in the host pass):
//   HAL_PTX_SM80   mma.sync (bf16/f16), cp.async, ldmatrix        sm_80+
//   HAL_PTX_SM89   mma.sync fp8 (e4m3/e5m2, m16n8k32)              sm_89+
//   HAL_PTX_SM90   mbarrier expect_tx, TMA cp.async.bulk.tensor,
//                  elect.sync, stmatrix, fence.proxy.async        sm_90+
//   HAL_PTX_SM90A  wgmma.mma_async, setmaxnreg                     sm_90a only
//                  (arch-specific target: __CUDA_ARCH_FEAT_SM90_ALL)
//   HAL_PTX_DEVICE_PASS  1 while nvcc compiles device code for some arch.
//
// Usage in a wrapper: see HAL_PTX_REQUIRE below.

#if defined(__CUDA_ARCH__)
#define HAL_PTX_DEVICE_PASS 1
#define HAL_PTX_ARCH __CUDA_ARCH__
#else
#define HAL_PTX_DEVICE_PASS 0
#define HAL_PTX_ARCH 0
#endif

#if HAL_PTX_DEVICE_PASS && (__CUDA_ARCH__ >= 800)
#define HAL_PTX_SM80 1
#else
#define HAL_PTX_SM80 0
#endif

// mma.sync with e4m3 / e5m2 operands (m16n8k32, f32 accumulate): sm_89+.
#if HAL_PTX_DEVICE_PASS && (__CUDA_ARCH__ >= 890)
#define HAL_PTX_SM89 1
#else
#define HAL_PTX_SM89 0
#endif

#if HAL_PTX_DEVICE_PASS && (__CUDA_ARCH__ >= 900)
#define HAL_PTX_SM90 1
#else
#define HAL_PTX_SM90 0
#endif

// sm_90a features exist only on exactly compute capability 9.0 compiled for
// the arch-specific target; an sm_100 compile does not get them.
#if HAL_PTX_DEVICE_PASS && defined(__CUDA_ARCH_FEAT_SM90_ALL) && (__CUDA_ARCH__ == 900)
#define HAL_PTX_SM90A 1
#else
#define HAL_PTX_SM90A 0
#endif

// Compile-time guard for a wrapper body. The check must fire only when the
// wrapper is actually used (every kernel file is compiled for sm_80 AND sm_90a,
// so an unused wgmma wrapper must not break the sm_80 pass). Therefore the
// condition is made dependent on a template parameter `tag` of the wrapper and
// is evaluated at instantiation, i.e. at the call site:
//
//   template <int Arch = HAL_PTX_ARCH>
//   __device__ __forceinline__ void wgmma_fence() {
//     HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90A, "wgmma_fence", "sm_90a (wgmma)");
//     asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
//   }
//
// For wrappers that are already templates (mma structs on shape/type) any
// int-valued dependent expression works as the tag, e.g. sizeof(T).
// `wrapper` and `needs` are string literals for the message. In the host pass
// the check is always true (device bodies are never emitted there).
namespace hal::ptx::arch {
template <bool Feature, long long Tag>
inline constexpr bool available = Feature;
}  // namespace hal::ptx::arch

#if HAL_PTX_DEVICE_PASS
#define HAL_PTX_REQUIRE(tag, feature, wrapper, needs)                                              \
  static_assert(::hal::ptx::arch::available<(feature), static_cast<long long>(tag)>,               \
                "hal ptx: " wrapper " needs " needs                                                \
                "; this device compile targets an architecture without it (guard the caller "      \
                "with #if on the feature macro from ptx/arch_config.cuh)")
#else
#define HAL_PTX_REQUIRE(tag, feature, wrapper, needs) static_assert(true, "")
#endif

// A whole header that only makes sense on an architecture (e.g. wgmma.cuh)
// may instead be wrapped in `#if HAL_PTX_SM90A ... #endif` by its includer.
// Kernels choose their path with the same macros:
//   #if HAL_PTX_SM90A  ... wgmma path ...
//   #elif HAL_PTX_SM80 ... mma.sync path ...
//   #else  #error "..." (or a scalar path)
//   #endif

// Warp size: NVIDIA is always 32. Shared device code takes it as a template
// parameter; this is the value nvcc compiles use.
#define HAL_PTX_WARP_SIZE 32
