#include "comm/mpi/mpi_status.h"

#include <fmt/format.h>
#include <mpi.h>

#include "hal/error.h"

namespace hal::comm::mpi {

void check(int mpi_result, std::string_view call, std::string_view context) {
  if (mpi_result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(mpi_result, text, &length) != MPI_SUCCESS) length = 0;
  int error_class = 0;
  MPI_Error_class(mpi_result, &error_class);
  const ErrorCode code = error_class == MPI_ERR_NO_MEM ? ErrorCode::out_of_memory : ErrorCode::device_error;
  throw Error(code, fmt::format("mpi: {} failed ({}): {} (error {})", call, context,
                                length > 0 ? std::string(text, static_cast<std::size_t>(length)) : "no message",
                                mpi_result));
}

}  // namespace hal::comm::mpi
