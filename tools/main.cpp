// The `hal` command-line tool: a table of subcommands and the error policy.
//
// Extension point: a new subcommand is one entry in kSubcommands pointing to
// an `int name_main(int argc, char** argv)` (argv[0] is the subcommand name),
// declared in tools/cli.h. `conformance` and `bench` are added this way.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "hal/error.h"
#include "bench/suite/bench_cli.h"
#include "conformance/cli.h"
#include "tools/cli.h"

namespace hal::tools {

bool is_help_flag(const std::string& arg) { return arg == "--help" || arg == "-h"; }

namespace {

struct Subcommand {
  std::string_view name;
  std::string_view help;  // one line for the top-level usage
  int (*main)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"devices", "list devices and backends (--json for machine-readable output)", devices_main},
    {"run", "run one op on .npy files: hal run OP --device DEV --in NAME=FILE ... --out y=FILE", run_main},
    {"model", "Hugging Face checkpoints: hal model info|run|compare|bench DIR ... (hal model --help)", model_main},
    {"conformance", "check a device against the fp64 oracle: hal conformance [--device DEV] [--op OP] ...",
     hal::conformance::conformance_main},
    {"bench", "benchmark ops beside the vendor library: hal bench [--device DEV] [--op OP] ...",
     hal::bench::bench_main},
    {"collective", "one collective on .npy files: mpirun -np N hal collective OP --in x=F --out y=F (--help)",
     collective_main},
    {"train", "train a small Llama-style model on a text file: hal train --device DEV --steps N (--help)", train_main},
};

void print_usage(std::FILE* to) {
  std::string text =
      "usage: hal <command> [options]\n"
      "       hal <command> --help\n"
      "\n"
      "commands:\n";
  for (const Subcommand& s : kSubcommands) text += fmt::format("  {:<12} {}\n", s.name, s.help);
  text +=
      "\n"
      "Exit status: 0 success, 1 error reported by hal or a failed check, 2 usage error,\n"
      "3 I/O error (a file not readable or writable, a full disk), 77 skipped (backend absent).\n"
      "HAL_DEVICE sets the default device (cpu, cuda:N, hip:N).\n";
  std::fputs(text.c_str(), to);
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  if (is_help_flag(cmd) || cmd == "help") {
    print_usage(stdout);
    return kExitOk;
  }
  for (const Subcommand& s : kSubcommands)
    if (s.name == cmd) return s.main(argc - 1, argv + 1);
  throw UsageError(fmt::format("unknown command '{}' (see hal --help)", cmd));
}

}  // namespace
}  // namespace hal::tools

// A report printed to a full disk (hal conformance > /dev/full) is work not
// done: stdout's buffered bytes are flushed here and a failure is an I/O error.
int checked_stdout(int status) {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "hal: I/O error: standard output: write failed (%s)\n", std::strerror(errno ? errno : EIO));
    return hal::kExitIo;
  }
  return status;
}

int main(int argc, char** argv) {
  using namespace hal::tools;
  try {
    return checked_stdout(dispatch(argc, argv));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "hal: error: %s\n", e.what());
    return kExitUsage;
  } catch (const hal::Error& e) {
    std::fprintf(stderr, "hal: %s: %s\n", std::string(hal::error_code_name(e.code())).c_str(), e.what());
    return hal::exit_status_for(e);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "hal: out of memory: a host allocation failed\n");
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hal: error: %s\n", e.what());
    return kExitError;
  }
}
