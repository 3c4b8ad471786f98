// The public collectives: local validation, agreement between ranks
// (comm/agreement.h), then the engine. A local error is not thrown at once:
// it travels in the signature, so every rank learns of it and throws too
// (a rank that threw alone would leave the others waiting forever).
#include "comm/collective.h"

#include <fmt/format.h>

#include <functional>

#include "comm/agreement.h"
#include "comm/communicator.h"
#include "comm/group_plan.h"
#include "hal/error.h"

namespace hal::comm {
namespace {

std::string capture(const std::function<void()>& validate) {
  try {
    validate();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

void check_tensor(const char* op, const char* arg, const Communicator& comm, const Tensor& t) {
  if (t.device != &comm.device())
    throw_invalid_argument(op, arg, fmt::format("a tensor on {} (the communicator's device)", comm.device().name()),
                           t.device ? t.device->name() : std::string("no device"));
  if (!t.is_contiguous()) throw_invalid_argument(op, arg, "a contiguous tensor", t.str());
  if (t.numel() > 0 && !t.data) throw_invalid_argument(op, arg, "a tensor with data", "a null data pointer");
}

void check_same(const char* op, const char* arg, const Tensor& t, DType dtype, const Shape& shape, const char* why) {
  if (t.dtype != dtype)
    throw_invalid_argument(op, arg, fmt::format("dtype {} ({})", dtype_name(dtype), why), dtype_name(t.dtype));
  if (!(t.shape == shape)) throw_invalid_argument(op, arg, fmt::format("shape {} ({})", shape.str(), why), t.shape.str());
}

void check_reducible(const char* op, DType dtype, ReduceOp reduce) {
  const bool ok = dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16 || dtype == DType::f64 ||
                  dtype == DType::i32 || dtype == DType::i64;
  if (!ok) throw_invalid_argument(op, "x", "dtype f32, f16, bf16, f64, i32 or i64", dtype_name(dtype));
  if (reduce == ReduceOp::avg && !is_floating(dtype))
    throw_invalid_argument(op, "op", "sum, max or min for an integer dtype", "avg");
}

void check_rank_arg(const char* op, const char* arg, int value, int size) {
  if (value < 0 || value >= size)
    throw_invalid_argument(op, arg, fmt::format("a rank in [0, {})", size), std::to_string(value));
}

void check_stream(const char* op, const Communicator& comm, const Stream& stream) {
  if (&stream.device() != &comm.device())
    throw_invalid_argument(op, "stream", fmt::format("a stream of {} (the communicator's device)", comm.device().name()),
                           fmt::format("a stream of {}", stream.device().name()));
}

CallSignature signature(CallKind kind, const Tensor& t) {
  CallSignature s;
  s.kind = kind;
  s.dtype = static_cast<std::int32_t>(t.dtype);
  return s;
}

// Axis 0 split off: [n, rest...] -> rest.
Shape trailing(const Shape& s) {
  Shape r = s;
  if (r.rank() > 0) r.erase(0);
  return r;
}

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::avg: return "avg";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

void all_reduce(Communicator& comm, Stream& stream, const Tensor& x, const Tensor& y, ReduceOp op) {
  CallSignature sig = signature(CallKind::all_reduce, x);
  sig.reduce = static_cast<std::int32_t>(op);
  sig.set_shape(x.shape);
  sig.set_error(capture([&] {
    check_stream("all_reduce", comm, stream);
    check_tensor("all_reduce", "x", comm, x);
    check_tensor("all_reduce", "y", comm, y);
    check_reducible("all_reduce", x.dtype, op);
    check_same("all_reduce", "y", y, x.dtype, x.shape, "as x");
  }));
  if (defer_to_open_group(comm, sig, [&comm, &stream, x, y, op] { comm.run_all_reduce(stream, x, y, op); })) return;
  agree_collective(comm.control(), sig, true);
  comm.run_all_reduce(stream, x, y, op);
}

void all_gather(Communicator& comm, Stream& stream, const Tensor& x, const Tensor& y) {
  CallSignature sig = signature(CallKind::all_gather, x);
  sig.set_shape(x.shape);
  sig.set_error(capture([&] {
    check_stream("all_gather", comm, stream);
    check_tensor("all_gather", "x", comm, x);
    check_tensor("all_gather", "y", comm, y);
    if (x.rank() < 1) throw_invalid_argument("all_gather", "x", "a tensor of rank >= 1 (gathered along axis 0)", x.str());
    Shape expected = x.shape;
    expected[0] = checked_mul(x.shape[0], comm.size(), "all_gather: y rows");
    check_same("all_gather", "y", y, x.dtype, expected, "[size * x rows, ...]");
  }));
  if (defer_to_open_group(comm, sig, [&comm, &stream, x, y] { comm.run_all_gather(stream, x, y); })) return;
  agree_collective(comm.control(), sig, true);
  comm.run_all_gather(stream, x, y);
}

void reduce_scatter(Communicator& comm, Stream& stream, const Tensor& x, const Tensor& y, ReduceOp op) {
  CallSignature sig = signature(CallKind::reduce_scatter, x);
  sig.reduce = static_cast<std::int32_t>(op);
  sig.set_shape(x.shape);
  sig.set_error(capture([&] {
    check_stream("reduce_scatter", comm, stream);
    check_tensor("reduce_scatter", "x", comm, x);
    check_tensor("reduce_scatter", "y", comm, y);
    check_reducible("reduce_scatter", x.dtype, op);
    if (x.rank() < 1 || x.shape[0] % comm.size() != 0)
      throw_invalid_argument("reduce_scatter", "x",
                             fmt::format("rows (axis 0) a multiple of the communicator size {}", comm.size()), x.str());
    Shape expected = x.shape;
    expected[0] = x.shape[0] / comm.size();
    check_same("reduce_scatter", "y", y, x.dtype, expected, "[x rows / size, ...]");
  }));
  if (defer_to_open_group(comm, sig, [&comm, &stream, x, y, op] { comm.run_reduce_scatter(stream, x, y, op); }))
    return;
  agree_collective(comm.control(), sig, true);
  comm.run_reduce_scatter(stream, x, y, op);
}

void broadcast(Communicator& comm, Stream& stream, const Tensor& buffer, int root) {
  CallSignature sig = signature(CallKind::broadcast, buffer);
  sig.root = root;
  sig.set_shape(buffer.shape);
  sig.set_error(capture([&] {
    check_stream("broadcast", comm, stream);
    check_tensor("broadcast", "buffer", comm, buffer);
    check_rank_arg("broadcast", "root", root, comm.size());
  }));
  if (defer_to_open_group(comm, sig, [&comm, &stream, buffer, root] { comm.run_broadcast(stream, buffer, root); }))
    return;
  agree_collective(comm.control(), sig, true);
  comm.run_broadcast(stream, buffer, root);
}

void all_to_all(Communicator& comm, Stream& stream, const Tensor& x, const Tensor& y,
                const std::vector<std::int64_t>& send_counts, const std::vector<std::int64_t>& recv_counts) {
  const char* op = "all_to_all";
  CallSignature sig = signature(CallKind::all_to_all, x);
  sig.set_shape(trailing(x.shape));
  sig.set_error(capture([&] {
    check_stream(op, comm, stream);
    check_tensor(op, "x", comm, x);
    check_tensor(op, "y", comm, y);
    if (x.rank() < 1) throw_invalid_argument(op, "x", "a tensor of rank >= 1 (rows along axis 0)", x.str());
    const auto check_counts = [&](const char* arg, const std::vector<std::int64_t>& counts, const Tensor& t) {
      if (static_cast<int>(counts.size()) != comm.size())
        throw_invalid_argument(op, arg, fmt::format("{} counts (one per rank)", comm.size()),
                               std::to_string(counts.size()));
      std::int64_t total = 0;
      for (std::int64_t c : counts) {
        if (c < 0) throw_invalid_argument(op, arg, "counts >= 0", std::to_string(c));
        total = checked_add(total, c, "all_to_all: counts");
      }
      Shape expected = x.shape;
      expected[0] = total;
      check_same(op, arg == std::string("send_counts") ? "x" : "y", t, x.dtype, expected,
                 fmt::format("rows = sum of {}", arg).c_str());
    };
    check_counts("send_counts", send_counts, x);
    check_counts("recv_counts", recv_counts, y);
  }));
  if (defer_to_open_group(comm, sig, [] {})) return;  // refused at group_end on every rank
  agree_collective(comm.control(), sig, true);
  // Second round: rank i's send_counts[r] reaches rank r, which compares it
  // with its recv_counts[i] (one int64 each way per pair of ranks).
  std::string count_error;
  if (HostTransport* control = comm.control()) {
    std::vector<std::int64_t> sent_to_me(static_cast<std::size_t>(comm.size()));
    const std::vector<std::size_t> eight(static_cast<std::size_t>(comm.size()), sizeof(std::int64_t));
    control->all_to_all_v(send_counts.data(), eight, sent_to_me.data(), eight);
    for (int i = 0; i < comm.size() && count_error.empty(); ++i)
      if (sent_to_me[static_cast<std::size_t>(i)] != recv_counts[static_cast<std::size_t>(i)])
        count_error = fmt::format(
            "all_to_all: ranks disagree: rank {} sends {} rows to rank {}, which expects {} (recv_counts[{}])", i,
            sent_to_me[static_cast<std::size_t>(i)], comm.rank(), recv_counts[static_cast<std::size_t>(i)], i);
  }
  agree_no_error(comm.control(), op, count_error);
  comm.run_all_to_all(stream, x, y, send_counts, recv_counts);
}

void send(Communicator& comm, Stream& stream, const Tensor& x, int peer) {
  CallSignature sig = signature(CallKind::send, x);
  sig.root = peer;
  sig.set_error(capture([&] {
    check_stream("send", comm, stream);
    check_tensor("send", "x", comm, x);
    check_rank_arg("send", "peer", peer, comm.size());
    if (peer == comm.rank()) throw_invalid_argument("send", "peer", "a rank other than this one", std::to_string(peer));
    sig.count = x.numel();
  }));
  if (defer_to_open_group(comm, sig, [&comm, &stream, x, peer] { comm.run_send(stream, x, peer); })) return;
  agree_point_to_point(comm.control(), comm.rank(), sig);
  comm.run_send(stream, x, peer);
}

void recv(Communicator& comm, Stream& stream, const Tensor& y, int peer) {
  CallSignature sig = signature(CallKind::recv, y);
  sig.root = peer;
  sig.set_error(capture([&] {
    check_stream("recv", comm, stream);
    check_tensor("recv", "y", comm, y);
    check_rank_arg("recv", "peer", peer, comm.size());
    if (peer == comm.rank()) throw_invalid_argument("recv", "peer", "a rank other than this one", std::to_string(peer));
    sig.count = y.numel();
  }));
  if (defer_to_open_group(comm, sig, [&comm, &stream, y, peer] { comm.run_recv(stream, y, peer); })) return;
  agree_point_to_point(comm.control(), comm.rank(), sig);
  comm.run_recv(stream, y, peer);
}

void barrier(Communicator& comm, Stream& stream) {
  CallSignature sig;
  sig.kind = CallKind::barrier;
  if (&stream.device() != &comm.device())
    sig.set_error(fmt::format("barrier: argument 'stream': expected a stream of {}, given one of {}",
                              comm.device().name(), stream.device().name()));
  if (defer_to_open_group(comm, sig, [] {})) return;  // refused at group_end on every rank
  agree_collective(comm.control(), sig, false);
  comm.run_barrier(stream);
}

}  // namespace hal::comm
