// create_communicator: picks the engine from the device's backend and the
// launch (comm/launch.h), and bootstraps it.
#include "comm/communicator.h"

#include <fmt/format.h>

#include "comm/host_engine.h"
#include "comm/xccl/xccl_engine.h"
#include "hal/error.h"
#if HAL_HAVE_MPI
#include "comm/mpi/mpi_transport.h"
#endif

namespace hal::comm {
namespace {

std::unique_ptr<HostTransport> mpi_transport_or_refuse(const char* why) {
#if HAL_HAVE_MPI
  (void)why;
  return mpi::make_mpi_transport();
#else
  throw_unsupported("comm", "create_communicator",
                    fmt::format("{}: this hal was built without MPI (HAL_ENABLE_MPI=OFF; install libopenmpi-dev)", why));
#endif
}

std::unique_ptr<Communicator> create_host(Device& device, const Launch& launch) {
  if (launch.kind == Launch::Kind::mpi) return make_host_communicator(device, mpi_transport_or_refuse("cpu tensors"));
  if (launch.size == 1) return make_host_communicator(device, make_self_transport());
  // No transport of hal's own: the env launch only shares the NCCL/RCCL id.
  throw_unsupported("comm", "create_communicator",
                    fmt::format("cpu tensors across {} processes launched with HAL_RANK/HAL_WORLD_SIZE: they travel "
                                "over MPI, launch with mpirun instead",
                                launch.size));
}

}  // namespace

std::unique_ptr<Communicator> create_communicator(Device& device, const CommOptions& options) {
  const Launch launch = options.launch ? *options.launch : detect_launch();
  const std::string& backend = device.info().backend;
  std::string engine = options.engine;
  if (engine.empty()) engine = backend == "cuda" ? "nccl" : backend == "hip" ? "rccl" : "mpi";
  if (engine == "mpi") {
    if (!device.host_accessible())
      throw_unsupported("mpi", "create_communicator",
                        fmt::format("device {}: the MPI engine moves host memory (use nccl or rccl)", device.name()));
    return create_host(device, launch);
  }
  if (engine == "nccl" || engine == "rccl") {
    const char* serves = engine == "nccl" ? "cuda" : "hip";
    if (backend != serves)
      throw_invalid_argument("create_communicator", "engine", fmt::format("a {} device for {}", serves, engine),
                             device.name());
    std::unique_ptr<HostTransport> control;
    if (launch.kind == Launch::Kind::mpi) control = mpi_transport_or_refuse("the NCCL/RCCL id exchange under mpirun");
    return xccl::make_xccl_communicator(engine == "nccl" ? xccl::Flavor::nccl : xccl::Flavor::rccl, device, launch,
                                        std::move(control));
  }
  throw_invalid_argument("create_communicator", "engine", "mpi, nccl or rccl", fmt::format("'{}'", engine));
}

std::vector<EngineStatus> engine_status() {
  std::vector<EngineStatus> out;
  EngineStatus m{"mpi", "cpu", false, ""};
#if HAL_HAVE_MPI
  m.available = true;
  m.detail = mpi::library_version() + " (launch with mpirun; a single process runs one rank)";
#else
  m.available = true;
  m.detail = "built without MPI: one rank only (HAL_ENABLE_MPI=OFF)";
#endif
  out.push_back(m);
  for (xccl::Flavor f : {xccl::Flavor::nccl, xccl::Flavor::rccl}) {
    const xccl::Library& lib = xccl::library(f);
    out.push_back({std::string(xccl::flavor_name(f)), f == xccl::Flavor::nccl ? "cuda" : "hip", lib.loaded,
                   lib.loaded ? lib.version : lib.error});
  }
  return out;
}

}  // namespace hal::comm
