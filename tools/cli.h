#pragma once
// The `hal` command line: shared pieces of the subcommands.
//
// Exit status (hal/exit_status.h): 0 success; 1 a hal::Error (its message on
// stderr) or a failed check; 2 a usage mistake (unknown subcommand, op,
// option, attribute or input name, a value that does not parse), reported by
// throwing UsageError; 3 an I/O error (hal::Error io_error); 77 skipped.
#include <stdexcept>
#include <string>

#include "hal/exit_status.h"

namespace hal::tools {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = hal::kExitOk;
inline constexpr int kExitError = hal::kExitFailure;
inline constexpr int kExitUsage = hal::kExitUsage;

// Subcommands: argv[0] is the subcommand's name; they return the exit status
// or throw (UsageError, hal::Error). Each prints its own help for --help.
int devices_main(int argc, char** argv);
int run_main(int argc, char** argv);
int model_main(int argc, char** argv);
int collective_main(int argc, char** argv);
int train_main(int argc, char** argv);

bool is_help_flag(const std::string& arg);

}  // namespace hal::tools
