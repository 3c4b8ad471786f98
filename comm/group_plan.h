#pragma once
// The part of a group call (comm/group.h) that is pure host logic, so it is
// tested in one process: the recorded calls, and the check and schedule that
// every rank computes from every rank's list of call signatures.
#include <functional>
#include <string>
#include <vector>

#include "comm/agreement.h"

namespace hal::comm {

class Communicator;

// One call recorded inside a group: its signature (with its local validation
// error, if any) and the engine hook to run at group_end.
struct GroupedCall {
  CallSignature sig;
  std::function<void()> run;
};

// Point-to-point message `sender` -> `receiver`: the index of the send in the
// sender's list of calls and of the matching recv in the receiver's.
struct GroupMessage {
  int sender = 0, receiver = 0;
  int send_call = 0, recv_call = 0;
};

struct GroupPlan {
  // Messages in the one global order every rank walks: by sender, then
  // receiver, then issue order.
  std::vector<GroupMessage> messages;
};

// per_rank[r] = rank r's call signatures in issue order. Returns "" and fills
// `plan` when the group is consistent, else the error every rank throws
// (naming the ranks and the calls at fault).
std::string plan_group(const std::vector<std::vector<CallSignature>>& per_rank, GroupPlan* plan);

// The schedule of the host engine: the collectives of `calls` in issue order,
// then the messages of `plan` in order, each run by the two ranks it names.
void run_group_in_order(int rank, std::vector<GroupedCall>& calls, const GroupPlan& plan);

// Called by each collective after its local validation: when this thread has
// a group open on `comm`, records the call and returns true (the caller
// returns without agreeing or running). Throws when the open group is another
// communicator's.
bool defer_to_open_group(Communicator& comm, const CallSignature& sig, std::function<void()> run);

}  // namespace hal::comm
