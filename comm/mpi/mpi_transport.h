#pragma once
// The MPI HostTransport: a duplicate of MPI_COMM_WORLD (so hal's tags never
// meet the application's), MPI initialized on first use (MPI_THREAD_SERIALIZED)
// and finalized at exit when hal initialized it.
#include <memory>
#include <string>

#include "comm/host_transport.h"

namespace hal::comm::mpi {

// Throws device_error (from MPI) when MPI cannot start.
std::unique_ptr<HostTransport> make_mpi_transport();
// "Open MPI v4.1.4, ..." (MPI_Get_library_version, no MPI_Init needed).
std::string library_version();

}  // namespace hal::comm::mpi
