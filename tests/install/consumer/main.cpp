// Adds two vectors on the CPU device through the installed hal package.
#include <cstdio>

#include "hal/buffer.h"
#include "hal/registry.h"
#include "ops/ops.h"

int main() {
  hal::Device& cpu = hal::device("cpu");
  hal::Stream s(cpu);
  hal::Buffer a = hal::Buffer::for_tensor(cpu, hal::DType::f32, {3});
  hal::Buffer b = hal::Buffer::for_tensor(cpu, hal::DType::f32, {3});
  hal::Buffer y = hal::Buffer::for_tensor(cpu, hal::DType::f32, {3});
  const float av[3] = {1, 2, 3}, bv[3] = {10, 20, 30};
  s.upload(a.view(hal::DType::f32, {3}), av);
  s.upload(b.view(hal::DType::f32, {3}), bv);
  hal::ops::add(s, a.view(hal::DType::f32, {3}), b.view(hal::DType::f32, {3}), y.view(hal::DType::f32, {3}));
  float out[3];
  s.download(out, y.view(hal::DType::f32, {3}));
  s.synchronize();
  const bool ok = out[0] == 11 && out[1] == 22 && out[2] == 33;
  std::printf("%s: %g %g %g\n", ok ? "ok" : "WRONG", out[0], out[1], out[2]);
  return ok ? 0 : 1;
}
