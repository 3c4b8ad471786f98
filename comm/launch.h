#pragma once
// How a job of several processes was started, read from the environment.
//
//   mpi:    mpirun/mpiexec (OpenMPI's OMPI_COMM_WORLD_RANK/SIZE, or PMI_RANK/
//           PMI_SIZE of MPICH and Slurm's PMI): the ranks talk over MPI.
//   env:    HAL_RANK and HAL_WORLD_SIZE (set them from a torchrun- or
//           slurm-style launcher's RANK/WORLD_SIZE or SLURM_PROCID/NTASKS)
//           plus HAL_RENDEZVOUS, a file path on
//           a file system every rank sees. This path carries only the
//           NCCL/RCCL unique id (comm/rendezvous.h); cpu tensors need MPI.
//   single: none of these: one process, rank 0 of 1.
#include <optional>
#include <string>

namespace hal::comm {

struct Launch {
  enum class Kind { single, mpi, env };
  Kind kind = Kind::single;
  int rank = 0;
  int size = 1;
  std::string rendezvous;  // HAL_RENDEZVOUS (env launches)
  std::string describe() const;  // "mpi rank 1 of 4"
};

// Throws invalid_argument naming the variable when a value does not parse or
// is out of range (HAL_RANK >= HAL_WORLD_SIZE, a world size above one without
// HAL_RENDEZVOUS, HAL_RANK without HAL_WORLD_SIZE).
Launch detect_launch();

// The rank of this process on its host: OMPI_COMM_WORLD_LOCAL_RANK,
// MPI_LOCALRANKID, SLURM_LOCALID or LOCAL_RANK (torchrun), else 0. Used to
// give each rank its own GPU: "{local_rank}" in a device name
// ("cuda:{local_rank}") becomes this number (expand_local_rank).
int local_rank();
std::string expand_local_rank(std::string device_name);

}  // namespace hal::comm
