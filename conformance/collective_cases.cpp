#include "conformance/collective_cases.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <vector>

#include "comm/communicator.h"
#include "comm/launch.h"
#include "hal/buffer.h"
#include "hal/error.h"
#include "hal/philox.h"
#include "hal/registry.h"

namespace hal::conformance {
namespace {

using comm::ReduceOp;

// Rank r's element i: uniform in [-1, 1) from Philox(seed 77000 + r), exact in `t`.
double input(int rank, std::int64_t i, DType t) {
  const std::uint32_t bits = philox_bits(77000 + static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(i));
  std::uint64_t tmp = 0;
  store_element(&tmp, t, 0, static_cast<double>(bits >> 8) * 0x1p-24 * 2.0 - 1.0);
  return load_element(&tmp, t, 0);
}

// docs/accuracy.md, "Collectives": the bound of a P-rank reduction with fp32
// accumulation (f64 for f64) and one rounding to the output type.
double reduction_bound(ReduceOp op, DType t, int P, double exact, double abs_sum) {
  if (op == ReduceOp::max || op == ReduceOp::min) return 0;
  const double u = t == DType::f64 ? 0x1p-53 : 0x1p-24, u_out = dtype_epsilon(t);
  const double gamma = (P - 1) * u / (1 - (P - 1) * u);
  double acc = (1 + u_out) * gamma * abs_sum;
  if (op == ReduceOp::avg) acc = acc / P + u * std::fabs(exact);
  return u_out * std::fabs(exact) + acc;
}

struct Oracle {
  double value, bound;
};

// Rows of rank `r`'s input that element `i` of a reduction reads.
Oracle reduce_oracle(ReduceOp op, DType t, int P, std::int64_t index) {
  double sum = 0, abs_sum = 0, mx = -INFINITY, mn = INFINITY;
  for (int r = 0; r < P; ++r) {
    const double v = input(r, index, t);
    sum += v, abs_sum += std::fabs(v), mx = std::max(mx, v), mn = std::min(mn, v);
  }
  const double exact = op == ReduceOp::sum ? sum : op == ReduceOp::avg ? sum / P : op == ReduceOp::max ? mx : mn;
  return {exact, reduction_bound(op, t, P, exact, abs_sum)};
}

struct DeviceArray {
  Device& dev;
  DType dtype;
  Shape shape;
  Buffer buffer;
  DeviceArray(Device& d, DType t, const Shape& s) : dev(d), dtype(t), shape(s), buffer(Buffer::for_tensor(d, t, s)) {}
  Tensor tensor() const { return Tensor::contiguous(buffer.data(), &dev, dtype, shape); }
  std::int64_t numel() const { return checked_numel(shape); }
  void upload(Stream& s, const std::function<double(std::int64_t)>& value) {
    std::vector<std::byte> host(static_cast<std::size_t>(numel()) * dtype_size(dtype));
    for (std::int64_t i = 0; i < numel(); ++i) store_element(host.data(), dtype, i, value(i));
    s.upload(tensor(), host.data());
    s.synchronize();
  }
  std::vector<double> download(Stream& s) const {
    std::vector<std::byte> host(static_cast<std::size_t>(numel()) * dtype_size(dtype));
    s.download(host.data(), tensor());
    s.synchronize();
    std::vector<double> out;
    for (std::int64_t i = 0; i < numel(); ++i) out.push_back(load_element(host.data(), dtype, i));
    return out;
  }
};

// Worst |error| / bound over the elements (exact cases: 0 when equal, inf if not).
double ratio(double got, const Oracle& o) {
  const double err = std::fabs(got - o.value);
  if (o.bound == 0) return err == 0 ? 0 : INFINITY;
  return err / o.bound;
}

struct CaseOutcome {
  double worst = 0;  // error / bound; <= 1 passes
  char error[200] = {};
};

struct CollectiveCase {
  std::string name, op;
  DType dtype;
  std::function<double(comm::Communicator&, Stream&)> run;  // returns the worst ratio
};

std::vector<CollectiveCase> cases(int P) {
  std::vector<CollectiveCase> out;
  const Shape shape{61, 33};
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min}) {
      out.push_back({fmt::format("all_reduce_{}_{}", comm::reduce_op_name(op), dtype_name(t)), "all_reduce", t,
                     [=](comm::Communicator& c, Stream& s) {
                       DeviceArray x(c.device(), t, shape), y(c.device(), t, shape);
                       x.upload(s, [&](std::int64_t i) { return input(c.rank(), i, t); });
                       comm::all_reduce(c, s, x.tensor(), y.tensor(), op);
                       const auto got = y.download(s);
                       double worst = 0;
                       for (std::int64_t i = 0; i < y.numel(); ++i)
                         worst = std::max(worst, ratio(got[static_cast<std::size_t>(i)], reduce_oracle(op, t, P, i)));
                       return worst;
                     }});
    }
    out.push_back({fmt::format("reduce_scatter_sum_{}", dtype_name(t)), "reduce_scatter", t,
                   [=](comm::Communicator& c, Stream& s) {
                     DeviceArray x(c.device(), t, Shape{5 * P, 17}), y(c.device(), t, Shape{5, 17});
                     x.upload(s, [&](std::int64_t i) { return input(c.rank(), i, t); });
                     comm::reduce_scatter(c, s, x.tensor(), y.tensor(), ReduceOp::sum);
                     const auto got = y.download(s);
                     double worst = 0;
                     for (std::int64_t i = 0; i < y.numel(); ++i)
                       worst = std::max(worst, ratio(got[static_cast<std::size_t>(i)],
                                                     reduce_oracle(ReduceOp::sum, t, P, c.rank() * y.numel() + i)));
                     return worst;
                   }});
    out.push_back({fmt::format("all_gather_{}", dtype_name(t)), "all_gather", t, [=](comm::Communicator& c, Stream& s) {
                     DeviceArray x(c.device(), t, Shape{3, 7}), y(c.device(), t, Shape{3 * P, 7});
                     x.upload(s, [&](std::int64_t i) { return input(c.rank(), i, t); });
                     comm::all_gather(c, s, x.tensor(), y.tensor());
                     const auto got = y.download(s);
                     double worst = 0;
                     for (std::int64_t i = 0; i < y.numel(); ++i)
                       worst = std::max(worst, ratio(got[static_cast<std::size_t>(i)], {input(static_cast<int>(i / 21), i % 21, t), 0}));
                     return worst;
                   }});
    out.push_back({fmt::format("all_to_all_{}", dtype_name(t)), "all_to_all", t, [=](comm::Communicator& c, Stream& s) {
                     // Rank r sends (r + 2j) % 3 rows of 4 to rank j (zero rows included).
                     const auto rows = [](int from, int to) { return static_cast<std::int64_t>((from + 2 * to) % 3); };
                     std::vector<std::int64_t> sc, rc;
                     std::int64_t st = 0, rt = 0;
                     for (int j = 0; j < P; ++j) {
                       sc.push_back(rows(c.rank(), j)), rc.push_back(rows(j, c.rank()));
                       st += sc.back(), rt += rc.back();
                     }
                     DeviceArray x(c.device(), t, Shape{st, 4}), y(c.device(), t, Shape{rt, 4});
                     x.upload(s, [&](std::int64_t i) { return input(c.rank(), i, t); });
                     comm::all_to_all(c, s, x.tensor(), y.tensor(), sc, rc);
                     const auto got = y.download(s);
                     double worst = 0;
                     std::int64_t k = 0;
                     for (int i = 0; i < P; ++i) {
                       std::int64_t offset = 0;  // rows rank i sent to ranks below this one
                       for (int j = 0; j < c.rank(); ++j) offset += rows(i, j);
                       for (std::int64_t e = 0; e < rows(i, c.rank()) * 4; ++e, ++k)
                         worst = std::max(worst, ratio(got[static_cast<std::size_t>(k)], {input(i, offset * 4 + e, t), 0}));
                     }
                     return worst;
                   }});
  }
  return out;
}

}  // namespace

int run_collective_conformance(const std::string& device_name, const std::string& op_filter,
                               const std::string& dtype_filter) {
  Device& dev = hal::device(comm::expand_local_rank(device_name));
  auto comm = comm::create_communicator(dev);
  Stream stream(dev);
  const int P = comm->size();
  std::vector<CollectiveCase> selected;
  for (CollectiveCase& c : cases(P))
    if ((op_filter.empty() || c.op == op_filter) && (dtype_filter.empty() || dtype_name(c.dtype) == dtype_filter))
      selected.push_back(std::move(c));
  std::vector<CaseOutcome> mine(selected.size());
  for (std::size_t i = 0; i < selected.size(); ++i) {
    try {
      mine[i].worst = selected[i].run(*comm, stream);
    } catch (const Error& e) {
      mine[i].worst = INFINITY;
      fmt::format_to_n(mine[i].error, sizeof mine[i].error - 1, "{}", e.what());
    }
  }
  // Every rank's outcomes to every rank (the control channel, not the
  // collectives under test); without one, each rank reports its own.
  std::vector<CaseOutcome> all = mine;
  int ranks_reported = 1;
  if (comm::HostTransport* control = comm->control(); control && !mine.empty()) {
    all.resize(mine.size() * static_cast<std::size_t>(P));
    control->all_gather(mine.data(), mine.size() * sizeof(CaseOutcome), all.data());
    ranks_reported = P;
  }
  int failed = 0;
  if (comm->rank() == 0 || ranks_reported == 1) {
    fmt::print("collective conformance on {}: {} rank(s) over {}{}\n", device_name, P, comm->engine(),
               ranks_reported == 1 && P > 1 ? fmt::format(" (rank {} only: no control channel)", comm->rank()) : "");
    fmt::print("{:<26} {:<14} {:<6} {:>12} {}\n", "case", "op", "dtype", "worst e/bnd", "status");
  }
  for (std::size_t i = 0; i < selected.size(); ++i) {
    double worst = 0;
    std::string why;
    for (int r = 0; r < ranks_reported; ++r) {
      const CaseOutcome& o = all[static_cast<std::size_t>(r) * selected.size() + i];
      worst = std::max(worst, o.worst);
      if (o.error[0] && why.empty()) why = fmt::format("rank {}: {}", r, o.error);
      else if (!(o.worst <= 1) && why.empty()) why = fmt::format("rank {} beyond the bound", r);
    }
    const bool pass = worst <= 1 && why.empty();
    failed += !pass;
    if (comm->rank() == 0 || ranks_reported == 1)
      fmt::print("{:<26} {:<14} {:<6} {:>12.3g} {}{}\n", selected[i].name, selected[i].op, dtype_name(selected[i].dtype),
                 worst, pass ? "passed" : "FAILED", why.empty() ? "" : " (" + why + ")");
  }
  if (comm->rank() == 0 || ranks_reported == 1)
    fmt::print("total: {} passed, {} failed\n", selected.size() - static_cast<std::size_t>(failed), failed);
  return failed == 0 && !selected.empty() ? 0 : 1;
}

}  // namespace hal::conformance
