#include "comm/xccl/xccl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <vector>

namespace hal::comm::xccl {
namespace {

std::vector<std::string> candidates(Flavor f) {
  std::vector<std::string> c;
  const char* override_var = f == Flavor::nccl ? "HAL_NCCL_LIBRARY" : "HAL_RCCL_LIBRARY";
  if (const char* p = std::getenv(override_var); p && *p) return {p};
  const std::string so = f == Flavor::nccl ? "libnccl.so.2" : "librccl.so.1";
  c.push_back(so);
  const char* home_var = f == Flavor::nccl ? "CUDA_HOME" : "ROCM_PATH";
  const char* sub = f == Flavor::nccl ? "lib64" : "lib";
  if (const char* home = std::getenv(home_var); home && *home) c.push_back(fmt::format("{}/{}/{}", home, sub, so));
  c.push_back(f == Flavor::nccl ? "/usr/local/cuda/lib64/" + so : "/opt/rocm/lib/" + so);
  return c;
}

template <class Fn>
bool bind(void* lib, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && missing.empty()) missing = name;
  return fn != nullptr;
}

}  // namespace

Library load_library(Flavor f) {
  Library l;
  void* lib = nullptr;
  std::string tried;
  for (const std::string& path : candidates(f)) {
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      l.path = path;
      break;
    }
    const char* why = dlerror();
    tried += fmt::format("{}{} ({})", tried.empty() ? "" : "; ", path, why ? why : "not found");
  }
  if (!lib) {
    l.error = fmt::format("{} not loaded: {}", f == Flavor::nccl ? "libnccl.so.2" : "librccl.so.1", tried);
    return l;
  }
  std::string missing;
  Api& a = l.api;
  bind(lib, "ncclGetVersion", a.GetVersion, missing);
  bind(lib, "ncclGetErrorString", a.GetErrorString, missing);
  bind(lib, "ncclGetUniqueId", a.GetUniqueId, missing);
  bind(lib, "ncclCommInitRank", a.CommInitRank, missing);
  bind(lib, "ncclCommDestroy", a.CommDestroy, missing);
  bind(lib, "ncclCommGetAsyncError", a.CommGetAsyncError, missing);
  bind(lib, "ncclAllReduce", a.AllReduce, missing);
  bind(lib, "ncclAllGather", a.AllGather, missing);
  bind(lib, "ncclReduceScatter", a.ReduceScatter, missing);
  bind(lib, "ncclBroadcast", a.Broadcast, missing);
  bind(lib, "ncclSend", a.Send, missing);
  bind(lib, "ncclRecv", a.Recv, missing);
  bind(lib, "ncclGroupStart", a.GroupStart, missing);
  bind(lib, "ncclGroupEnd", a.GroupEnd, missing);
  if (!missing.empty()) {
    l.error = fmt::format("{} lacks {} (too old? hal needs NCCL/RCCL 2.10+)", l.path, missing);
    return l;
  }
  int v = 0;
  if (a.GetVersion(&v) != ncclSuccess) {
    l.error = fmt::format("{}: ncclGetVersion failed", l.path);
    return l;
  }
  // NCCL_VERSION_CODE since 2.9: major * 10000 + minor * 100 + patch.
  l.version = fmt::format("{} {}.{}.{} ({})", f == Flavor::nccl ? "NCCL" : "RCCL", v / 10000, v / 100 % 100, v % 100,
                          l.path);
  if (v < 21000) {
    l.error = fmt::format("{}: version {} is older than 2.10 (hal needs ncclAvg)", l.path, v);
    return l;
  }
  l.loaded = true;
  return l;
}

std::string_view flavor_name(Flavor f) { return f == Flavor::nccl ? "nccl" : "rccl"; }

const Library& library(Flavor f) {
  static const Library nccl = load_library(Flavor::nccl);
  static const Library rccl = load_library(Flavor::rccl);
  return f == Flavor::nccl ? nccl : rccl;
}

}  // namespace hal::comm::xccl
