#pragma once
// What the sm_90a attention forward (attention_sm90a_params.h) and backward
// (attention_sm90a_backward_params.h) plan alike: the block's warpgroup roles
// and register split, and the causal key range of a query block. Plain
// host/device header (no CUDA includes): tested on the CPU
// (tests/unit/attention_sm90a_plan_test.cpp,
// tests/unit/attention_sm90a_backward_plan_test.cpp).
#include <stdint.h>

namespace hal::ptx {

// A block of 384 threads: warpgroup 0 the producer (TMA), warpgroups 1 and 2
// the consumers. setmaxnreg: launched with 168 registers a thread (65536 /
// 384, rounded down to 8; ptxas allocates exactly that under
// __launch_bounds__(384, 1)), the producer drops to 24 and the consumers
// rise to 240: 128 * 24 + 256 * 240 = 168 * 384. The consumers'
// setmaxnreg.inc waits for registers the block's pool does not hold if the
// sum exceeds it. 24 is tight: the forward's producer spilled 8 bytes while
// its work order used 64-bit division. Every kernel and schedule of both
// runs in this split.
struct AttentionSm90aRegisters {
  static constexpr int kConsumerWarpgroups = 2;
  static constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);
  static constexpr int kLaunchRegisters = 168;
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = 240;
  static_assert(128 * kProducerRegisters + 256 * kConsumerRegisters <= kLaunchRegisters * kThreads,
                "setmaxnreg budget must fit the registers the block was launched with");
};

// Keys visible to queries [q0, q0 + rows) (causal: key j masked for query i
// when j > i + (sk - sq)): keys [0, attention_sm90a_kv_end) hold every key
// any of them sees. 0 when none sees any (the forward's tile output is
// zeros). The forward's key tiles per work item, the backward dQ's per block.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline int64_t attention_sm90a_kv_end(int64_t q0, int64_t rows, int64_t sq, int64_t sk, bool causal) {
  if (!causal) return sk;
  const int64_t last_q = q0 + rows - 1 < sq ? q0 + rows - 1 : sq - 1;
  const int64_t lim = last_q + (sk - sq) + 1;
  return lim < 0 ? 0 : (lim < sk ? lim : sk);
}

}  // namespace hal::ptx
