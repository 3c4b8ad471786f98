#pragma once
// HostTransport: byte movement between the ranks of a job, for host memory.
//
// hal has no transport of its own: the implementation that crosses processes
// is MPI (comm/mpi/mpi_transport.cpp); a one-rank job uses SelfTransport. The
// CPU engine (comm/host_engine.cpp) moves tensors with it, and every engine
// uses it, when there is one, as the control channel on which the ranks agree
// on a call before any data moves (comm/agreement.h).
//
// All calls block until the local part is complete. Sizes are in bytes;
// `recv` buffers are written only by the call that names them.
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace hal::comm {

class HostTransport {
 public:
  virtual ~HostTransport() = default;
  virtual std::string_view name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // out[r * bytes, (r + 1) * bytes) = rank r's `in`, for every r.
  virtual void all_gather(const void* in, std::size_t bytes, void* out) = 0;
  // Rank r sends in[send_offset(j), + send_bytes[j]) to every rank j and
  // receives recv_bytes[i] from every rank i at out + recv_offset(i); offsets
  // are the prefix sums of the byte counts, in rank order.
  virtual void all_to_all_v(const void* in, const std::vector<std::size_t>& send_bytes, void* out,
                            const std::vector<std::size_t>& recv_bytes) = 0;
  virtual void broadcast(void* buffer, std::size_t bytes, int root) = 0;
  virtual void send(const void* data, std::size_t bytes, int peer, int tag) = 0;
  virtual void recv(void* data, std::size_t bytes, int peer, int tag) = 0;
  // Sends `out` to peer and receives `in` from it, without deadlock when the
  // peer does the same.
  virtual void exchange(const void* out, void* in, std::size_t bytes, int peer, int tag) = 0;
  virtual void barrier() = 0;
};

// The one-rank transport: copies.
std::unique_ptr<HostTransport> make_self_transport();

}  // namespace hal::comm
