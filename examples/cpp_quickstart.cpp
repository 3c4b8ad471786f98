// The README's C++ example: y = rmsnorm(x) @ w on any device, checked on the host.
// Run: cpp_quickstart [DEVICE]  (default: $HAL_DEVICE, else cpu)
#include <cmath>
#include <cstdio>
#include <vector>

#include "hal/buffer.h"
#include "hal/registry.h"
#include "ops/ops.h"

int main(int argc, char** argv) {
  using hal::DType;
  hal::Device& dev = argc > 1 ? hal::device(argv[1]) : hal::default_device();
  hal::Stream s(dev);
  hal::Buffer x(dev, 4 * 64 * 2), g(dev, 64 * 2), h(dev, 4 * 64 * 2), w(dev, 64 * 32 * 2), y(dev, 4 * 32 * 2);
  const hal::Tensor xv = x.view(DType::bf16, {4, 64}), gv = g.view(DType::bf16, {64}), hv = h.view(DType::bf16, {4, 64});
  const hal::Tensor wv = w.view(DType::bf16, {64, 32}), yv = y.view(DType::bf16, {4, 32});
  hal::ops::fill_random(s, xv, {.seed = 1, .distribution = hal::RandomDistribution::normal});
  hal::ops::fill_random(s, gv, {.seed = 2, .a = 0.5f, .b = 1.5f});
  hal::ops::fill_random(s, wv, {.seed = 3, .a = -0.1f, .b = 0.1f});
  hal::ops::rmsnorm(s, xv, gv, hv, {.eps = 1e-6f});
  hal::ops::gemm(s, hv, wv, yv);
  std::vector<std::uint16_t> out(4 * 32);
  s.download(out.data(), yv);
  s.synchronize();

  bool finite = true;
  for (std::uint16_t v : out) finite = finite && std::isfinite(hal::bf16_to_f32(v));
  std::printf("%s on %s: y[0][0] = %g\n", finite ? "ok" : "WRONG", dev.name().c_str(), hal::bf16_to_f32(out[0]));
  return finite ? 0 : 1;
}
