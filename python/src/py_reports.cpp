// hal.conformance.run(...) and hal.bench.run(...): the suite and the
// benchmarks of the CLI, run in-process; their JSON reports (the files of
// `--json`) come back as Python objects.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "bench/suite/bench_cli.h"
#include "conformance/cli.h"
#include "hal/error.h"
#include "python/src/py_tensor.h"

namespace hal::python {

namespace {

using Main = int (*)(int, char**);

// Runs a CLI entry point with `--json FILE` and returns (exit status, the parsed report).
py::tuple run_with_json(Main main, const std::string& command, std::vector<std::string> args) {
  std::string path = (std::filesystem::temp_directory_path() / fmt::format("hal-py-{}-XXXXXX", command)).string();
  const int fd = mkstemp(path.data());
  if (fd < 0) throw Error(ErrorCode::io_error, fmt::format("hal.{}.run: cannot create a temporary file", command));
  close(fd);
  args.insert(args.begin(), command);
  args.push_back("--json");
  args.push_back(path);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int status = 0;
  {
    py::gil_scoped_release release;
    status = main(static_cast<int>(argv.size()), argv.data());
    std::fflush(stdout);
  }
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  std::filesystem::remove(path);
  if (status == 2 || text.str().empty())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("hal.{}.run: nothing ran for arguments '{}' (exit status {}; see stderr)", command,
                            fmt::join(args, " "), status));
  return py::make_tuple(status, py::module_::import("json").attr("loads")(text.str()));
}

void add_option(std::vector<std::string>& args, const char* flag, const py::object& v) {
  if (v.is_none()) return;
  args.push_back(flag);
  args.push_back(py::isinstance<Device>(v) ? v.cast<const Device&>().name() : py::str(v).cast<std::string>());
}

}  // namespace

void register_reports(py::module_& m) {
  py::module_ conf = m.def_submodule("conformance", "The conformance suite against the fp64 oracle");
  conf.def("run", [](const py::object& device, const py::object& op, const py::object& dtype) {
    std::vector<std::string> args;
    add_option(args, "--device", device);
    add_option(args, "--op", op);
    add_option(args, "--dtype", dtype);
    py::tuple r = run_with_json(&conformance::conformance_main, "conformance", args);
    return py::object(r[1]);
  }, py::arg("device") = py::none(), py::arg("op") = py::none(), py::arg("dtype") = py::none(),
     "Runs the suite's cases matching op/dtype (globs) on device; returns the list of case results of "
     "`hal conformance --json` (status 'passed', 'failed', 'unsupported', ...).");

  py::module_ bench = m.def_submodule("bench", "Benchmarks beside the vendor library");
  bench.def("run", [](const py::object& device, const py::object& op, const py::object& dtype, const py::object& shape,
                      bool quick, bool vendor) {
    std::vector<std::string> args;
    add_option(args, "--device", device);
    add_option(args, "--op", op);
    add_option(args, "--dtype", dtype);
    add_option(args, "--shape", shape);
    if (quick) args.push_back("--quick");
    if (!vendor) args.push_back("--no-vendor");
    py::tuple r = run_with_json(&hal::bench::bench_main, "bench", args);
    if (r[0].cast<int>() != 0)
      throw Error(ErrorCode::device_error, fmt::format("hal.bench.run: the benchmark failed (exit status {})",
                                                       r[0].cast<int>()));
    return py::object(r[1]);
  }, py::arg("device") = py::none(), py::arg("op") = py::none(), py::arg("dtype") = py::none(),
     py::arg("shape") = py::none(), py::arg("quick") = false, py::arg("vendor") = true,
     "Runs `hal bench` in-process; returns its --json report.");
  py::module_ sys_modules = py::module_::import("sys");
  sys_modules.attr("modules")["hal.conformance"] = conf;
  sys_modules.attr("modules")["hal.bench"] = bench;
}

}  // namespace hal::python
