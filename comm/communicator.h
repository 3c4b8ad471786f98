#pragma once
// hal::comm::Communicator: the ranks of a job that exchange tensors of one
// device kind, created collectively (every rank calls create_communicator).
//
// It is also the engine interface, as hal::Device is the backend interface:
// each engine (MPI for cpu tensors in comm/host_engine.cpp over
// comm/mpi/, NCCL for cuda and RCCL for hip in comm/xccl/) implements the
// run_* hooks once. The public functions of comm/collective.h validate and
// make the ranks agree first; engines never see a call that failed either.
// The communicator must outlive every queued collective; it is not
// thread-safe (one thread issues its calls, in the same order on every rank).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/collective.h"
#include "comm/host_transport.h"
#include "comm/launch.h"
#include "hal/device.h"

namespace hal::comm {

struct GroupedCall;  // comm/group_plan.h
struct GroupPlan;

struct CommOptions {
  // Force an engine: "mpi" (cpu tensors), "nccl", "rccl"; empty picks the
  // engine of the device's backend.
  std::string engine;
  // How the job was started; detect_launch() (MPI, HAL_RANK/HAL_WORLD_SIZE or
  // a single process) when unset.
  std::optional<Launch> launch;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  Device& device() const noexcept { return *device_; }
  const std::string& engine() const noexcept { return engine_; }
  // The host channel on which ranks agree on each call before data moves;
  // nullptr when the job has none (NCCL/RCCL bootstrapped from environment
  // variables): then only local validation happens and a mismatch between
  // ranks is the engine's to detect.
  HostTransport* control() const noexcept { return control_; }

  // Engine hooks: arguments validated and agreed on by all ranks.
  virtual void run_all_reduce(Stream& s, const Tensor& x, const Tensor& y, ReduceOp op) = 0;
  virtual void run_all_gather(Stream& s, const Tensor& x, const Tensor& y) = 0;
  virtual void run_reduce_scatter(Stream& s, const Tensor& x, const Tensor& y, ReduceOp op) = 0;
  virtual void run_broadcast(Stream& s, const Tensor& buffer, int root) = 0;
  virtual void run_all_to_all(Stream& s, const Tensor& x, const Tensor& y, const std::vector<std::int64_t>& send_rows,
                              const std::vector<std::int64_t>& recv_rows) = 0;
  virtual void run_send(Stream& s, const Tensor& x, int peer) = 0;
  virtual void run_recv(Stream& s, const Tensor& y, int peer) = 0;
  virtual void run_barrier(Stream& s) = 0;
  // A group's calls (comm/group.h), agreed on by all ranks. Default (the MPI
  // and self engines): the defined order of run_group_in_order; NCCL/RCCL
  // issue them between ncclGroupStart and ncclGroupEnd.
  virtual void run_group(std::vector<GroupedCall>& calls, const GroupPlan& plan);

 protected:
  Communicator(Device& device, std::string engine, int rank, int size)
      : device_(&device), engine_(std::move(engine)), rank_(rank), size_(size) {}
  // The engine owns its control channel; it lives as long as the engine.
  void set_control(HostTransport* control) noexcept { control_ = control; }

 private:
  Device* device_;
  std::string engine_;
  int rank_;
  int size_;
  HostTransport* control_ = nullptr;
};

// Collective: every rank of the job calls it with its own device. Throws
// unsupported (with the reason) when the device's engine is not available:
// MPI not built or the job not launched by mpirun for cpu tensors with more
// than one rank; libnccl.so.2 / librccl.so.1 missing for GPUs.
std::unique_ptr<Communicator> create_communicator(Device& device, const CommOptions& options = {});

// What `hal devices` prints: each engine and whether this binary can use it.
struct EngineStatus {
  std::string name;       // "mpi", "nccl", "rccl"
  std::string serves;     // "cpu", "cuda", "hip"
  bool available = false;
  std::string detail;     // version, or why not
};
std::vector<EngineStatus> engine_status();

}  // namespace hal::comm
