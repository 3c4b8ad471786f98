#pragma once
// The engine for tensors in host memory (the cpu device): data moves over a
// HostTransport (MPI, or the one-rank self transport); reductions are done by
// hal over the gathered buffers in rank order (comm/rank_order_reduce.h),
// because MPI does not promise an order of its own (MPI-4.0 §6.9.1 only
// "recommends" that a reduction be done the same way every time, and OpenMPI's
// algorithms change order with message size and rank count).
// Cost: all_reduce gathers every rank's buffer (P times the input's size per
// rank); it is the reference path, not a tuned one.
// On a CPU partition's stream the data movement runs on the calling thread;
// the rank-order reduction's parallel loop runs in the caller's task arena,
// not the partition's (StreamImpl has no hook for host work yet).
#include <memory>

#include "comm/communicator.h"

namespace hal::comm {

std::unique_ptr<Communicator> make_host_communicator(Device& device, std::unique_ptr<HostTransport> transport);

}  // namespace hal::comm
