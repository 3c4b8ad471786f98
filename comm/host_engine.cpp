#include "comm/host_engine.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "comm/rank_order_reduce.h"
#include "hal/error.h"

namespace hal::comm {
namespace {

std::size_t bytes_of(const Tensor& t) { return static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype); }

std::size_t row_bytes(const Tensor& t) {
  std::int64_t n = 1;
  for (int i = 1; i < t.rank(); ++i) n *= t.shape[i];
  return static_cast<std::size_t>(n) * dtype_size(t.dtype);
}

class HostCommunicator final : public Communicator {
 public:
  HostCommunicator(Device& device, std::unique_ptr<HostTransport> transport)
      : Communicator(device, std::string(transport->name()), transport->rank(), transport->size()),
        transport_(std::move(transport)) {
    set_control(transport_.get());
  }

  // The transport is both the data path and the control channel.
  HostTransport& t() { return *transport_; }

  void run_all_reduce(Stream& s, const Tensor& x, const Tensor& y, ReduceOp op) override {
    s.synchronize();
    const std::size_t n = bytes_of(x);
    std::vector<std::byte> gathered(n * static_cast<std::size_t>(size()));
    t().all_gather(x.first(), n, gathered.data());
    rank_order_reduce(parts(gathered, n), x.dtype, x.numel(), op, y.first());
  }

  void run_all_gather(Stream& s, const Tensor& x, const Tensor& y) override {
    s.synchronize();
    t().all_gather(x.first(), bytes_of(x), y.first());
  }

  void run_reduce_scatter(Stream& s, const Tensor& x, const Tensor& y, ReduceOp op) override {
    s.synchronize();
    // Block j of every rank's x goes to rank j, which reduces the P blocks.
    const std::size_t block = bytes_of(y);
    const std::vector<std::size_t> counts(static_cast<std::size_t>(size()), block);
    std::vector<std::byte> blocks(block * static_cast<std::size_t>(size()));
    t().all_to_all_v(x.first(), counts, blocks.data(), counts);
    rank_order_reduce(parts(blocks, block), x.dtype, y.numel(), op, y.first());
  }

  void run_broadcast(Stream& s, const Tensor& buffer, int root) override {
    s.synchronize();
    t().broadcast(buffer.first(), bytes_of(buffer), root);
  }

  void run_all_to_all(Stream& s, const Tensor& x, const Tensor& y, const std::vector<std::int64_t>& send_rows,
                      const std::vector<std::int64_t>& recv_rows) override {
    s.synchronize();
    const std::size_t row = row_bytes(x);
    std::vector<std::size_t> send_bytes, recv_bytes;
    for (std::int64_t c : send_rows) send_bytes.push_back(static_cast<std::size_t>(c) * row);
    for (std::int64_t c : recv_rows) recv_bytes.push_back(static_cast<std::size_t>(c) * row);
    t().all_to_all_v(x.first(), send_bytes, y.first(), recv_bytes);
  }

  void run_send(Stream& s, const Tensor& x, int peer) override {
    s.synchronize();
    t().send(x.first(), bytes_of(x), peer, kDataTag);
  }
  void run_recv(Stream& s, const Tensor& y, int peer) override {
    s.synchronize();
    t().recv(y.first(), bytes_of(y), peer, kDataTag);
  }
  void run_barrier(Stream& s) override {
    s.synchronize();
    t().barrier();
  }

 private:
  static constexpr int kDataTag = 0x4844;  // "HD"

  std::vector<const void*> parts(const std::vector<std::byte>& buf, std::size_t each) const {
    std::vector<const void*> p;
    for (int r = 0; r < size(); ++r) p.push_back(buf.data() + static_cast<std::size_t>(r) * each);
    return p;
  }

  std::unique_ptr<HostTransport> transport_;
};

}  // namespace

std::unique_ptr<Communicator> make_host_communicator(Device& device, std::unique_ptr<HostTransport> transport) {
  if (!device.host_accessible())
    throw_unsupported(transport->name(), "communicator", fmt::format("device {} (its memory is not host memory)", device.name()));
  return std::make_unique<HostCommunicator>(device, std::move(transport));
}

}  // namespace hal::comm
