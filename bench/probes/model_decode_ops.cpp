// Where a decode step's time goes: every op of `rounds` decode steps of a
// checkpoint on the CPU, timed with a StepObserver (synchronised before and
// after each op), summed by stage, beside the bytes each GEMM's weight holds.
// Build (from the repository root, after the cpu preset):
//   g++ -std=c++20 -O2 -I. bench/probes/model_decode_ops.cpp build/cpu/model/libhal_model.a \
//     build/cpu/conformance/libhal_conformance.a build/cpu/libhal.a -ltbb -lfmt -ldl -o /tmp/model_decode_ops
// Run: /tmp/model_decode_ops DIR [steps]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <map>

#include "hal/registry.h"
#include "model/model.h"

using namespace hal;
using namespace hal::model;

struct Timer : StepObserver {
  std::map<std::string, double> ms;
  std::map<std::string, double> bytes;
  std::chrono::steady_clock::time_point t0;
  void before_op(const StageInfo&, const OpCall&, Stream& s) override {
    s.synchronize();
    t0 = std::chrono::steady_clock::now();
  }
  void after_op(const StageInfo& at, const OpCall& call, Stream& s) override {
    s.synchronize();
    const std::string key(at.stage);
    ms[key] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (const auto* g = std::get_if<GemmCall>(&call)) bytes[key] += static_cast<double>(g->b.numel() * dtype_size(g->b.dtype));
  }
};

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 8;
  const Checkpoint ckpt(argv[1]);
  Model m(ckpt, hal::device("cpu"), ckpt.stored_dtype());
  Session s(m, 1, 66 + steps);
  std::vector<std::vector<std::int32_t>> prompt{std::vector<std::int32_t>(64, 5)}, next{{7}};
  s.step(prompt);
  s.step(next);  // warm
  Timer t;
  const auto w0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) s.step(next, &t);
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count();
  double total = 0;
  for (const auto& [k, v] : t.ms) total += v;
  fmt::print("{} decode steps: {:.1f} ms per step (ops {:.1f} ms)\n", steps, wall / steps, total / steps);
  for (const auto& [k, v] : t.ms) {
    const double b = t.bytes.count(k) ? t.bytes[k] : 0;
    fmt::print("{:<12} {:8.2f} ms/step {:5.1f}%  {}\n", k, v / steps, 100 * v / total,
               b > 0 ? fmt::format("{:.2f} GB/s of weights", b / (v * 1e-3) * 1e-9) : "");
  }
}
