#pragma once
// The one place MPI error codes become hal::Error (device_error, with the MPI
// call, its context and MPI_Error_string's text). hal's communicators set
// MPI_ERRORS_RETURN, so MPI reports instead of aborting the job.
#include <string_view>

namespace hal::comm::mpi {

void check(int mpi_result, std::string_view call, std::string_view context);

}  // namespace hal::comm::mpi
