// hal collective OP: one collective on .npy files, every rank its own files.
//
//   mpirun -np 4 hal collective all_reduce --device cpu --in x=x{rank}.npy --out y=y{rank}.npy op=avg
//
// "{rank}" in a file name becomes the rank; an output name without it is
// written by rank 0 only. Reading the inputs happens after the communicator
// exists, and a rank's read error joins the agreement of comm/agreement.h,
// so every rank reports it (instead of the others waiting for that rank).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "comm/agreement.h"
#include "comm/communicator.h"
#include "hal/error.h"
#include "hal/io/npy.h"
#include "hal/registry.h"
#include "tools/cli.h"

namespace hal::tools {
namespace {

constexpr const char* kUsage =
    "usage: mpirun -np N hal collective OP [--device DEV] [--in x=FILE.npy] [--out y=FILE.npy] [KEY=VALUE ...]\n"
    "\n"
    "OP: all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send, recv, barrier\n"
    "attributes (KEY=VALUE, or --attr KEY=VALUE):\n"
    "  op=sum|avg|max|min        all_reduce, reduce_scatter (default sum)\n"
    "  root=R                    broadcast (default 0)\n"
    "  peer=R                    send, recv\n"
    "  send_counts=a,b,..        all_to_all: rows of x for each rank\n"
    "  recv_counts=a,b,..        all_to_all: rows of y from each rank\n"
    "  dtype=DT                  compute in DT (e.g. bf16; files keep their own dtype)\n"
    "  shape=a,b,..              recv: the shape of y (dtype from dtype=, default f32)\n"
    "\n"
    "'{local_rank}' in --device (cuda:{local_rank}) is the rank on its host.\n"
    "'{rank}' in a file name is replaced by the rank; an --out name without it is written by rank 0.\n"
    "Without mpirun, one process is a one-rank job. Exit status 1 on every rank when any rank fails.\n";

struct Args {
  std::string op, device = "cpu", in, out;
  std::map<std::string, std::string> attrs;
};

std::pair<std::string, std::string> key_value(const std::string& text, const char* what) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError(fmt::format("{} expects NAME=VALUE, given '{}'", what, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<std::int64_t> int_list(const std::string& key, const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      std::size_t used = 0;
      out.push_back(std::stoll(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{}: '{}' is not a list of integers", key, text));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string with_rank(std::string name, int rank) {
  for (std::size_t p; (p = name.find("{rank}")) != std::string::npos;) name.replace(p, 6, std::to_string(rank));
  return name;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    if (arg == "--device") a.device = value();
    else if (arg == "--in") {
      auto [k, v] = key_value(value(), "--in");
      if (k != "x") throw UsageError(fmt::format("collective: the input is named x, given '{}'", k));
      a.in = v;
    } else if (arg == "--out") {
      auto [k, v] = key_value(value(), "--out");
      if (k != "y") throw UsageError(fmt::format("collective: the output is named y, given '{}'", k));
      a.out = v;
    } else if (arg == "--attr") {
      auto [k, v] = key_value(value(), "--attr");
      a.attrs[k] = v;
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError(fmt::format("collective: unknown option '{}' (see hal collective --help)", arg));
    } else if (arg.find('=') != std::string::npos) {
      auto [k, v] = key_value(arg, "attribute");
      a.attrs[k] = v;
    } else if (a.op.empty()) {
      a.op = arg;
    } else {
      throw UsageError(fmt::format("collective: unexpected argument '{}'", arg));
    }
  }
  static const std::map<std::string, std::vector<std::string>> kAttrs = {
      {"all_reduce", {"op", "dtype"}}, {"all_gather", {"dtype"}},   {"reduce_scatter", {"op", "dtype"}},
      {"broadcast", {"root", "dtype"}}, {"all_to_all", {"send_counts", "recv_counts", "dtype"}},
      {"send", {"peer", "dtype"}},      {"recv", {"peer", "dtype", "shape"}}, {"barrier", {}}};
  const auto it = kAttrs.find(a.op);
  if (it == kAttrs.end()) throw UsageError(fmt::format("collective: unknown op '{}' (see hal collective --help)", a.op));
  for (const auto& [k, v] : a.attrs)
    if (std::find(it->second.begin(), it->second.end(), k) == it->second.end())
      throw UsageError(fmt::format("collective {}: unknown attribute '{}'", a.op, k));
  const bool needs_in = a.op != "recv" && a.op != "barrier";
  const bool needs_out = a.op != "send" && a.op != "barrier";
  if (needs_in && a.in.empty()) throw UsageError(fmt::format("collective {}: --in x=FILE.npy is required", a.op));
  if (needs_out && a.out.empty()) throw UsageError(fmt::format("collective {}: --out y=FILE.npy is required", a.op));
  return a;
}

int attr_int(const Args& a, const std::string& key, std::optional<int> fallback) {
  const auto it = a.attrs.find(key);
  if (it == a.attrs.end()) {
    if (!fallback) throw UsageError(fmt::format("collective {}: attribute {}= is required", a.op, key));
    return *fallback;
  }
  const auto v = int_list(key, it->second);
  if (v.size() != 1) throw UsageError(fmt::format("{}: one integer expected, given '{}'", key, it->second));
  return static_cast<int>(v[0]);
}

comm::ReduceOp reduce_op(const Args& a) {
  const auto it = a.attrs.find("op");
  const std::string name = it == a.attrs.end() ? "sum" : it->second;
  for (comm::ReduceOp op : {comm::ReduceOp::sum, comm::ReduceOp::avg, comm::ReduceOp::max, comm::ReduceOp::min})
    if (comm::reduce_op_name(op) == name) return op;
  throw UsageError(fmt::format("op: expected sum, avg, max or min, given '{}'", name));
}

}  // namespace

int collective_main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (is_help_flag(argv[i])) {
      std::fputs(kUsage, stdout);
      return kExitOk;
    }
  const Args a = parse(argc, argv);
  // Attributes parse before any rank talks to another (a usage error is the
  // same on every rank: they all got the same command line).
  const comm::ReduceOp op = a.op == "all_reduce" || a.op == "reduce_scatter" ? reduce_op(a) : comm::ReduceOp::sum;
  std::optional<DType> compute;
  if (auto it = a.attrs.find("dtype"); it != a.attrs.end()) {
    compute = parse_dtype(it->second);
    if (!compute) throw UsageError(fmt::format("dtype: unknown dtype '{}'", it->second));
  }
  const int root = a.op == "broadcast" ? attr_int(a, "root", 0) : 0;
  const int peer = a.op == "send" || a.op == "recv" ? attr_int(a, "peer", std::nullopt) : 0;
  std::vector<std::int64_t> send_counts, recv_counts, recv_shape;
  if (a.op == "all_to_all") {
    if (!a.attrs.count("send_counts") || !a.attrs.count("recv_counts"))
      throw UsageError("collective all_to_all: send_counts= and recv_counts= are required");
    send_counts = int_list("send_counts", a.attrs.at("send_counts"));
    recv_counts = int_list("recv_counts", a.attrs.at("recv_counts"));
  }
  if (a.op == "recv") {
    if (!a.attrs.count("shape")) throw UsageError("collective recv: shape= is required");
    recv_shape = int_list("shape", a.attrs.at("shape"));
  }

  Device& dev = hal::device(comm::expand_local_rank(a.device));
  auto comm = comm::create_communicator(dev);
  const int rank = comm->rank();
  Stream stream(dev);

  // Inputs, with any error shared by all ranks.
  io::HostArray x;
  std::string local_error;
  try {
    if (!a.in.empty()) {
      x = io::read_npy(with_rank(a.in, rank));
      if (compute) x = io::convert(x, *compute);
    }
  } catch (const Error& e) {
    local_error = e.what();
  }
  comm::agree_no_error(comm->control(), a.op.c_str(), local_error);

  auto device_tensor = [&](io::HostArray& h) { return Tensor::contiguous(h.bytes.data(), &dev, h.dtype, h.shape); };
  if (!dev.host_accessible())
    throw_unsupported("collective", a.op, fmt::format("device {}: the CLI moves host arrays (cpu only)", dev.name()));

  io::HostArray y;
  auto make_y = [&](DType t, Shape s) {
    y.dtype = t;
    y.shape = s;
    y.bytes.assign(static_cast<std::size_t>(checked_numel(s)) * dtype_size(t), std::byte{0});
  };
  Tensor xt = x.bytes.empty() && a.in.empty() ? Tensor{} : device_tensor(x);
  if (a.op == "all_reduce") {
    make_y(x.dtype, x.shape);
    comm::all_reduce(*comm, stream, xt, device_tensor(y), op);
  } else if (a.op == "all_gather") {
    Shape s = x.shape;
    if (s.rank() > 0) s[0] *= comm->size();
    make_y(x.dtype, s);
    comm::all_gather(*comm, stream, xt, device_tensor(y));
  } else if (a.op == "reduce_scatter") {
    Shape s = x.shape;
    if (s.rank() > 0) s[0] /= comm->size();
    make_y(x.dtype, s);
    comm::reduce_scatter(*comm, stream, xt, device_tensor(y), op);
  } else if (a.op == "broadcast") {
    y = x;
    comm::broadcast(*comm, stream, device_tensor(y), root);
  } else if (a.op == "all_to_all") {
    Shape s = x.shape;
    std::int64_t rows = 0;
    for (std::int64_t c : recv_counts) rows += c;
    if (s.rank() > 0) s[0] = rows;
    make_y(x.dtype, s);
    comm::all_to_all(*comm, stream, xt, device_tensor(y), send_counts, recv_counts);
  } else if (a.op == "send") {
    comm::send(*comm, stream, xt, peer);
  } else if (a.op == "recv") {
    make_y(compute.value_or(DType::f32), Shape(std::span<const std::int64_t>(recv_shape)));
    comm::recv(*comm, stream, device_tensor(y), peer);
  } else {
    comm::barrier(*comm, stream);
  }
  stream.synchronize();

  if (!a.out.empty()) {
    const bool per_rank = a.out.find("{rank}") != std::string::npos;
    if (per_rank || rank == 0) {
      io::HostArray out = y;
      if (io::npy_descr(out.dtype).empty()) out = io::convert(out, DType::f32);
      io::write_npy(with_rank(a.out, rank), out);
    }
  }
  if (rank == 0)
    fmt::print("{}: {} rank(s) over {}{}\n", a.op, comm->size(), comm->engine(),
               a.out.empty() ? "" : fmt::format(", y {}[{}] written to {}", dtype_name(y.dtype),
                                                fmt::join(y.shape.span(), ", "), a.out));
  return kExitOk;
}

}  // namespace hal::tools
