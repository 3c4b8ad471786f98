#pragma once
// Exit status of the `hal` command line, shared by every subcommand (tools/,
// conformance/cli.cpp, bench/suite/bench_cli.cpp). README "Error contract"
// lists them for users:
//   0  success: the work asked for was done (and every check passed)
//   1  failure: a check failed (a conformance case, a bench case), or hal
//      reported an error (invalid argument, unsupported, out of memory,
//      device error), or nothing was tested
//   2  usage: the command line is wrong (unknown command, option, op, input
//      or attribute name; a value that does not parse)
//   3  I/O: a file could not be read or written (a full disk included) or is
//      not in the expected format
//   77 skipped: the device's backend is not available here (conformance and
//      bench; the code ctest and automake treat as "skipped")
#include "hal/error.h"

namespace hal {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitIo = 3;
inline constexpr int kExitSkipped = 77;

inline int exit_status_for(const Error& e) noexcept {
  return e.code() == ErrorCode::io_error ? kExitIo : kExitFailure;
}

}  // namespace hal
