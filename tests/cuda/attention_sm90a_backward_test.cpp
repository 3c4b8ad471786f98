// cuda:0: the unverified sm_90a attention backward
// (attention_sm90a_backward.cu: TMA + wgmma dK/dV and dQ kernels) against the
// cpu device, f16/bf16, d in {64, 128}: grouped-query heads, causal and not,
// sq != sk both ways, ragged tiles, several query heads per kv head and many
// query tiles per key block (the dK/dV ring wraps), bitwise run-to-run
// determinism, and the launch counter proving the sm_90a kernels produced
// the answer. The forward's y and lse come from the cpu device, so both
// devices differentiate the same forward. Skips without a GPU, and on a GPU
// without sm_90a code or with the path disabled
// (HAL_CUDA_DISABLE=wgmma_attention or wgmma_attention_bwd).
//
// Elementwise against the mma.sync backward (the same P / dS splits and
// rounding steps): HAL_CUDA_DISABLE is read once per process, so run this
// binary's CudaAttentionSm90aBackward.* once as is and once with
// HAL_CUDA_DISABLE=wgmma_attention_bwd (the mma.sync kernels answer, the
// launch-count checks skip) and compare the dumps of HAL_TEST_DUMP_DIR
// (one file per case and gradient) byte for byte or within the bound below.
//
// Bound: both devices compute in fp32 and differ in summation order; each
// gradient element is a sum of at most sq (dk, dv) or sk (dq) products of
// d-term dot products, so fp32 rounding is far below one 16-bit output ulp;
// allowed: 2 output ulps + 64 u32 (sq + sk + d) max|gradient|. A fragment
// layout, swizzle or descriptor mistake gives errors of order max|gradient|,
// a single 16-bit P or dS 2^-9 relative: outside.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "attention_test_inputs.h"
#include "backends/cuda/cuda_attention_sm90a_backward.h"
#include "backends/cuda/cuda_paths.h"
#include "kern_test_util.h"
#include "ops/ops.h"
#include "ops/training.h"
#include "tests/unverified_switch.h"

namespace hal::cuda_test {
namespace {

using test::UnverifiedSwitch;
using Case = AttentionCase;

bool sm90a_backward_device() {
  const auto& f = cuda_device()->info().features;
  return std::find(f.begin(), f.end(), "wgmma") != f.end() && cuda::path_enabled("wgmma_attention") &&
         cuda::path_enabled("wgmma_attention_bwd");
}

struct BwdInputs {
  HostTensor q, k, v, dy, y, lse;
};

struct Grads {
  std::vector<unsigned char> dq, dk, dv;
};

Shape qshape(const Case& c) { return {c.b, c.sq, c.hq, c.d}; }
Shape kshape(const Case& c) { return {c.b, c.sk, c.hkv, c.d}; }

// q, k, v, dy in [-1, 1]; y and lse from the cpu device's forward.
BwdInputs make_bwd_inputs(DType t, const Case& c) {
  BwdInputs in{random_tensor(t, qshape(c), -1, 1, 91), random_tensor(t, kshape(c), -1, 1, 92),
               random_tensor(t, kshape(c), -1, 1, 93), random_tensor(t, qshape(c), -1, 1, 94), {}, {}};
  Device& cpu = device("cpu");
  Stream s(cpu);
  std::vector<Buffer> keep;
  auto upload = [&](const HostTensor& h) {
    keep.emplace_back(cpu, h.bytes.size() + 1);
    s.copy_from_host(keep.back().data(), h.bytes.data(), h.bytes.size());
    return Tensor::contiguous(keep.back().data(), &cpu, h.dtype, h.shape);
  };
  Guarded y = guarded(cpu, s, t, qshape(c));
  Guarded lse = guarded(cpu, s, DType::f32, Shape{c.b, c.sq, c.hq});
  AttentionCall fwd{upload(in.q), upload(in.k), upload(in.v), y.tensor, 0.0f, c.causal};
  fwd.lse = lse.tensor;
  ops::run(s, fwd);
  in.y = {t, qshape(c), download_checked(s, y)};
  in.lse = {DType::f32, Shape{c.b, c.sq, c.hq}, download_checked(s, lse)};
  return in;
}

Grads run_backward(Device& dev, DType t, const Case& c, const BwdInputs& in) {
  Stream s(dev);
  std::vector<Buffer> keep;
  auto upload = [&](const HostTensor& h) {
    keep.emplace_back(dev, h.bytes.size() + 1);
    s.copy_from_host(keep.back().data(), h.bytes.data(), h.bytes.size());
    return Tensor::contiguous(keep.back().data(), &dev, h.dtype, h.shape);
  };
  const Tensor q = upload(in.q), k = upload(in.k), v = upload(in.v), dy = upload(in.dy), y = upload(in.y),
               lse = upload(in.lse);
  Guarded dq = guarded(dev, s, t, qshape(c)), dk = guarded(dev, s, t, kshape(c)), dv = guarded(dev, s, t, kshape(c));
  ops::attention_backward(s, q, k, v, y, dy, lse, dq.tensor, dk.tensor, dv.tensor, {.causal = c.causal});
  return {download_checked(s, dq), download_checked(s, dk), download_checked(s, dv)};
}

double max_abs_bytes(DType t, const std::vector<unsigned char>& b) {
  double m = 0;
  const auto n = static_cast<std::int64_t>(b.size() / dtype_size(t));
  for (std::int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(load_element(b.data(), t, i)));
  return m;
}

void compare(DType t, const Case& c, const std::vector<unsigned char>& got, const std::vector<unsigned char>& want,
             const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double gmax = max_abs_bytes(t, want);
  const double tol = 64.0 * kU32 * static_cast<double>(c.sq + c.sk + c.d) * gmax;
  const auto n = static_cast<std::int64_t>(got.size() / dtype_size(t));
  std::size_t bad = 0;
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = load_element(got.data(), t, i), w = load_element(want.data(), t, i);
    const double err = std::fabs(g - w);
    worst = std::max(worst, err);
    if (!(err <= tol + 2.0 * ulp_at(t, std::max(std::fabs(g), std::fabs(w)))) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << ": got " << g << " want " << w << " (tol " << tol << ")";
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << n << " elements out of bound; worst error " << worst
                     << ", max|gradient| " << gmax;
}

void dump(const std::string& name, const std::vector<unsigned char>& bytes) {
  const char* dir = std::getenv("HAL_TEST_DUMP_DIR");
  if (dir == nullptr) return;
  std::ofstream(std::string(dir) + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void check(DType t, const Case& c) {
  const std::string what = describe(t, c);
  const BwdInputs in = make_bwd_inputs(t, c);
  UnverifiedSwitch on("1");  // attention_backward's GPU kernels are all unverified
  const bool sm90a = sm90a_backward_device();
  const std::uint64_t before = cuda::attention_backward_sm90a_launch_count();
  const Grads got = run_backward(*cuda_device(), t, c, in);
  const Grads again = run_backward(*cuda_device(), t, c, in);
  if (sm90a) {
    EXPECT_EQ(cuda::attention_backward_sm90a_launch_count(), before + 4) << what << ": the sm_90a kernels did not run";
  }
  EXPECT_TRUE(got.dq == again.dq && got.dk == again.dk && got.dv == again.dv) << what << ": two runs differ";
  const Grads want = run_backward(device("cpu"), t, c, in);
  compare(t, c, got.dq, want.dq, what + " dq");
  compare(t, c, got.dk, want.dk, what + " dk");
  compare(t, c, got.dv, want.dv, what + " dv");
  std::string file = what;
  std::replace(file.begin(), file.end(), ' ', '_');
  dump(file + (sm90a ? ".sm90a" : ".mma") + ".dq", got.dq);
  dump(file + (sm90a ? ".sm90a" : ".mma") + ".dk", got.dk);
  dump(file + (sm90a ? ".sm90a" : ".mma") + ".dv", got.dv);
}

#define HAL_REQUIRE_SM90A_BACKWARD()                                                                        \
  do {                                                                                                     \
    HAL_REQUIRE_CUDA();                                                                                    \
    if (!sm90a_backward_device()) GTEST_SKIP() << "no sm_90a device, or the sm_90a backward is disabled";  \
  } while (0)

TEST(CudaAttentionSm90aBackward, GroupedQuerySquare) {
  HAL_REQUIRE_SM90A_BACKWARD();
  for (DType t : {DType::f16, DType::bf16})
    for (std::int64_t d : {64, 128})
      for (bool causal : {false, true}) check(t, {2, 256, 256, 8, 2, d, causal});
}

TEST(CudaAttentionSm90aBackward, RaggedTiles) {
  HAL_REQUIRE_SM90A_BACKWARD();
  for (DType t : {DType::f16, DType::bf16})
    for (std::int64_t d : {64, 128})
      for (bool causal : {false, true}) {
        check(t, {1, 300, 515, 4, 4, d, causal});  // sq < sk: the diagonal shifts by 215
        check(t, {1, 515, 300, 4, 2, d, causal});  // sq > sk: early queries see no key
        check(t, {1, 130, 129, 2, 1, d, causal});  // one query and one key past a tile
      }
}

// 8 query heads per kv head x 16 query tiles: each dK/dV CTA walks 128
// (Q, dY) tiles, its two-stage ring wrapping 64 times.
TEST(CudaAttentionSm90aBackward, LongWalks) {
  HAL_REQUIRE_SM90A_BACKWARD();
  for (DType t : {DType::f16, DType::bf16}) check(t, {1, 1024, 1024, 8, 1, 128, true});
  check(DType::bf16, {2, 1024, 1024, 4, 1, 64, false});
}

// Off without HAL_GPU_UNVERIFIED=1 (the whole op is declined then).
TEST(CudaAttentionSm90aBackward, OffWithoutTheUnverifiedSwitch) {
  HAL_REQUIRE_CUDA();
  UnverifiedSwitch off(nullptr);
  EXPECT_FALSE(cuda::attention_backward_sm90a_switched_on());
}

}  // namespace
}  // namespace hal::cuda_test
