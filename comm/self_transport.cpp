// The one-rank transport: every collective of one rank is a copy.
#include <cstring>

#include "comm/host_transport.h"
#include "hal/error.h"

namespace hal::comm {
namespace {

class SelfTransport final : public HostTransport {
 public:
  std::string_view name() const override { return "self"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_gather(const void* in, std::size_t bytes, void* out) override { copy(out, in, bytes); }
  void all_to_all_v(const void* in, const std::vector<std::size_t>& send_bytes, void* out,
                    const std::vector<std::size_t>&) override {
    copy(out, in, send_bytes.at(0));
  }
  void broadcast(void*, std::size_t, int) override {}
  void send(const void*, std::size_t, int peer, int) override { no_peer(peer); }
  void recv(void*, std::size_t, int peer, int) override { no_peer(peer); }
  void exchange(const void*, void*, std::size_t, int peer, int) override { no_peer(peer); }
  void barrier() override {}

 private:
  static void copy(void* dst, const void* src, std::size_t bytes) {
    if (bytes != 0 && dst != src) std::memmove(dst, src, bytes);
  }
  [[noreturn]] static void no_peer(int peer) {
    // Unreachable after validation (peer must differ from the rank and be in range).
    throw Error(ErrorCode::invalid_argument,
                "self transport: a one-rank job has no peer " + std::to_string(peer));
  }
};

}  // namespace

std::unique_ptr<HostTransport> make_self_transport() { return std::make_unique<SelfTransport>(); }

}  // namespace hal::comm
