// The fused softmax cross-entropy, the HIP twin of
// ptx/kernels/training_loss.cu: three kernels on kernel_params/training.h:
//   hal_cross_entropy_check   one block: counts the rows not ignored and finds
//                             the first target outside [0, V) (the launcher
//                             reads it back and throws before any write);
//   hal_cross_entropy_rows    one workgroup of 4 wave64s per row, the vocabulary in
//                             lane-strided chunks (V = 128256 is 501 elements
//                             a thread): max (NaN wins), sum exp(z - max),
//                             sum z (smoothing), each lane in column order and
//                             combined by block_allreduce (wave64
//                             butterfly, then the waves in order); the row's
//                             loss, and dlogits (exp recomputed, not stored);
//   hal_cross_entropy_reduce  one block: the row losses in a fixed order, / count.
// No atomics; every order depends on the shape alone.
//
// Compiled, never run on a GPU: declined unless HAL_GPU_UNVERIFIED=1.
#include "kernel_params/training.h"
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

constexpr int kThreads = kRowThreads;

// Every thread of the workgroup ends with comb over all of them: the wave64
// butterfly, then the waves' results in wave order (hip/wave.h's scheme, with
// any combine: block_reduce's max would drop a NaN through fmaxf).
template <class F>
__device__ __forceinline__ float block_allreduce(float v, float* scratch, F comb) {
#pragma unroll
  for (int off = kWaveSize / 2; off > 0; off /= 2) v = comb(v, __shfl_xor(v, off, kWaveSize));
  __syncthreads();  // scratch may still be read by a previous call
  if (lane_id() == 0) scratch[wave_id()] = v;
  __syncthreads();
  float r = scratch[0];
#pragma unroll
  for (int w = 1; w < kRowWaves; ++w) r = comb(r, scratch[w]);
  return r;
}

__device__ __forceinline__ float nan_max(float a, float b) { return a != a ? a : (b != b ? b : fmaxf(a, b)); }

__device__ __forceinline__ int64_t load_target(const void* t, bool i64, int64_t at) {
  return i64 ? static_cast<const int64_t*>(t)[at] : static_cast<int64_t>(static_cast<const int32_t*>(t)[at]);
}

}  // namespace

extern "C" __global__ __launch_bounds__(kThreads) void hal_cross_entropy_check(CrossEntropyCheckParams p) {
  __shared__ int64_t counts[kThreads];
  __shared__ int64_t bad_rows[kThreads];
  __shared__ int64_t bad_values[kThreads];
  int64_t count = 0, bad = -1, value = 0;
  for (int64_t i = threadIdx.x; i < p.n; i += kThreads) {
    const int64_t t = load_target(p.targets, p.targets_i64 != 0, i * p.targets_stride);
    if (t == p.ignore_index) continue;
    ++count;
    if ((t < 0 || t >= p.vocab) && bad < 0) bad = i, value = t;  // this lane's first bad row
  }
  counts[threadIdx.x] = count;
  bad_rows[threadIdx.x] = bad;
  bad_values[threadIdx.x] = value;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const int o = threadIdx.x + half;
      counts[threadIdx.x] += counts[o];
      const int64_t b = bad_rows[o];
      if (b >= 0 && (bad_rows[threadIdx.x] < 0 || b < bad_rows[threadIdx.x])) {
        bad_rows[threadIdx.x] = b;
        bad_values[threadIdx.x] = bad_values[o];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    p.result->counted = counts[0];
    p.result->bad_row = bad_rows[0];
    p.result->bad_value = bad_values[0];
  }
}

extern "C" __global__ __launch_bounds__(kThreads) void hal_cross_entropy_rows(CrossEntropyParams p) {
  __shared__ float scratch[kRowWaves];
  const int32_t zt = p.logits_type;
  const auto add = [](float a, float b) { return a + b; };
  const auto nmax = [](float a, float b) { return nan_max(a, b); };
  for (int64_t i = blockIdx.x; i < p.n; i += gridDim.x) {
    const int64_t target = load_target(p.targets, p.targets_i64 != 0, i * p.targets_stride);
    const int64_t zrow = i * p.logits_row_stride, zs = p.logits_col_stride;
    if (target == p.ignore_index || p.vocab == 0) {
      if (p.dlogits != nullptr)
        for (int64_t j = threadIdx.x; j < p.vocab; j += kThreads)
          store_f32(p.dlogits, zt, i * p.dlogits_row_stride + j * p.dlogits_col_stride, 0.0f);
      if (threadIdx.x == 0) p.row_loss[i * p.row_loss_stride] = 0.0f;
      continue;  // uniform over the block: every thread skips the reductions together
    }
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < p.vocab; j += kThreads) m = nan_max(m, load_f32(p.logits, zt, zrow + j * zs));
    m = block_allreduce(m, scratch, nmax);
    float se = 0.0f, sz = 0.0f;
    for (int64_t j = threadIdx.x; j < p.vocab; j += kThreads) {
      const float z = load_f32(p.logits, zt, zrow + j * zs);
      se += expf(z - m);
      sz += z;
    }
    const float sum = block_allreduce(se, scratch, add);
    const float lse = m + logf(sum);
    float loss = lse - load_f32(p.logits, zt, zrow + target * zs);
    if (p.smoothing != 0.0f) {
      const float mean = block_allreduce(sz, scratch, add) / static_cast<float>(p.vocab);
      loss = p.keep * loss + p.smoothing * (lse - mean);
    }
    if (threadIdx.x == 0) p.row_loss[i * p.row_loss_stride] = loss;
    if (p.dlogits != nullptr) {
      const float inv = 1.0f / sum;
      for (int64_t j = threadIdx.x; j < p.vocab; j += kThreads) {
        float g = expf(load_f32(p.logits, zt, zrow + j * zs) - m) * inv;
        if (j == target) g -= p.keep;
        if (p.smoothing != 0.0f) g -= p.spread;
        store_f32(p.dlogits, zt, i * p.dlogits_row_stride + j * p.dlogits_col_stride, p.weight * g);
      }
    }
  }
}

extern "C" __global__ __launch_bounds__(kThreads) void hal_cross_entropy_reduce(CrossEntropyReduceParams p) {
  __shared__ float scratch[kRowWaves];
  float acc = 0.0f;
  for (int64_t i = threadIdx.x; i < p.n; i += kThreads) acc += p.row_loss[i];
  float total = block_allreduce(acc, scratch, [](float a, float b) { return a + b; });
  if (p.mean) total = total / p.counted;  // 0 / 0: NaN, as in PyTorch
  if (threadIdx.x == 0) *p.loss = total;
}
