#pragma once
// The one place where HIP device-architecture features are derived.
//
// Every feature macro used by hip/ is defined here from the compiler's
// target macros (__gfx90a__, __gfx940__, ...), and wrappers that need a
// feature call HAL_HIP_REQUIRE(feature, "wrapper") so that a device compile
// for a target without it fails at compile time naming the wrapper, never at
// run time. The host pass (__HIP_DEVICE_COMPILE__ undefined) sees every
// feature as present: it only parses device code, it never emits it.
//
//   HAL_HIP_MFMA        CDNA matrix cores: v_mfma_* (gfx908, gfx90a, gfx94x)
//   HAL_HIP_MFMA_BF16_1K  the *_bf16_1k MFMA variants (gfx90a, gfx94x)
//   HAL_HIP_MFMA_FP8    the FNUZ fp8/bf8 MFMA variants (gfx940, gfx941, gfx942)
//   HAL_HIP_WAVE_SIZE   64 on every CDNA target this project builds for

#if defined(__HIP_DEVICE_COMPILE__)
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define HAL_HIP_MFMA 1
#define HAL_HIP_MFMA_BF16_1K 1
#elif defined(__gfx908__)
#define HAL_HIP_MFMA 1
#define HAL_HIP_MFMA_BF16_1K 0
#else
#define HAL_HIP_MFMA 0
#define HAL_HIP_MFMA_BF16_1K 0
#endif
#else
#define HAL_HIP_MFMA 1
#define HAL_HIP_MFMA_BF16_1K 1
#endif
#if defined(__HIP_DEVICE_COMPILE__)
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define HAL_HIP_MFMA_FP8 1
#else
#define HAL_HIP_MFMA_FP8 0
#endif
#else
#define HAL_HIP_MFMA_FP8 1
#endif

// CDNA is wave64. RDNA (wave32) is not a target of this backend; a build for
// it fails here instead of silently running 64-lane reductions on 32 lanes.
#define HAL_HIP_WAVE_SIZE 64
#if defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN_WAVEFRONT_SIZE)
static_assert(__AMDGCN_WAVEFRONT_SIZE == HAL_HIP_WAVE_SIZE,
              "hip/: kernels are written for wave64 (CDNA); this target compiles wave32");
#endif

#define HAL_HIP_REQUIRE(feature, wrapper) \
  static_assert(feature, wrapper ": needs " #feature ", which this --offload-arch lacks")
