// Group calls (comm/group.h): the open group of this thread, the agreement at
// group_end and the hand-over to the engine.
#include "comm/group.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>

#include "comm/communicator.h"
#include "comm/group_plan.h"
#include "hal/error.h"

namespace hal::comm {
namespace {

struct OpenGroup {
  Communicator* comm = nullptr;
  std::vector<GroupedCall> calls;
};

// One thread issues a communicator's calls (comm/communicator.h), so the open
// group is per thread.
thread_local std::optional<OpenGroup> t_open;

std::string describe(const Communicator& c) {
  return fmt::format("the {} communicator of rank {} of {} at {}", c.engine(), c.rank(), c.size(),
                     static_cast<const void*>(&c));
}

// Every rank's signatures, in issue order: counts first, then the lists
// padded to the longest.
std::vector<std::vector<CallSignature>> gather_lists(HostTransport& control, const std::vector<GroupedCall>& calls) {
  const std::size_t P = static_cast<std::size_t>(control.size());
  const std::int64_t n = static_cast<std::int64_t>(calls.size());
  std::vector<std::int64_t> counts(P);
  control.all_gather(&n, sizeof n, counts.data());
  const std::size_t longest = static_cast<std::size_t>(*std::max_element(counts.begin(), counts.end()));
  std::vector<std::vector<CallSignature>> out(P);
  if (longest == 0) return out;
  std::vector<CallSignature> mine(longest);
  for (std::size_t k = 0; k < calls.size(); ++k) mine[k] = calls[k].sig;
  std::vector<CallSignature> all(longest * P);
  control.all_gather(mine.data(), longest * sizeof(CallSignature), all.data());
  for (std::size_t r = 0; r < P; ++r)
    out[r].assign(all.begin() + static_cast<std::ptrdiff_t>(r * longest),
                  all.begin() + static_cast<std::ptrdiff_t>(r * longest + static_cast<std::size_t>(counts[r])));
  return out;
}

}  // namespace

void group_start(Communicator& comm) {
  if (t_open)
    throw_invalid_argument("group_start", "comm", "no group open on this thread (groups do not nest)",
                           t_open->comm == &comm ? std::string("a group already open on this communicator")
                                                 : fmt::format("a group open on {}", describe(*t_open->comm)));
  t_open.emplace();
  t_open->comm = &comm;
}

bool group_open(const Communicator& comm) { return t_open && t_open->comm == &comm; }

bool defer_to_open_group(Communicator& comm, const CallSignature& sig, std::function<void()> run) {
  if (!t_open) return false;
  const char* op = call_kind_name(sig.kind);
  if (t_open->comm != &comm)
    throw_invalid_argument(op, "comm", fmt::format("{} (whose group is open)", describe(*t_open->comm)),
                           describe(comm));
  GroupedCall call{sig, std::move(run)};
  if (!call.sig.error[0] && (sig.kind == CallKind::all_to_all || sig.kind == CallKind::barrier))
    call.sig.set_error(fmt::format("{}: not allowed inside a group ({}); call it before group_start or after group_end",
                                   op,
                                   sig.kind == CallKind::barrier ? "a barrier among calls that run together has no meaning"
                                                                 : "its counts need a second agreement round"));
  t_open->calls.push_back(std::move(call));
  return true;
}

void group_end(Communicator& comm) {
  if (!t_open) throw_invalid_argument("group_end", "comm", "an open group (call group_start first)", "no group open");
  if (t_open->comm != &comm)
    throw_invalid_argument("group_end", "comm", fmt::format("{} (whose group is open)", describe(*t_open->comm)),
                           describe(comm));
  // The group is closed whatever happens next: an error below leaves none open.
  std::vector<GroupedCall> calls = std::move(t_open->calls);
  t_open.reset();

  GroupPlan plan;
  if (HostTransport* control = comm.control()) {
    const std::string error = plan_group(gather_lists(*control, calls), &plan);
    if (!error.empty()) throw Error(ErrorCode::invalid_argument, error);
  } else {
    // No channel to agree on (NCCL/RCCL from environment variables): local
    // errors only; a mismatch between ranks is the engine's to detect.
    for (std::size_t k = 0; k < calls.size(); ++k)
      if (calls[k].sig.error[0])
        throw Error(ErrorCode::invalid_argument, fmt::format("group_end: call {} of the group: {}", k, calls[k].sig.error));
  }
  if (!calls.empty()) comm.run_group(calls, plan);
}

void Communicator::run_group(std::vector<GroupedCall>& calls, const GroupPlan& plan) {
  run_group_in_order(rank(), calls, plan);
}

Group::Group(Communicator& comm) : comm_(&comm), exceptions_at_start_(std::uncaught_exceptions()) {
  group_start(comm);
}

Group::~Group() noexcept(false) {
  if (ended_) return;
  if (std::uncaught_exceptions() > exceptions_at_start_) {
    if (group_open(*comm_)) t_open.reset();  // discarded: nothing had moved
    return;
  }
  end();
}

void Group::end() {
  if (ended_) throw_invalid_argument("group_end", "comm", "an open group", "a Group already ended");
  ended_ = true;
  group_end(*comm_);
}

}  // namespace hal::comm
