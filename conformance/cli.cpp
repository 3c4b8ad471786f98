#include "conformance/cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include "conformance/registry.h"
#include "hal/io/safetensors.h"
#include "conformance/collective_cases.h"
#include "hal/error.h"
#include "hal/exit_status.h"
#include "hal/io/json_writer.h"
#include "hal/io/output_file.h"
#include "hal/registry.h"

namespace hal::conformance {

using io::NamedTensor;
using io::read_safetensors;
using io::SafetensorsFile;
using io::write_safetensors;

namespace {

void progress_line(std::size_t done, std::size_t total, const CaseResult& r, bool tty) {
  if (tty) {
    constexpr int kWidth = 30;
    const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
    fmt::print(stderr, "\r[{}{}] {}/{} {:<60.60}", std::string(static_cast<std::size_t>(filled), '#'),
               std::string(static_cast<std::size_t>(kWidth - filled), ' '), done, total, r.name);
    if (done == total) fmt::print(stderr, "\n");
  } else if (done % 50 == 0 || done == total) {
    fmt::print(stderr, "conformance: {}/{} cases done\n", done, total);
  }
  std::fflush(stderr);
}

std::string score_text(double s) { return std::isinf(s) ? "inf" : fmt::format("{:.3g}", s); }

void print_summary(const std::vector<CaseResult>& results, const std::string& device, double seconds) {
  struct Row {
    int passed = 0, failed = 0, skipped = 0, unsupported = 0, xfail = 0;
    double worst = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  Row total;
  for (const CaseResult& r : results) {
    for (Row* row : {&rows[{r.op, r.dtype}], &total}) {
      switch (r.status) {
        case Status::passed: ++row->passed; break;
        case Status::failed: ++row->failed; break;
        case Status::skipped: ++row->skipped; break;
        case Status::unsupported: ++row->unsupported; break;
        case Status::expected_failure: ++row->xfail; break;
      }
      if (r.status == Status::passed || r.status == Status::failed) row->worst = std::max(row->worst, r.score.score);
    }
  }
  fmt::print("conformance on {}\n", device);
  fmt::print("{:<14} {:<6} {:>6} {:>6} {:>7} {:>11} {:>6} {:>12}\n", "op", "dtype", "passed", "failed", "skipped",
             "unsupported", "xfail", "worst e/bnd");
  for (const auto& [key, row] : rows)
    fmt::print("{:<14} {:<6} {:>6} {:>6} {:>7} {:>11} {:>6} {:>12}\n", key.first, key.second, row.passed, row.failed,
               row.skipped, row.unsupported, row.xfail, score_text(row.worst));
  for (const CaseResult& r : results)
    if (r.status == Status::failed) fmt::print("FAILED {}: {}\n", r.name, r.reason);
  fmt::print("total: {} passed, {} failed, {} skipped, {} unsupported, {} expected failures in {:.1f} s\n", total.passed,
             total.failed, total.skipped, total.unsupported, total.xfail, seconds);
}

void usage(std::FILE* to) {
  fmt::print(to,
             "usage: hal conformance [--device DEV] [--op OP] [--dtype DT] [--json FILE]\n"
             "                       [--record FILE] [--compare FILE] [--list]\n"
             "       mpirun -np N hal conformance --collectives [--device DEV] [--op OP] [--dtype DT]\n"
             "exit status: 0 every case that ran passed (and at least one ran), 1 a case failed,\n"
             "no case ran or the device is not here, 2 usage, 3 I/O error, 77 backend not available\n");
}

bool is_present(const std::string& device) {
  for (Device* d : hal::devices())
    if (d->name() == device) return true;
  return false;
}

}  // namespace

std::vector<CaseResult> run_cases(const std::vector<const Case*>& cases, const std::string& device,
                                  const RunOptions& options, bool progress) {
  std::vector<CaseResult> out;
  const bool tty = isatty(2) != 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    out.push_back(run_case(*cases[i], device, options));
    if (progress) progress_line(i + 1, cases.size(), out.back(), tty);
  }
  return out;
}

void write_results_json(const std::string& path, const std::vector<CaseResult>& results) {
  std::ostringstream f;
  auto num = [](double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string("null"); };
  f << "[\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const CaseResult& r = results[i];
    f << fmt::format(
        "  {{\"name\": \"{}\", \"op\": \"{}\", \"dtype\": \"{}\", \"device\": \"{}\", \"status\": \"{}\", "
        "\"score\": {}, \"nmse\": {}, \"max_ulp\": {}, \"seconds\": {:.4f}, \"reason\": \"{}\"}}{}\n",
        io::json_escape(r.name), io::json_escape(r.op), r.dtype, io::json_escape(r.device), status_name(r.status), num(r.score.score),
        num(r.score.nmse), r.score.max_ulp, r.seconds, io::json_escape(r.reason), i + 1 < results.size() ? "," : "");
  }
  f << "]\n";
  io::write_text_file(path, f.str());
}

void write_record(const std::string& path, const std::string& device, const std::vector<CaseResult>& results) {
  SafetensorsFile file;
  file.metadata["format"] = "hal-conformance-record-1";
  file.metadata["device"] = device;
  for (Device* d : hal::devices())
    if (d->name() == device) file.metadata["model"] = d->info().model, file.metadata["arch"] = d->info().arch;
  std::string defs = "[";
  for (const CaseResult& r : results) {
    if (r.status != Status::passed && r.status != Status::failed && r.status != Status::expected_failure) continue;
    if (r.outputs.empty()) continue;  // failed before producing output
    defs += fmt::format("{}{{\"name\":\"{}\",\"op\":\"{}\",\"dtype\":\"{}\",\"out_dtype\":\"{}\",\"shape\":\"{}\",\"outputs\":{},\"status\":\"{}\"}}",
                        defs.size() > 1 ? "," : "", io::json_escape(r.name), r.op, r.dtype, dtype_name(r.outputs[0].dtype),
                        r.outputs[0].shape.str(), r.outputs.size(), status_name(r.status));
    for (std::size_t o = 0; o < r.outputs.size(); ++o)
      file.tensors.push_back({recorded_name(r.name, o), r.outputs[o].dtype, r.outputs[o].shape, r.outputs[o].bytes});
  }
  file.metadata["cases"] = defs + "]";
  write_safetensors(path, file);
}

std::function<const RecordedOutput*(const std::string&)> load_record(const std::string& path, std::string* recorded_device) {
  const SafetensorsFile file = read_safetensors(path);
  // A recording without outputs would skip every case: a comparison that
  // compares nothing must not pass.
  if (file.tensors.empty())
    throw Error(ErrorCode::io_error, fmt::format("{}: the recording holds no tensors (nothing to compare against)", path));
  auto map = std::make_shared<std::map<std::string, RecordedOutput>>();
  for (const NamedTensor& t : file.tensors) (*map)[t.name] = RecordedOutput{t.dtype, t.shape, t.bytes};
  if (recorded_device) {
    const auto it = file.metadata.find("device");
    *recorded_device = it == file.metadata.end() ? "?" : it->second;
  }
  return [map](const std::string& name) -> const RecordedOutput* {
    const auto it = map->find(name);
    return it == map->end() ? nullptr : &it->second;
  };
}

int conformance_main(int argc, char** argv) {
  std::string device, op, dtype, json, record, compare;
  bool list = false, collectives = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) {
        fmt::print(stderr, "hal conformance: {} needs a value\n", a);
        return false;
      }
      dst = argv[++i];
      return true;
    };
    bool ok = true;
    if (a == "--device") ok = value(device);
    else if (a == "--op") ok = value(op);
    else if (a == "--dtype") ok = value(dtype);
    else if (a == "--json") ok = value(json);
    else if (a == "--record") ok = value(record);
    else if (a == "--compare") ok = value(compare);
    else if (a == "--list") list = true;
    else if (a == "--collectives") collectives = true;
    else if (a == "--help" || a == "-h") return usage(stdout), 0;
    else if (a == "conformance" && i == 1) continue;  // tolerate being handed the subcommand
    else {
      fmt::print(stderr, "hal conformance: unknown argument '{}'\n", a);
      ok = false;
    }
    if (!ok) return usage(stderr), 2;
  }
  if (device.empty()) {
    const char* env = std::getenv("HAL_DEVICE");
    device = env && *env ? env : "cpu";
  }
  if (collectives) return run_collective_conformance(device, op, dtype);
  const std::vector<const Case*> cases = select_cases(op, dtype);
  if (list) {
    for (const Case* c : cases) fmt::print("{}\n", c->name);
    return 0;
  }
  if (cases.empty()) {
    fmt::print(stderr, "hal conformance: no case matches --op '{}' --dtype '{}'\n", op, dtype);
    return 2;
  }
  // A device that is not here would skip every case: say so instead of
  // passing. An absent backend is a skip (77), a name that names nothing an
  // error.
  if (!is_present(device)) {
    const std::string backend = device.substr(0, device.find(':'));
    for (const BackendStatus& b : hal::backends())
      if (b.name == backend && !b.available) {
        fmt::print(stderr, "hal conformance: skipped: {} is not available here ({})\n", b.name, b.reason);
        return kExitSkipped;
      }
    std::string names;
    for (Device* d : hal::devices()) names += (names.empty() ? "" : ", ") + d->name();
    fmt::print(stderr, "hal conformance: no device '{}' (devices here: {})\n", device, names.empty() ? "none" : names);
    return kExitFailure;
  }
  try {
    RunOptions options;
    if (!compare.empty()) {
      std::string from;
      options.recorded = load_record(compare, &from);
      fmt::print("comparing {} against the recording of {} from '{}' (bound: 2x the contract)\n", device, from, compare);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<CaseResult> results = run_cases(cases, device, options, true);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_summary(results, device, secs);
    if (!json.empty()) write_results_json(json, results);
    if (!record.empty()) write_record(record, device, results);
    for (const CaseResult& r : results)
      if (r.status == Status::failed) return kExitFailure;
    // Every case skipped or unsupported (a recording without these cases, a
    // backend that declines them all): nothing was tested.
    const bool any_ran = std::any_of(results.begin(), results.end(), [](const CaseResult& r) {
      return r.status == Status::passed || r.status == Status::expected_failure;
    });
    if (!any_ran) {
      fmt::print(stderr, "hal conformance: no case ran on {} (all {} skipped or unsupported): nothing was tested\n",
                 device, results.size());
      return kExitFailure;
    }
    return kExitOk;
  } catch (const Error& e) {
    fmt::print(stderr, "hal conformance: {}: {}\n", error_code_name(e.code()), e.what());
    return exit_status_for(e);
  }
}

}  // namespace hal::conformance
