// ctest driver: runs `hal conformance` with the given arguments; exits 77
// (ctest's skip code here) when the requested device is not present, with the
// backend's reason, so an absent GPU skips instead of failing.
#include <fmt/format.h>

#include <string>

#include "conformance/cli.h"
#include "hal/registry.h"

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) != "--device") continue;
    const std::string name = argv[i + 1];
    for (hal::Device* d : hal::devices())
      if (d->name() == name) return hal::conformance::conformance_main(argc, argv);
    const std::string backend = name.substr(0, name.find(':'));
    std::string why = "not compiled in";
    for (const hal::BackendStatus& b : hal::backends())
      if (b.name == backend) why = b.available ? "no such device" : b.reason;
    fmt::print("SKIPPED: device {} is not present ({})\n", name, why);
    return 77;
  }
  return hal::conformance::conformance_main(argc, argv);
}
