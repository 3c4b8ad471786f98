#pragma once
// Parameters of hip/kernels/wrapper_tests.hip: single-wave kernels that
// exercise one hip/ wrapper each against a CPU reference in tests/hip
// (GPU-NOTES: fragment layouts are the most common source of wrong answers).
#include <stdint.h>

namespace hal::hip::kernels {

// D = A (M x K, row-major f16 bits) @ B (K x N, row-major f16 bits), f32 D
// row-major; shape picks the instruction: 0 = 32x32x8, 1 = 16x16x16;
// bf16 != 0 uses the bf16_1k variant (A and B then hold bf16 bits).
struct MfmaTestParams {
  const uint16_t* a;
  const uint16_t* b;
  float* d;
  int32_t shape;
  int32_t bf16;
};

// D[32][32] = A (32 x 16, row-major e4m3fnuz bytes) @ B (16 x 32, row-major
// bytes) through v_mfma_f32_32x32x16_fp8_fp8 (gfx94x). *status = 1 when the
// instruction exists on the target the kernel was compiled for, 2 otherwise
// (gfx90a: nothing else is written).
struct MfmaFp8TestParams {
  const uint8_t* a;
  const uint8_t* b;
  float* d;
  uint32_t* status;
};

// out[0] = wave_sum(in[0..63]), out[1] = wave_max(in[0..63]): one wave.
struct WaveTestParams {
  const float* in;
  float* out;
};

}  // namespace hal::hip::kernels
