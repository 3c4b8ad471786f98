#pragma once
// The per-row step of the general attention forwards' online softmax, the
// part that decides what -inf and NaN scores do, written once for the CUDA
// kernel (ptx/kernels/attention_general.cu), the HIP kernel
// (hip/kernels/attention_general.hip) and the host tests that run the same
// step on the edge cases against cpu_ref (tests/unit/online_softmax_test.cpp).
//
// The answers are cpu_ref's (cpu_ref/attention_task.h fold_scores and
// finish_row, the fp64 oracle alike): a row with no visible key gives zeros;
// a row whose scores are all -inf gives NaN (as softmax does); a NaN score
// makes the row NaN; -inf scores before the first finite one add nothing.
// fmaxf drops NaN, so the max alone cannot carry a NaN: the callers pass it
// on explicitly (CUDA) or through the exponent's weight (HIP).
#include <math.h>

#include "hal/host_device.h"

namespace hal::kernel_math {

// CUDA, one block of up to 32 scores: the row's new running max from the old
// one, the block's fmaxf max and whether the block holds a NaN. A NaN block
// makes the max NaN, so the rescale and every weight of the block are NaN and
// the row ends NaN; otherwise a result of -inf means every score so far is
// -inf and the caller skips the block (exp(-inf - -inf) would be NaN).
HAL_HOST_DEVICE inline float online_softmax_block_max(float m, float block_max, bool block_nan) {
  return block_nan ? NAN : fmaxf(m, block_max);
}

// CUDA, the row's output channel at the end: zeros when no key was visible,
// else acc / l (0 / 0 = NaN for a row of -inf scores, NaN after a NaN).
HAL_HOST_DEVICE inline float online_softmax_output(float acc, float l, bool any_key) {
  return any_key ? acc / l : 0.0f;
}

// HIP, one score at a time: what the exponents are shifted by for new max
// m_new = fmaxf(m, s). While every score so far is -inf it is 0, so that the
// rescale exp(m - shift) and the weight exp(s - shift) are 0 instead of
// exp(-inf - -inf) = NaN; a NaN score still gives a NaN weight.
HAL_HOST_DEVICE inline float online_softmax_shift(float m_new) { return m_new == -INFINITY ? 0.0f : m_new; }

}  // namespace hal::kernel_math
