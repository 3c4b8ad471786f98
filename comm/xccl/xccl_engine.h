#pragma once
// The engine for GPU tensors: NCCL on cuda devices, RCCL on hip devices,
// loaded at run time (comm/xccl/xccl_library.h). Collectives are queued on
// the hal stream's native handle (CUstream / hipStream_t), so they overlap
// with ops on other streams.
//
// Bootstrap: rank 0's ncclUniqueId reaches the other ranks over MPI
// (`control`, under mpirun; MPI then also carries the agreement of
// comm/agreement.h) or through the rendezvous file (HAL_RANK,
// HAL_WORLD_SIZE, HAL_RENDEZVOUS; then there is no control channel and a
// mismatch between ranks is NCCL's to detect, which it may not).
//
// Determinism: NCCL and RCCL fix their reduction order for a given rank
// count, topology, algorithm and protocol (ring or tree, chosen by message
// size unless NCCL_ALGO / NCCL_PROTO fix them); they promise no order across
// those, and no order that matches the MPI engine's rank order. Set
// NCCL_ALGO=Ring NCCL_PROTO=Simple for runs that must repeat bit for bit.
#include <memory>

#include "comm/communicator.h"
#include "comm/xccl/xccl_library.h"

namespace hal::comm::xccl {

// Throws unsupported (library missing, with the reason) or the engine's errors.
std::unique_ptr<Communicator> make_xccl_communicator(Flavor flavor, Device& device, const Launch& launch,
                                                     std::unique_ptr<HostTransport> control);

}  // namespace hal::comm::xccl
