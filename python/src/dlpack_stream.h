#pragma once
// What a consumer's __dlpack__(stream=...) asks of the producer, per the
// DLPack / array-API rules, as a decision apart from the vendor calls (so that
// it is tested on a machine without a GPU):
//   CPU:  None -> wait on the host for the stream that last wrote the tensor;
//         -1 -> no ordering; anything else is refused.
//   CUDA: None or 1 -> the legacy default stream (CU_STREAM_LEGACY, 0x1);
//         2 -> the per-thread default stream (CU_STREAM_PER_THREAD, 0x2);
//         > 2 -> that CUstream; -1 -> no ordering; 0 (ambiguous) and < -1 refused.
//   ROCm: None or 0 -> the null (legacy default) stream; > 2 -> that
//         hipStream_t; -1 -> no ordering; 1, 2 (CUDA's) and < -1 refused.
// The producer's side of "wait": the consumer's stream waits on an event
// recorded on hal's stream that last wrote the tensor (gpu_stream_handshake.h).
#include <cstdint>
#include <optional>
#include <string>

namespace hal::python {

struct ConsumerOrdering {
  enum class Kind { none, host_wait, stream_wait };
  Kind kind = Kind::none;
  std::uintptr_t stream = 0;  // the consumer's stream handle, for stream_wait
};

// Throws ConsumerStreamRefused (the module raises BufferError) for a value the rules refuse.
struct ConsumerStreamRefused {
  std::string message;
};
ConsumerOrdering interpret_consumer_stream(std::int32_t dlpack_device_type, std::optional<std::int64_t> stream);

}  // namespace hal::python
