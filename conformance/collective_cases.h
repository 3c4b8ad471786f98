#pragma once
// `hal conformance --collectives`: the collectives of comm/ on one device
// kind, run by every rank of the job (mpirun -np N), each result scored
// against the fp64 oracle of every rank's Philox inputs with the bound of
// docs/accuracy.md ("Collectives"). Rank 0 prints one report of all ranks.
#include <string>

namespace hal::conformance {

// Returns the exit status: 0 all passed on every rank, 1 a failure anywhere.
int run_collective_conformance(const std::string& device, const std::string& op_filter, const std::string& dtype_filter);

}  // namespace hal::conformance
