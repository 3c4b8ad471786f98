#pragma once
// libnccl.so.2 / librccl.so.1, loaded once at first use with dlopen, so one
// hal binary starts where they are absent and says why (`hal devices`).
// Search order: $HAL_NCCL_LIBRARY / $HAL_RCCL_LIBRARY (a path), the loader's
// path, then the vendor's default install ($CUDA_HOME/lib64,
// /usr/local/cuda/lib64; $ROCM_PATH/lib, /opt/rocm/lib).
#include <string>
#include <string_view>

#include "comm/xccl/xccl_api.h"

namespace hal::comm::xccl {

enum class Flavor { nccl, rccl };
std::string_view flavor_name(Flavor f);

struct Library {
  bool loaded = false;
  std::string path;     // what dlopen opened
  std::string version;  // "NCCL 2.27.7" from ncclGetVersion
  std::string error;    // why not loaded
  Api api{};
};

// Loaded once per process (the first call decides).
const Library& library(Flavor f);
// A fresh attempt, for tests of the search and its failure messages.
Library load_library(Flavor f);

}  // namespace hal::comm::xccl
