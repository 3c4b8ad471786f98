#include "comm/mpi/mpi_transport.h"

#include <fmt/format.h>
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <mutex>

#include "comm/mpi/mpi_status.h"
#include "hal/error.h"

namespace hal::comm::mpi {
namespace {

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void ensure_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    check(MPI_Initialized(&initialized), "MPI_Initialized", "start");
    if (initialized) return;  // the application owns MPI
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread", "start");
    std::atexit(finalize_at_exit);
  });
}

// MPI counts are int: hal refuses a message it cannot describe in one.
int count_of(std::size_t bytes, const char* what) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw_unsupported("mpi", what, fmt::format("{} bytes in one message (the limit is {})", bytes, INT_MAX));
  return static_cast<int>(bytes);
}

class MpiTransport final : public HostTransport {
 public:
  MpiTransport() {
    ensure_initialized();
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup", "communicator");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", "communicator");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank", "communicator");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size", "communicator");
  }
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  std::string_view name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_gather(const void* in, std::size_t bytes, void* out) override {
    const int n = count_of(bytes, "all_gather");
    count_of(bytes * static_cast<std::size_t>(size_), "all_gather");
    check(MPI_Allgather(in, n, MPI_BYTE, out, n, MPI_BYTE, comm_), "MPI_Allgather", fmt::format("{} bytes", bytes));
  }

  void all_to_all_v(const void* in, const std::vector<std::size_t>& send_bytes, void* out,
                    const std::vector<std::size_t>& recv_bytes) override {
    std::vector<int> sc, sd, rc, rd;
    std::size_t s_off = 0, r_off = 0;
    for (int r = 0; r < size_; ++r) {
      sc.push_back(count_of(send_bytes[static_cast<std::size_t>(r)], "all_to_all"));
      sd.push_back(count_of(s_off, "all_to_all"));
      s_off += send_bytes[static_cast<std::size_t>(r)];
      rc.push_back(count_of(recv_bytes[static_cast<std::size_t>(r)], "all_to_all"));
      rd.push_back(count_of(r_off, "all_to_all"));
      r_off += recv_bytes[static_cast<std::size_t>(r)];
    }
    check(MPI_Alltoallv(in, sc.data(), sd.data(), MPI_BYTE, out, rc.data(), rd.data(), MPI_BYTE, comm_),
          "MPI_Alltoallv", fmt::format("{} bytes out, {} in", s_off, r_off));
  }

  void broadcast(void* buffer, std::size_t bytes, int root) override {
    check(MPI_Bcast(buffer, count_of(bytes, "broadcast"), MPI_BYTE, root, comm_), "MPI_Bcast",
          fmt::format("{} bytes from rank {}", bytes, root));
  }
  void send(const void* data, std::size_t bytes, int peer, int tag) override {
    check(MPI_Send(data, count_of(bytes, "send"), MPI_BYTE, peer, tag, comm_), "MPI_Send",
          fmt::format("{} bytes to rank {}", bytes, peer));
  }
  void recv(void* data, std::size_t bytes, int peer, int tag) override {
    check(MPI_Recv(data, count_of(bytes, "recv"), MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv",
          fmt::format("{} bytes from rank {}", bytes, peer));
  }
  void exchange(const void* out, void* in, std::size_t bytes, int peer, int tag) override {
    const int n = count_of(bytes, "exchange");
    check(MPI_Sendrecv(out, n, MPI_BYTE, peer, tag, in, n, MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE),
          "MPI_Sendrecv", fmt::format("{} bytes with rank {}", bytes, peer));
  }
  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier", "barrier"); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<HostTransport> make_mpi_transport() { return std::make_unique<MpiTransport>(); }

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  std::string v(text, static_cast<std::size_t>(length));
  if (auto nl = v.find_first_of("\n,"); nl != std::string::npos) v.resize(nl);
  return v;
}

}  // namespace hal::comm::mpi
