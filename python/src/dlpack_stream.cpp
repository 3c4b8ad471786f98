#include "python/src/dlpack_stream.h"

#include <fmt/format.h>

#include "python/src/dlpack_abi.h"

namespace hal::python {

ConsumerOrdering interpret_consumer_stream(std::int32_t type, std::optional<std::int64_t> stream) {
  using Kind = ConsumerOrdering::Kind;
  if (stream && *stream == -1) return {Kind::none, 0};
  auto refuse = [&](const std::string& why) -> ConsumerOrdering {
    throw ConsumerStreamRefused{fmt::format("hal.Tensor.__dlpack__: stream={} {}", *stream, why)};
  };
  if (type == dlpack::kCUDA) {
    if (!stream) return {Kind::stream_wait, 1};  // the legacy default stream
    if (*stream == 0) return refuse("is ambiguous for CUDA (DLPack: 1 is the legacy default stream, 2 the per-thread one)");
    if (*stream < -1) return refuse("is not a stream (DLPack: -1, 1, 2 or a CUstream)");
    return {Kind::stream_wait, static_cast<std::uintptr_t>(*stream)};
  }
  if (type == dlpack::kROCM) {
    if (!stream) return {Kind::stream_wait, 0};  // the null stream
    if (*stream == 1 || *stream == 2) return refuse("is CUDA's (DLPack: ROCm takes 0, -1 or a hipStream_t)");
    if (*stream < -1) return refuse("is not a stream (DLPack: -1, 0 or a hipStream_t)");
    return {Kind::stream_wait, static_cast<std::uintptr_t>(*stream)};
  }
  if (!stream) return {Kind::host_wait, 0};
  return refuse("is given for a CPU tensor: stream must be None or -1 for a CPU tensor");
}

}  // namespace hal::python
