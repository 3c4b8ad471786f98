#include "comm/xccl/xccl_engine.h"

#include <fmt/format.h>

#include <cstring>

#include "comm/group_plan.h"
#include "comm/rendezvous.h"
#include "comm/xccl/xccl_status.h"
#include "hal/error.h"

namespace hal::comm::xccl {
namespace {

ncclDataType_t data_type(DType t, std::string_view engine) {
  switch (t) {
    case DType::f32: return ncclFloat32;
    case DType::f16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
    case DType::f64: return ncclFloat64;
    case DType::i32: return ncclInt32;
    case DType::i64: return ncclInt64;
    default: throw_unsupported(engine, "reduction", fmt::format("dtype {}", dtype_name(t)));
  }
}

ncclRedOp_t red_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::avg: return ncclAvg;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
  }
  return ncclSum;
}

std::size_t bytes_of(const Tensor& t) { return static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype); }

class XcclCommunicator final : public Communicator {
 public:
  XcclCommunicator(Flavor flavor, const Library& lib, Device& device, const Launch& launch,
                   std::unique_ptr<HostTransport> control)
      : Communicator(device, std::string(flavor_name(flavor)), launch.rank, launch.size),
        lib_(lib),
        control_owner_(std::move(control)) {
    set_control(control_owner_.get());
    ncclUniqueId id{};
    if (launch.rank == 0) ok(lib_.api.GetUniqueId(&id), "ncclGetUniqueId", "rank 0");
    if (control_owner_) {
      control_owner_->broadcast(&id, sizeof id, 0);
    } else if (launch.size > 1) {
      std::vector<std::uint8_t> bytes(sizeof id);
      std::memcpy(bytes.data(), &id, sizeof id);
      bytes = rendezvous_share(launch.rendezvous, launch.rank, launch.size, bytes);
      if (bytes.size() != sizeof id)
        throw Error(ErrorCode::io_error, fmt::format("rendezvous: '{}' holds {} bytes, expected an id of {}",
                                                     launch.rendezvous, bytes.size(), sizeof id));
      std::memcpy(&id, bytes.data(), sizeof id);
    }
    ok(lib_.api.CommInitRank(&comm_, launch.size, id, launch.rank), "ncclCommInitRank",
       fmt::format("rank {} of {} on {}", launch.rank, launch.size, device.name()));
    barrier_word_ = device.allocate(sizeof(float));
  }
  ~XcclCommunicator() override {
    if (comm_) lib_.api.CommDestroy(comm_);
    if (barrier_word_) device().deallocate(barrier_word_);
  }

  void run_all_reduce(Stream& s, const Tensor& x, const Tensor& y, ReduceOp op) override {
    ok(lib_.api.AllReduce(x.first(), y.first(), static_cast<std::size_t>(x.numel()), data_type(x.dtype, engine()),
                          red_op(op), comm_, handle(s)),
       "ncclAllReduce", x.str());
  }
  void run_all_gather(Stream& s, const Tensor& x, const Tensor& y) override {
    ok(lib_.api.AllGather(x.first(), y.first(), bytes_of(x), ncclUint8, comm_, handle(s)), "ncclAllGather", x.str());
  }
  void run_reduce_scatter(Stream& s, const Tensor& x, const Tensor& y, ReduceOp op) override {
    ok(lib_.api.ReduceScatter(x.first(), y.first(), static_cast<std::size_t>(y.numel()), data_type(x.dtype, engine()),
                              red_op(op), comm_, handle(s)),
       "ncclReduceScatter", x.str());
  }
  void run_broadcast(Stream& s, const Tensor& buffer, int root) override {
    ok(lib_.api.Broadcast(buffer.first(), buffer.first(), bytes_of(buffer), ncclUint8, root, comm_, handle(s)),
       "ncclBroadcast", buffer.str());
  }
  void run_all_to_all(Stream& s, const Tensor& x, const Tensor& y, const std::vector<std::int64_t>& send_rows,
                      const std::vector<std::int64_t>& recv_rows) override {
    // NCCL has no all-to-all-v: a group of sends and receives, one pair per rank.
    std::size_t row = dtype_size(x.dtype);
    for (int i = 1; i < x.rank(); ++i) row *= static_cast<std::size_t>(x.shape[i]);
    auto* out = static_cast<std::byte*>(y.first());
    const auto* in = static_cast<const std::byte*>(x.first());
    ok(lib_.api.GroupStart(), "ncclGroupStart", "all_to_all");
    std::size_t s_off = 0, r_off = 0;
    for (int r = 0; r < size(); ++r) {
      const std::size_t sb = static_cast<std::size_t>(send_rows[static_cast<std::size_t>(r)]) * row;
      const std::size_t rb = static_cast<std::size_t>(recv_rows[static_cast<std::size_t>(r)]) * row;
      if (sb) ok(lib_.api.Send(in + s_off, sb, ncclUint8, r, comm_, handle(s)), "ncclSend", "all_to_all");
      if (rb) ok(lib_.api.Recv(out + r_off, rb, ncclUint8, r, comm_, handle(s)), "ncclRecv", "all_to_all");
      s_off += sb;
      r_off += rb;
    }
    ok(lib_.api.GroupEnd(), "ncclGroupEnd", "all_to_all");
  }
  void run_send(Stream& s, const Tensor& x, int peer) override {
    ok(lib_.api.Send(x.first(), bytes_of(x), ncclUint8, peer, comm_, handle(s)), "ncclSend", x.str());
  }
  void run_recv(Stream& s, const Tensor& y, int peer) override {
    ok(lib_.api.Recv(y.first(), bytes_of(y), ncclUint8, peer, comm_, handle(s)), "ncclRecv", y.str());
  }
  // The engine's own group: every call of the group between one
  // ncclGroupStart/ncclGroupEnd pair, in issue order (NCCL fuses them and
  // matches the sends and receives itself, so no order of ours is needed).
  void run_group(std::vector<GroupedCall>& calls, const GroupPlan&) override {
    ok(lib_.api.GroupStart(), "ncclGroupStart", "group_end");
    try {
      for (GroupedCall& c : calls) c.run();
    } catch (...) {
      lib_.api.GroupEnd();  // close the engine's group before the error leaves
      throw;
    }
    ok(lib_.api.GroupEnd(), "ncclGroupEnd", fmt::format("group of {} calls", calls.size()));
  }
  void run_barrier(Stream& s) override {
    // A one-word all-reduce, then the stream drains: every rank has arrived.
    ok(lib_.api.AllReduce(barrier_word_, barrier_word_, 1, ncclFloat32, ncclSum, comm_, handle(s)), "ncclAllReduce",
       "barrier");
    s.synchronize();
  }

 private:
  static ncclStream_t handle(Stream& s) { return s.impl().native_handle(); }
  void ok(ncclResult_t r, std::string_view call, std::string_view context) { check(lib_, r, call, context); }

  const Library& lib_;
  std::unique_ptr<HostTransport> control_owner_;
  ncclComm_t comm_ = nullptr;
  void* barrier_word_ = nullptr;
};

}  // namespace

std::unique_ptr<Communicator> make_xccl_communicator(Flavor flavor, Device& device, const Launch& launch,
                                                     std::unique_ptr<HostTransport> control) {
  const Library& lib = library(flavor);
  if (!lib.loaded) throw_unsupported(flavor_name(flavor), "create_communicator", lib.error);
  if (control && (control->size() != launch.size || control->rank() != launch.rank))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: MPI says rank {} of {}, the launch {}", flavor_name(flavor), control->rank(),
                            control->size(), launch.describe()));
  return std::make_unique<XcclCommunicator>(flavor, lib, device, launch, std::move(control));
}

}  // namespace hal::comm::xccl
