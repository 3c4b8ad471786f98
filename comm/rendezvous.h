#pragma once
// The rendezvous file of env launches (comm/launch.h): rank 0 publishes a few
// bytes (the NCCL/RCCL unique id), every other rank reads them.
//
// Protocol: rank 0 writes "<path>.tmp.<pid>" and renames it to <path>
// (atomic on POSIX file systems, so a reader never sees half a file); the
// file starts with a header naming the world size, checked by each reader.
// Each reader then creates "<path>.ack.<rank>"; rank 0 waits for all of them
// and removes the files. Stale files of an earlier job would be read as this
// job's: use a fresh path per job (e.g. one containing $SLURM_JOB_ID); rank 0
// refuses to start when <path> already exists.
// Every wait ends after `timeout_s` with an io_error naming the file.
#include <cstdint>
#include <string>
#include <vector>

namespace hal::comm {

std::vector<std::uint8_t> rendezvous_share(const std::string& path, int rank, int size,
                                           const std::vector<std::uint8_t>& payload_of_rank0,
                                           double timeout_s = 120.0);

}  // namespace hal::comm
