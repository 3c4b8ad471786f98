#pragma once
// The `hal` command line: shared pieces of the subcommands.
//
// Exit status: 0 success; 1 a hal::Error (its message on stderr); 2 a usage
// mistake (unknown subcommand, op, option, attribute or input name, a value
// that does not parse), reported by throwing UsageError.
#include <stdexcept>
#include <string>

namespace hal::tools {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

// Subcommands: argv[0] is the subcommand's name; they return the exit status
// or throw (UsageError, hal::Error). Each prints its own help for --help.
int devices_main(int argc, char** argv);
int run_main(int argc, char** argv);
int model_main(int argc, char** argv);

bool is_help_flag(const std::string& arg);

}  // namespace hal::tools
