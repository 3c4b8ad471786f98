// Collectives as real processes: run under `mpiexec -np N` (tests/comm/CMakeLists.txt).
//
// Every rank's inputs are Philox streams (seed 1000 + rank), so each rank can
// rebuild all ranks' inputs and score its result against an fp64 oracle of
// them, within the bound of docs/accuracy.md ("Collectives"). Then the same
// call with one TBB thread must give the same bits, and all ranks must hold
// the same bits. Bad input on one rank must be an error on every rank, with
// outputs untouched, and the communicator usable afterwards.
// Exit status 0 when every check passed on this rank.
#include <fmt/format.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.h"
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

// Input element i of `rank`: uniform in [-1, 1) (integers: in [-100, 100]),
// rounded to dtype. Returned as the double the dtype holds exactly.
double input_value(int rank, std::int64_t i, DType dtype) {
  const std::uint32_t bits = philox_bits(1000 + static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(i));
  if (is_integer(dtype)) return static_cast<double>(static_cast<int>(bits % 201) - 100);
  const double u = static_cast<double>(bits >> 8) * 0x1p-24 * 2.0 - 1.0;
  std::uint64_t tmp = 0;
  store_element(&tmp, dtype, 0, u);
  return load_element(&tmp, dtype, 0);
}

struct Host {
  DType dtype;
  std::vector<std::byte> bytes;
  Shape shape;
  Host(DType d, const Shape& s) : dtype(d), bytes(static_cast<std::size_t>(checked_numel(s)) * dtype_size(d)), shape(s) {}
  Tensor tensor() { return Tensor::contiguous(bytes.data(), &hal::device("cpu"), dtype, shape); }
  std::int64_t numel() const { return checked_numel(shape); }
  double at(std::int64_t i) const { return load_element(bytes.data(), dtype, i); }
  void set(std::int64_t i, double v) { store_element(bytes.data(), dtype, i, v); }
  void fill_input(int rank, std::int64_t first_index = 0) {
    for (std::int64_t i = 0; i < numel(); ++i) set(i, input_value(rank, first_index + i, dtype));
  }
};

double unit_roundoff(DType t) { return is_integer(t) ? 0.0 : dtype_epsilon(t); }

// The bound of docs/accuracy.md for element `i` of a P-rank reduction of
// element indices `index` on every rank.
bool within_contract(double got, DType dtype, ReduceOp op, int P, std::int64_t index, double* exact_out) {
  double sum = 0, abs_sum = 0, mx = -INFINITY, mn = INFINITY;
  for (int r = 0; r < P; ++r) {
    const double v = input_value(r, index, dtype);
    sum += v;
    abs_sum += std::fabs(v);
    mx = std::max(mx, v);
    mn = std::min(mn, v);
  }
  if (op == ReduceOp::max || op == ReduceOp::min) {
    *exact_out = op == ReduceOp::max ? mx : mn;
    return got == *exact_out;  // inputs are exact in dtype: so is their max
  }
  if (is_integer(dtype)) {
    *exact_out = sum;
    return got == sum;
  }
  const double acc_u = dtype == DType::f64 ? 0x1p-53 : 0x1p-24;  // fp32 accumulation, f64 for f64
  const double gamma = (P - 1) * acc_u / (1 - (P - 1) * acc_u);
  double exact = sum, err = (1 + unit_roundoff(dtype)) * gamma * abs_sum;
  if (op == ReduceOp::avg) {
    exact = sum / P;
    err = err / P + acc_u * std::fabs(exact);
  }
  *exact_out = exact;
  return std::fabs(got - exact) <= unit_roundoff(dtype) * std::fabs(exact) + err;
}

// Every rank holds the same bytes in `h`.
void expect_same_on_all_ranks(Communicator& comm, Stream& s, Host& h, const std::string& what) {
  Host all(DType::i8, Shape{static_cast<std::int64_t>(h.bytes.size()) * comm.size()});
  Host mine(DType::i8, Shape{static_cast<std::int64_t>(h.bytes.size())});
  mine.bytes = h.bytes;
  all_gather(comm, s, mine.tensor(), all.tensor());
  bool same = true;
  for (int r = 0; r < comm.size(); ++r)
    same &= std::memcmp(all.bytes.data() + r * h.bytes.size(), h.bytes.data(), h.bytes.size()) == 0;
  expect(same, what + ": the same bits on every rank");
}

void test_all_reduce(Communicator& comm, Stream& s) {
  const int P = comm.size();
  const Shape shape{37, 29};  // odd sizes, over one TBB grain when threaded
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64, DType::i32}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min}) {
      if (op == ReduceOp::avg && is_integer(dtype)) continue;
      const std::string what = fmt::format("all_reduce {} {}", dtype_name(dtype), reduce_op_name(op));
      Host x(dtype, shape), y(dtype, shape);
      x.fill_input(comm.rank());
      all_reduce(comm, s, x.tensor(), y.tensor(), op);
      int bad = 0;
      double exact = 0;
      for (std::int64_t i = 0; i < y.numel(); ++i)
        if (!within_contract(y.at(i), dtype, op, P, i, &exact) && bad++ == 0)
          fmt::print(stderr, "rank {}: {} element {}: got {}, exact {}\n", comm.rank(), what, i, y.at(i), exact);
      expect(bad == 0, what + ": within the contract of the fp64 oracle");
      // One thread, in place: the same bits.
      Host y1 = x;
      {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        all_reduce(comm, s, y1.tensor(), y1.tensor(), op);
      }
      expect(y1.bytes == y.bytes, what + ": one thread and in place give the same bits");
      expect_same_on_all_ranks(comm, s, y, what);
    }
  }
}

void test_all_gather_reduce_scatter(Communicator& comm, Stream& s) {
  const int P = comm.size();
  Host x(DType::bf16, Shape{3, 5}), y(DType::bf16, Shape{3 * P, 5});
  x.fill_input(comm.rank());
  all_gather(comm, s, x.tensor(), y.tensor());
  bool ok = true;
  for (int r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < 15; ++i) ok &= y.at(r * 15 + i) == input_value(r, i, DType::bf16);
  expect(ok, "all_gather bf16: rank r's rows at block r");

  // reduce_scatter: x [P * 7, 3], block r of the sum to rank r.
  for (DType dtype : {DType::f32, DType::bf16}) {
    Host xs(dtype, Shape{7 * P, 3}), ys(dtype, Shape{7, 3});
    xs.fill_input(comm.rank());
    reduce_scatter(comm, s, xs.tensor(), ys.tensor(), ReduceOp::sum);
    int bad = 0;
    double exact = 0;
    for (std::int64_t i = 0; i < 21; ++i)
      bad += !within_contract(ys.at(i), dtype, ReduceOp::sum, P, comm.rank() * 21 + i, &exact);
    expect(bad == 0, fmt::format("reduce_scatter {} sum: block {} within the contract", dtype_name(dtype), comm.rank()));
    // Bitwise the same as the matching block of all_reduce.
    Host full(dtype, xs.shape);
    all_reduce(comm, s, xs.tensor(), full.tensor(), ReduceOp::sum);
    const std::size_t block = ys.bytes.size();
    expect(std::memcmp(full.bytes.data() + comm.rank() * block, ys.bytes.data(), block) == 0,
           fmt::format("reduce_scatter {}: the bits of all_reduce's block", dtype_name(dtype)));
  }
}

void test_broadcast_all_to_all_p2p(Communicator& comm, Stream& s) {
  const int P = comm.size(), r = comm.rank();
  Host b(DType::f32, Shape{11});
  b.fill_input(r);
  broadcast(comm, s, b.tensor(), P - 1);
  bool ok = true;
  for (std::int64_t i = 0; i < 11; ++i) ok &= b.at(i) == input_value(P - 1, i, DType::f32);
  expect(ok, "broadcast from the last rank");

  // all_to_all: rank r sends (r + j) % 3 + 1 rows of 2 to rank j; each row
  // holds (source, destination, row) so a misplaced row is seen.
  const auto rows = [](int from, int to) { return static_cast<std::int64_t>((from + to) % 3 + 1); };
  std::vector<std::int64_t> send_counts, recv_counts;
  std::int64_t send_total = 0, recv_total = 0;
  for (int j = 0; j < P; ++j) {
    send_counts.push_back(rows(r, j));
    recv_counts.push_back(rows(j, r));
    send_total += rows(r, j);
    recv_total += rows(j, r);
  }
  Host x(DType::i32, Shape{send_total, 3}), y(DType::i32, Shape{recv_total, 3});
  std::int64_t k = 0;
  for (int j = 0; j < P; ++j)
    for (std::int64_t row = 0; row < rows(r, j); ++row, ++k) {
      x.set(3 * k, r);
      x.set(3 * k + 1, j);
      x.set(3 * k + 2, static_cast<double>(row));
    }
  all_to_all(comm, s, x.tensor(), y.tensor(), send_counts, recv_counts);
  ok = true;
  k = 0;
  for (int i = 0; i < P; ++i)
    for (std::int64_t row = 0; row < rows(i, r); ++row, ++k)
      ok &= y.at(3 * k) == i && y.at(3 * k + 1) == r && y.at(3 * k + 2) == static_cast<double>(row);
  expect(ok, "all_to_all with per-rank counts: every row from its source, in rank order");

  // send/recv in pairs (0 -> 1, 2 -> 3, ...), then back.
  if (P >= 2 && !(P % 2 == 1 && r == P - 1)) {
    const int peer = r % 2 == 0 ? r + 1 : r - 1;
    Host out(DType::f16, Shape{9}), in(DType::f16, Shape{9});
    out.fill_input(r);
    for (int round = 0; round < 2; ++round) {
      if ((r % 2 == 0) == (round == 0)) send(comm, s, out.tensor(), peer);
      else recv(comm, s, in.tensor(), peer);
    }
    ok = true;
    for (std::int64_t i = 0; i < 9; ++i) ok &= in.at(i) == input_value(peer, i, DType::f16);
    expect(ok, fmt::format("recv from rank {}: its input", peer));
  }
  barrier(comm, s);
}

// `call` must throw invalid_argument on this rank, with `needle` in the message.
void expect_error(const std::string& what, const std::string& needle, const std::function<void()>& call) {
  try {
    call();
    expect(false, what + ": no error");
  } catch (const Error& e) {
    const bool ok = e.code() == ErrorCode::invalid_argument && std::string(e.what()).find(needle) != std::string::npos;
    if (!ok) fmt::print(stderr, "rank {}: {}: message '{}' lacks '{}'\n", g_rank, what, e.what(), needle);
    expect(ok, what + ": a clear error on every rank");
  }
}

void test_errors(Communicator& comm, Stream& s) {
  const int P = comm.size(), r = comm.rank();
  // The last rank's y has the wrong shape: every rank throws, y untouched.
  Host x(DType::f32, Shape{4, 7}), y(DType::f32, Shape{4, r == P - 1 ? 8 : 7});
  x.fill_input(r);
  for (std::int64_t i = 0; i < y.numel(); ++i) y.set(i, 12345.0);
  expect_error("all_reduce, bad y on the last rank", "argument 'y'",
               [&] { all_reduce(comm, s, x.tensor(), y.tensor(), ReduceOp::sum); });
  bool untouched = true;
  for (std::int64_t i = 0; i < y.numel(); ++i) untouched &= y.at(i) == 12345.0;
  expect(untouched, "all_reduce error: output untouched");

  // Shapes differ between ranks (each locally valid).
  Host xa(DType::f32, Shape{r == 0 ? 10 : 12}), ya(DType::f32, Shape{r == 0 ? 10 : 12});
  if (P > 1)
    expect_error("all_reduce, 10 elements on rank 0, 12 elsewhere", "shape [10] on rank 0, [12] on rank 1",
               [&] { all_reduce(comm, s, xa.tensor(), ya.tensor(), ReduceOp::sum); });

  // An unsupported dtype on rank 0 only.
  Host xi(r == 0 ? DType::i8 : DType::f32, Shape{5}), yi(r == 0 ? DType::i8 : DType::f32, Shape{5});
  expect_error("all_reduce i8 on rank 0", r == 0 ? "argument 'x'" : "rank 0 reported",
               [&] { all_reduce(comm, s, xi.tensor(), yi.tensor(), ReduceOp::max); });

  // Root out of range on every rank.
  Host b(DType::f32, Shape{3});
  expect_error("broadcast root = size", "argument 'root'", [&] { broadcast(comm, s, b.tensor(), P); });

  // all_to_all: rank 0 expects one row too many from the last rank.
  std::vector<std::int64_t> sc(static_cast<std::size_t>(P), 1), rc(static_cast<std::size_t>(P), 1);
  if (r == 0) rc[static_cast<std::size_t>(P - 1)] = 2;
  Host ax(DType::f32, Shape{P, 2}), ay(DType::f32, Shape{r == 0 ? P + 1 : P, 2});
  expect_error("all_to_all count mismatch", "expects 2",
               [&] { all_to_all(comm, s, ax.tensor(), ay.tensor(), sc, rc); });

  // send/recv: rank 0 sends 10 elements, rank 1 expects 12.
  if (r < 2 && P >= 2) {
    Host m(DType::f32, Shape{r == 0 ? 10 : 12});
    expect_error("send 10, recv 12", "rank 0 sends 10 elements, rank 1 expects 12", [&] {
      if (r == 0) send(comm, s, m.tensor(), 1);
      else recv(comm, s, m.tensor(), 0);
    });
  }
  // Still usable: a valid collective after the errors.
  Host one(DType::i32, Shape{1}), total(DType::i32, Shape{1});
  one.set(0, r + 1);
  all_reduce(comm, s, one.tensor(), total.tensor(), ReduceOp::sum);
  expect(total.at(0) == P * (P + 1) / 2, "the communicator works after the errors");
}

}  // namespace

int main() {
  try {
    Device& cpu = hal::device("cpu");
    auto comm = create_communicator(cpu);
    g_rank = comm->rank();
    Stream s(cpu);
    test_all_reduce(*comm, s);
    test_all_gather_reduce_scatter(*comm, s);
    test_broadcast_all_to_all_p2p(*comm, s);
    test_errors(*comm, s);
    fmt::print("rank {} of {} ({}): {} checks, {} failed\n", comm->rank(), comm->size(), comm->engine(), g_checks,
               g_failures);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rank {}: unexpected error: {}\n", g_rank, e.what());
    return 1;
  }
  return g_failures == 0 ? 0 : 1;
}
