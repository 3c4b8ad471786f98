#include "comm/rendezvous.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "hal/error.h"

namespace hal::comm {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string header(int size) { return fmt::format("hal-rendezvous world_size={}\n", size); }

[[noreturn]] void fail(const std::string& what) {
  throw Error(ErrorCode::io_error, "rendezvous: " + what);
}

// Polls `ready` every few milliseconds until it holds or the timeout passes.
template <class Ready>
void wait_for(Ready ready, double timeout_s, const std::string& waiting_for) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (!ready()) {
    if (Clock::now() > deadline) fail(fmt::format("timed out after {} s waiting for {}", timeout_s, waiting_for));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string ack_path(const std::string& path, int rank) { return fmt::format("{}.ack.{}", path, rank); }

}  // namespace

std::vector<std::uint8_t> rendezvous_share(const std::string& path, int rank, int size,
                                           const std::vector<std::uint8_t>& payload_of_rank0, double timeout_s) {
  if (rank == 0) {
    std::error_code ec;
    if (fs::exists(path, ec))
      fail(fmt::format("'{}' exists already (a stale file of an earlier job? use a fresh path per job)", path));
    const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      const std::string h = header(size);
      out.write(h.data(), static_cast<std::streamsize>(h.size()));
      out.write(reinterpret_cast<const char*>(payload_of_rank0.data()),
                static_cast<std::streamsize>(payload_of_rank0.size()));
      if (!out) fail(fmt::format("cannot write '{}'", tmp));
    }
    fs::rename(tmp, path, ec);
    if (ec) fail(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, ec.message()));
    for (int r = 1; r < size; ++r) {
      const std::string ack = ack_path(path, r);
      wait_for([&] { return fs::exists(ack); }, timeout_s, fmt::format("rank {} ('{}')", r, ack));
      fs::remove(ack, ec);
    }
    fs::remove(path, ec);
    return payload_of_rank0;
  }
  std::string bytes;
  wait_for(
      [&] {
        std::ifstream in(path, std::ios::binary);
        if (!in) return false;
        bytes.assign(std::istreambuf_iterator<char>(in), {});
        return true;
      },
      timeout_s, fmt::format("rank 0 to write '{}'", path));
  const std::string h = header(size);
  if (bytes.compare(0, h.size(), h) != 0)
    fail(fmt::format("'{}' does not start with '{}' (written for another world size or not by hal)", path,
                     h.substr(0, h.size() - 1)));
  std::vector<std::uint8_t> payload(bytes.begin() + static_cast<std::ptrdiff_t>(h.size()), bytes.end());
  std::ofstream ack(ack_path(path, rank));
  if (!ack) fail(fmt::format("cannot create '{}'", ack_path(path, rank)));
  return payload;
}

}  // namespace hal::comm
