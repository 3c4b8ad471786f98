// Group calls as real processes: run under `mpiexec -np N` (tests/comm/CMakeLists.txt).
//
// Inputs are Philox streams (seed 2000 + rank), so each rank rebuilds the
// inputs of the ranks it receives from and checks the received bits against
// them, and checks the group's max all_reduce against the max (in double) of
// every rank's inputs. The messages are large (beyond MPI's eager limit, so a
// send blocks until its receive is posted): issued recv-first around a ring,
// or send-first by both ranks of a pair, they deadlock without the group's
// schedule. A count mismatch inside a group is an error on every rank with the
// receive buffer untouched, and the communicator is usable afterwards.
// Exit status 0 when every check passed on this rank.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/group.h"
#include "hal/error.h"
#include "hal/philox.h"
#include "hal/registry.h"

using namespace hal;
using namespace hal::comm;

namespace {

int g_failures = 0;
int g_checks = 0;
int g_rank = 0;

void expect(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    fmt::print(stderr, "rank {}: FAIL: {}\n", g_rank, what);
  }
}

// Element i of `rank`'s input, tagged by `stream` so messages differ: uniform in [-1, 1).
float input_value(int rank, int stream, std::int64_t i) {
  const std::uint32_t bits = philox_bits(2000 + static_cast<std::uint64_t>(rank) + 100 * static_cast<std::uint64_t>(stream),
                                         static_cast<std::uint64_t>(i));
  return static_cast<float>(static_cast<double>(bits >> 8) * 0x1p-24 * 2.0 - 1.0);
}

std::vector<float> input_of(int rank, int stream, std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = input_value(rank, stream, i);
  return v;
}

Tensor view(std::vector<float>& v) {
  return Tensor::contiguous(v.data(), &hal::device("cpu"), DType::f32, Shape{static_cast<std::int64_t>(v.size())});
}

// 256 Ki floats = 1 MiB per message: far beyond the eager limit of OpenMPI's
// shared-memory transport (4 KiB), so MPI_Send waits for its receive.
constexpr std::int64_t kBig = 256 * 1024;

void test_ring_recv_first(Communicator& comm, Stream& s) {
  const int P = comm.size(), r = comm.rank();
  const int left = (r + P - 1) % P, right = (r + 1) % P;
  std::vector<float> x = input_of(r, 0, kBig), y(static_cast<std::size_t>(kBig), -7.0f);
  std::vector<float> small = input_of(r, 1, 33), reduced(33, -7.0f);
  {
    Group g(comm);
    recv(comm, s, view(y), left);  // recv first on every rank
    all_reduce(comm, s, view(small), view(reduced), ReduceOp::max);
    send(comm, s, view(x), right);
    expect(y[0] == -7.0f && reduced[0] == -7.0f, "ring: nothing moves before group_end");
    g.end();
  }
  expect(y == input_of(left, 0, kBig), fmt::format("ring: the bits of rank {}'s input arrived", left));
  bool max_ok = true;
  for (std::int64_t i = 0; i < 33; ++i) {
    double mx = -INFINITY;
    for (int q = 0; q < P; ++q) mx = std::max(mx, static_cast<double>(input_value(q, 1, i)));
    max_ok &= static_cast<double>(reduced[static_cast<std::size_t>(i)]) == mx;
  }
  expect(max_ok, "ring: the grouped max all_reduce equals the oracle's max of every rank's input");
}

void test_pairs_send_first(Communicator& comm, Stream& s) {
  // Ranks 2k and 2k+1 exchange two messages each way, both sending first.
  const int P = comm.size(), r = comm.rank();
  const int peer = r ^ 1;
  if (peer >= P) {
    Group g(comm);  // an odd rank out takes part in the agreement with an empty group
    g.end();
    return;
  }
  std::vector<float> a = input_of(r, 2, kBig), b = input_of(r, 3, 17);
  std::vector<float> ra(static_cast<std::size_t>(kBig)), rb(17);
  group_start(comm);
  send(comm, s, view(a), peer);
  send(comm, s, view(b), peer);
  recv(comm, s, view(ra), peer);
  recv(comm, s, view(rb), peer);
  group_end(comm);
  expect(ra == input_of(peer, 2, kBig) && rb == input_of(peer, 3, 17),
         fmt::format("pairs: both messages of rank {} arrived, matched in issue order", peer));
}

void test_mismatch_is_an_error_everywhere(Communicator& comm, Stream& s) {
  const int r = comm.rank();
  std::vector<float> x = input_of(r, 4, 10), y(12, 12345.0f);
  std::string message;
  try {
    Group g(comm);
    if (r == 0) send(comm, s, view(x), 1);  // 10 elements
    if (r == 1) recv(comm, s, view(y), 0);  // expects 12
    g.end();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::invalid_argument) message = e.what();
  }
  expect(message.find("rank 0 sends 10 elements, rank 1 expects 12") != std::string::npos,
         fmt::format("mismatch: the same clear error on every rank (got '{}')", message));
  expect(std::all_of(y.begin(), y.end(), [](float v) { return v == 12345.0f; }), "mismatch: y untouched");
  expect(!group_open(comm), "mismatch: no group left open");
}

}  // namespace

int main() {
  try {
    Device& cpu = hal::device("cpu");
    auto comm = create_communicator(cpu);
    g_rank = comm->rank();
    if (comm->size() < 2) {
      fmt::print(stderr, "hal_comm_group_ranks: needs mpiexec -np 2 or more (got {} rank)\n", comm->size());
      return 1;
    }
    Stream s(cpu);
    test_ring_recv_first(*comm, s);
    test_pairs_send_first(*comm, s);
    test_mismatch_is_an_error_everywhere(*comm, s);
    test_ring_recv_first(*comm, s);  // usable after the error
    fmt::print("rank {} of {} ({}): {} checks, {} failed\n", comm->rank(), comm->size(), comm->engine(), g_checks,
               g_failures);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rank {}: unexpected error: {}\n", g_rank, e.what());
    return 1;
  }
  return g_failures == 0 ? 0 : 1;
}
