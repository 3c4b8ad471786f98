// Data-parallel training in miniature: every rank fits the same linear model
// w (8 weights) to its own shard of data, all-reduces the gradient (avg), and
// takes the same SGD step. Because the MPI engine reduces in rank order, every
// rank ends with bitwise identical weights, which the program checks.
//
//   mpirun -np 2 ./hal_data_parallel_allreduce
//
// Exit status 0 when the weights agree on every rank and the loss fell.
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "comm/communicator.h"
#include "hal/philox.h"
#include "hal/registry.h"

int main() {
  using namespace hal;
  Device& cpu = device("cpu");
  auto comm = comm::create_communicator(cpu);
  Stream stream(cpu);
  constexpr int kFeatures = 8, kRowsPerRank = 64, kSteps = 20;
  const auto uniform = [](std::uint64_t seed, std::uint64_t i) {
    return static_cast<float>(philox_bits(seed, i) >> 8) * 0x1p-24f * 2.0f - 1.0f;
  };
  // This rank's shard: x [64, 8], targets t = x . w_true.
  std::vector<float> x(kRowsPerRank * kFeatures), t(kRowsPerRank), w(kFeatures, 0.0f), grad(kFeatures);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = uniform(100 + static_cast<std::uint64_t>(comm->rank()), i);
  for (int r = 0; r < kRowsPerRank; ++r) {
    t[r] = 0;
    for (int f = 0; f < kFeatures; ++f) t[r] += x[r * kFeatures + f] * static_cast<float>(f + 1) * 0.25f;
  }
  const Tensor g = Tensor::contiguous(grad.data(), &cpu, DType::f32, Shape{kFeatures});
  float first_loss = 0, loss = 0;
  for (int step = 0; step < kSteps; ++step) {
    std::fill(grad.begin(), grad.end(), 0.0f);
    loss = 0;
    for (int r = 0; r < kRowsPerRank; ++r) {
      float y = 0;
      for (int f = 0; f < kFeatures; ++f) y += x[r * kFeatures + f] * w[f];
      const float e = y - t[r];
      loss += e * e / kRowsPerRank;
      for (int f = 0; f < kFeatures; ++f) grad[f] += 2 * e * x[r * kFeatures + f] / kRowsPerRank;
    }
    comm::all_reduce(*comm, stream, g, g, comm::ReduceOp::avg);  // the data-parallel step
    for (int f = 0; f < kFeatures; ++f) w[f] -= 0.3f * grad[f];
    if (step == 0) first_loss = loss;
  }
  // Every rank's weights, side by side: they must be the same bits.
  std::vector<float> all(static_cast<std::size_t>(kFeatures * comm->size()));
  comm::all_gather(*comm, stream, Tensor::contiguous(w.data(), &cpu, DType::f32, Shape{kFeatures}),
                   Tensor::contiguous(all.data(), &cpu, DType::f32, Shape{kFeatures * comm->size()}));
  bool same = true;
  for (int r = 0; r < comm->size(); ++r)
    same &= std::memcmp(all.data() + r * kFeatures, w.data(), sizeof(float) * kFeatures) == 0;
  if (comm->rank() == 0)
    fmt::print("{} ranks: loss {:.4f} -> {:.4f}, weights {} on every rank\n", comm->size(), first_loss, loss,
               same ? "bitwise identical" : "DIFFERENT");
  return same && loss < 0.5f * first_loss ? 0 : 1;
}
