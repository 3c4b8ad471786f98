#pragma once
// DLPack leaves stream ordering to the producer: before a consumer uses a hal
// tensor on its own stream, that stream must wait for the work hal has queued.
// This makes a foreign stream (a CUstream / hipStream_t given as an integer)
// wait on hal's stream through an event, without blocking the host.
#include <cstdint>

#include "hal/device.h"
#include "hal/stream.h"

namespace hal::python {

// Throws unsupported for a backend other than cuda and hip, device_error when
// the driver call fails.
void make_foreign_stream_wait(Device& device, Stream& hal_stream, std::uintptr_t foreign_stream);

}  // namespace hal::python
