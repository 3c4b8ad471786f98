// One-process tests of comm/: launch detection, the rendezvous file (real
// processes, forked), engine loading and its refusals, and the one-rank
// NCCL/RCCL communicator where a GPU is present (skipped otherwise).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "comm/launch.h"
#include "comm/rendezvous.h"
#include "comm/xccl/xccl_library.h"
#include "hal/error.h"
#include "hal/registry.h"

using namespace hal;
using namespace hal::comm;

namespace {

// Sets variables for one test and restores the environment after.
class ScopedEnv {
 public:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

void clear_launch(ScopedEnv& env) {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK", "PMIX_SIZE",
                        "HAL_RANK", "HAL_WORLD_SIZE", "HAL_RENDEZVOUS"})
    env.set(v, nullptr);
}

std::string error_of(const std::function<void()>& f, ErrorCode* code = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CommLaunch, DetectsMpiEnvAndSingle) {
  ScopedEnv env;
  clear_launch(env);
  EXPECT_EQ(detect_launch().kind, Launch::Kind::single);
  env.set("HAL_RANK", "2");
  env.set("HAL_WORLD_SIZE", "3");
  env.set("HAL_RENDEZVOUS", "/tmp/x");
  Launch l = detect_launch();
  EXPECT_EQ(l.kind, Launch::Kind::env);
  EXPECT_EQ(l.rank, 2);
  EXPECT_EQ(l.size, 3);
  EXPECT_EQ(l.rendezvous, "/tmp/x");
  env.set("OMPI_COMM_WORLD_RANK", "1");
  env.set("OMPI_COMM_WORLD_SIZE", "4");
  l = detect_launch();  // mpirun wins over inherited HAL_* variables
  EXPECT_EQ(l.kind, Launch::Kind::mpi);
  EXPECT_EQ(l.rank, 1);
  EXPECT_EQ(l.size, 4);
}

TEST(CommLaunch, RefusesBadVariablesByName) {
  ScopedEnv env;
  clear_launch(env);
  env.set("HAL_RANK", "3");
  env.set("HAL_WORLD_SIZE", "3");
  env.set("HAL_RENDEZVOUS", "/tmp/x");
  EXPECT_NE(error_of([] { detect_launch(); }).find("HAL_RANK"), std::string::npos);
  env.set("HAL_RANK", "1x");
  EXPECT_NE(error_of([] { detect_launch(); }).find("'1x'"), std::string::npos);
  env.set("HAL_RANK", "0");
  env.set("HAL_RENDEZVOUS", nullptr);
  EXPECT_NE(error_of([] { detect_launch(); }).find("HAL_RENDEZVOUS"), std::string::npos);
  env.set("HAL_WORLD_SIZE", nullptr);
  EXPECT_NE(error_of([] { detect_launch(); }).find("HAL_WORLD_SIZE"), std::string::npos);
}

TEST(CommRendezvous, ThreeProcessesShareRankZerosBytes) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("hal-rdv-" + std::to_string(::getpid()))).string();
  const std::vector<std::uint8_t> id = {1, 2, 3, 250, 0, 7};
  std::vector<pid_t> children;
  for (int rank = 1; rank < 3; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      int status = 1;
      try {
        status = rendezvous_share(path, rank, 3, {}, 30.0) == id ? 0 : 3;
      } catch (...) {
        status = 2;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  EXPECT_EQ(rendezvous_share(path, 0, 3, id, 30.0), id);
  for (pid_t pid : children) {
    int status = -1;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a reader got other bytes or failed";
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "rank 0 removes the file";
}

TEST(CommRendezvous, TimesOutAndRefusesStaleFiles) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("hal-rdv-stale-" + std::to_string(::getpid()))).string();
  ErrorCode code{};
  EXPECT_NE(error_of([&] { rendezvous_share(path, 1, 2, {}, 0.05); }, &code).find("timed out"), std::string::npos);
  EXPECT_EQ(code, ErrorCode::io_error);
  { std::ofstream(path) << "old"; }
  EXPECT_NE(error_of([&] { rendezvous_share(path, 0, 2, {1}, 0.05); }).find("exists already"), std::string::npos);
  EXPECT_NE(error_of([&] { rendezvous_share(path, 1, 2, {}, 0.05); }).find("does not start with"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(CommEngines, StatusListsEveryEngineWithAReason) {
  const auto status = engine_status();
  ASSERT_EQ(status.size(), 3u);
  EXPECT_EQ(status[0].name, "mpi");
  EXPECT_TRUE(status[0].available);
  for (const EngineStatus& s : status) EXPECT_FALSE(s.detail.empty()) << s.name << " says nothing";
  EXPECT_EQ(status[1].name, "nccl");
  EXPECT_EQ(status[2].name, "rccl");
}

TEST(CommEngines, MissingLibraryIsAReasonNotACrash) {
  ScopedEnv env;
  env.set("HAL_NCCL_LIBRARY", "/nonexistent/libnccl.so.2");
  env.set("HAL_RCCL_LIBRARY", "/nonexistent/librccl.so.1");
  for (xccl::Flavor f : {xccl::Flavor::nccl, xccl::Flavor::rccl}) {
    const xccl::Library lib = xccl::load_library(f);
    EXPECT_FALSE(lib.loaded);
    EXPECT_NE(lib.error.find("/nonexistent/"), std::string::npos) << lib.error;
  }
}

TEST(CommEngines, NcclLoadsWhereTheCudaInstallShipsIt) {
  const xccl::Library& lib = xccl::library(xccl::Flavor::nccl);
  if (!lib.loaded) GTEST_SKIP() << lib.error;
  EXPECT_EQ(lib.version.rfind("NCCL 2.", 0), 0u) << lib.version;
}

TEST(CommEngines, GpuEnginesRefuseTheCpu) {
  ScopedEnv env;
  clear_launch(env);
  for (const char* engine : {"nccl", "rccl"}) {
    ErrorCode code{};
    const std::string msg = error_of([&] { CommOptions o;
      o.engine = engine;
      create_communicator(hal::device("cpu"), o); }, &code);
    EXPECT_EQ(code, ErrorCode::invalid_argument) << msg;
    EXPECT_NE(msg.find(engine), std::string::npos) << msg;
  }
  EXPECT_NE(error_of([&] { CommOptions o;
    o.engine = "gloo";
    create_communicator(hal::device("cpu"), o); }).find("'gloo'"),
            std::string::npos);
}

TEST(CommEngines, CpuAcrossEnvLaunchedProcessesNeedsMpi) {
  Launch l;
  l.kind = Launch::Kind::env;
  l.rank = 0;
  l.size = 2;
  l.rendezvous = "/tmp/unused";
  ErrorCode code{};
  const std::string msg = error_of([&] { CommOptions o;
    o.launch = l;
    create_communicator(hal::device("cpu"), o); }, &code);
  EXPECT_EQ(code, ErrorCode::unsupported);
  EXPECT_NE(msg.find("mpirun"), std::string::npos) << msg;
}

// A one-rank NCCL / RCCL communicator is legal: run it where a GPU is.
TEST(CommEngines, OneRankGpuCommunicatorAllReduces) {
  ScopedEnv env;
  clear_launch(env);
  int ran = 0;
  for (Device* d : hal::devices()) {
    const std::string& backend = d->info().backend;
    if (backend != "cuda" && backend != "hip") continue;
    const auto flavor = backend == "cuda" ? xccl::Flavor::nccl : xccl::Flavor::rccl;
    if (!xccl::library(flavor).loaded) continue;
    auto comm = create_communicator(*d);
    Stream s(*d);
    std::vector<float> host = {1.5f, -2.0f, 3.25f};
    void* mem = d->allocate(host.size() * sizeof(float));
    Tensor t = Tensor::contiguous(mem, d, DType::f32, Shape{3});
    s.upload(t, host.data());
    all_reduce(*comm, s, t, t, ReduceOp::sum);
    std::vector<float> out(3);
    s.download(out.data(), t);
    s.synchronize();
    d->deallocate(mem);
    EXPECT_EQ(out, host) << d->name() << ": a one-rank sum is the input";
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no GPU with its collective library here";
}

TEST(CommLaunch, LocalRankPicksEachRanksGpu) {
  ScopedEnv env;
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"}) env.set(v, nullptr);
  EXPECT_EQ(expand_local_rank("cuda:{local_rank}"), "cuda:0");
  env.set("LOCAL_RANK", "3");
  EXPECT_EQ(expand_local_rank("cuda:{local_rank}"), "cuda:3");
  env.set("OMPI_COMM_WORLD_LOCAL_RANK", "5");  // mpirun's wins
  EXPECT_EQ(expand_local_rank("hip:{local_rank}"), "hip:5");
  EXPECT_EQ(expand_local_rank("cpu"), "cpu");
}
