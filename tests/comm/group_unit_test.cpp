// Group calls in one process: the plan every rank computes from every rank's
// call signatures (comm/group_plan.h), checked on hand-made lists, and the
// misuse refusals and the deferral on one-rank communicators (self transport).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/group.h"
#include "comm/group_plan.h"
#include "hal/error.h"
#include "hal/registry.h"

using namespace hal;
using namespace hal::comm;

namespace {

CallSignature p2p(CallKind kind, int peer, std::int64_t count, DType dtype = DType::f32) {
  CallSignature s;
  s.kind = kind;
  s.root = peer;
  s.count = count;
  s.dtype = static_cast<std::int32_t>(dtype);
  return s;
}

CallSignature collective(CallKind kind, const Shape& shape, DType dtype = DType::f32) {
  CallSignature s;
  s.kind = kind;
  s.dtype = static_cast<std::int32_t>(dtype);
  s.set_shape(shape);
  return s;
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

Launch one_rank() { return Launch{}; }

}  // namespace

TEST(CommGroupPlan, RingOfSendsAndRecvsIsOrderedBySenderThenReceiver) {
  // Each rank of 3 issues recv from the left before send to the right (the
  // order that deadlocks without a group).
  std::vector<std::vector<CallSignature>> lists(3);
  for (int r = 0; r < 3; ++r)
    lists[static_cast<std::size_t>(r)] = {p2p(CallKind::recv, (r + 2) % 3, 5), p2p(CallKind::send, (r + 1) % 3, 5)};
  GroupPlan plan;
  ASSERT_EQ(plan_group(lists, &plan), "");
  ASSERT_EQ(plan.messages.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    const GroupMessage& m = plan.messages[static_cast<std::size_t>(r)];
    EXPECT_EQ(m.sender, r);
    EXPECT_EQ(m.receiver, (r + 1) % 3);
    EXPECT_EQ(m.send_call, 1);  // the send is call 1 on the sender
    EXPECT_EQ(m.recv_call, 0);  // the recv is call 0 on the receiver
  }
}

TEST(CommGroupPlan, RepeatedMessagesBetweenOnePairMatchInIssueOrder) {
  std::vector<std::vector<CallSignature>> lists = {
      {p2p(CallKind::send, 1, 3), collective(CallKind::all_reduce, Shape{4}), p2p(CallKind::send, 1, 7)},
      {p2p(CallKind::recv, 0, 3), p2p(CallKind::recv, 0, 7), collective(CallKind::all_reduce, Shape{4})}};
  GroupPlan plan;
  ASSERT_EQ(plan_group(lists, &plan), "");
  ASSERT_EQ(plan.messages.size(), 2u);
  EXPECT_EQ(plan.messages[0].send_call, 0);
  EXPECT_EQ(plan.messages[0].recv_call, 0);
  EXPECT_EQ(plan.messages[1].send_call, 2);
  EXPECT_EQ(plan.messages[1].recv_call, 1);
}

TEST(CommGroupPlan, MismatchesNameTheRanksAndTheCounts) {
  // Rank 0 sends 10 elements, rank 1 expects 12.
  std::string e = plan_group({{p2p(CallKind::send, 1, 10)}, {p2p(CallKind::recv, 0, 12)}}, nullptr);
  EXPECT_NE(e.find("rank 0 sends 10 elements, rank 1 expects 12"), std::string::npos) << e;
  // A send with no matching recv.
  e = plan_group({{p2p(CallKind::send, 1, 4)}, {}}, nullptr);
  EXPECT_NE(e.find("rank 0 sends 1 message(s) to rank 1, which receives 0"), std::string::npos) << e;
  // Dtypes differ.
  e = plan_group({{p2p(CallKind::send, 1, 4, DType::f32)}, {p2p(CallKind::recv, 0, 4, DType::bf16)}}, nullptr);
  EXPECT_NE(e.find("dtype f32 sent, bf16 expected"), std::string::npos) << e;
  // Collectives in another order.
  e = plan_group({{collective(CallKind::all_reduce, Shape{4}), collective(CallKind::all_gather, Shape{4})},
                  {collective(CallKind::all_gather, Shape{4}), collective(CallKind::all_reduce, Shape{4})}},
                 nullptr);
  EXPECT_NE(e.find("collective 0 of the group (kind)"), std::string::npos) << e;
  // Shapes differ; a missing collective.
  e = plan_group({{collective(CallKind::all_reduce, Shape{4})}, {collective(CallKind::all_reduce, Shape{5})}}, nullptr);
  EXPECT_NE(e.find("(shape)"), std::string::npos) << e;
  e = plan_group({{collective(CallKind::all_reduce, Shape{4})}, {}}, nullptr);
  EXPECT_NE(e.find("rank 0's group holds 1 collectives, rank 1's holds 0"), std::string::npos) << e;
  // A local error on rank 1 is reported first, naming the rank and the call.
  CallSignature bad = p2p(CallKind::recv, 0, 4);
  bad.set_error("recv: argument 'y': expected a contiguous tensor");
  e = plan_group({{p2p(CallKind::send, 1, 4)}, {bad}}, nullptr);
  EXPECT_NE(e.find("rank 1, call 0 of its group: recv: argument 'y'"), std::string::npos) << e;
  // A peer out of range (a signature that escaped local validation).
  e = plan_group({{p2p(CallKind::send, 5, 4)}, {}}, nullptr);
  EXPECT_NE(e.find("names peer 5"), std::string::npos) << e;
}

TEST(CommGroupPlan, ScheduleRunsCollectivesThenOnlyThisRanksMessages) {
  std::vector<std::string> ran;
  const auto call = [&](CallSignature s, const std::string& name) {
    return GroupedCall{s, [&ran, name] { ran.push_back(name); }};
  };
  // Rank 1 of 3: recv from 0, send to 2, an all_reduce in the middle.
  std::vector<GroupedCall> calls = {call(p2p(CallKind::send, 2, 1), "send->2"),
                                    call(collective(CallKind::all_reduce, Shape{1}), "all_reduce"),
                                    call(p2p(CallKind::recv, 0, 1), "recv<-0")};
  GroupPlan plan;
  plan.messages = {{0, 1, 0, 2}, {0, 2, 0, 0}, {1, 2, 0, 0}, {2, 0, 1, 1}};
  run_group_in_order(1, calls, plan);
  EXPECT_EQ(ran, (std::vector<std::string>{"all_reduce", "recv<-0", "send->2"}));
}

TEST(CommGroup, MisuseIsRefusedByName) {
  Device& cpu = hal::device("cpu");
  CommOptions o;
  o.launch = one_rank();
  auto a = create_communicator(cpu, o);
  auto b = create_communicator(cpu, o);
  Stream s(cpu);
  std::vector<float> xv(4, 1.0f), yv(4, 0.0f);
  const Tensor x = Tensor::contiguous(xv.data(), &cpu, DType::f32, Shape{4});
  const Tensor y = Tensor::contiguous(yv.data(), &cpu, DType::f32, Shape{4});
  ErrorCode code{};

  EXPECT_NE(error_of([&] { group_end(*a); }, &code).find("no group open"), std::string::npos);
  EXPECT_EQ(code, ErrorCode::invalid_argument);
  group_start(*a);
  EXPECT_TRUE(group_open(*a));
  EXPECT_FALSE(group_open(*b));
  EXPECT_NE(error_of([&] { group_start(*a); }).find("groups do not nest"), std::string::npos);
  EXPECT_NE(error_of([&] { group_start(*b); }).find("a group open on the " + a->engine() + " communicator"),
            std::string::npos);
  // A collective on the other communicator while a's group is open.
  const std::string other = error_of([&] { all_reduce(*b, s, x, y, ReduceOp::sum); }, &code);
  EXPECT_NE(other.find("all_reduce: argument 'comm'"), std::string::npos) << other;
  EXPECT_EQ(code, ErrorCode::invalid_argument);
  EXPECT_NE(error_of([&] { group_end(*b); }).find("group_end: argument 'comm'"), std::string::npos);
  group_end(*a);  // empty group: nothing to run
  EXPECT_FALSE(group_open(*a));
  EXPECT_NE(error_of([&] { group_end(*a); }).find("no group open"), std::string::npos);
}

TEST(CommGroup, CallsRunAtGroupEndNotBefore) {
  Device& cpu = hal::device("cpu");
  CommOptions o;
  o.launch = one_rank();
  auto comm = create_communicator(cpu, o);
  Stream s(cpu);
  std::vector<float> xv = {1.5f, -2.0f, 3.25f}, yv(3, 99.0f), gv(3, 99.0f);
  const Tensor x = Tensor::contiguous(xv.data(), &cpu, DType::f32, Shape{3});
  const Tensor y = Tensor::contiguous(yv.data(), &cpu, DType::f32, Shape{3});
  const Tensor g = Tensor::contiguous(gv.data(), &cpu, DType::f32, Shape{3});
  {
    Group group(*comm);
    all_reduce(*comm, s, x, y, ReduceOp::max);
    all_gather(*comm, s, x, g);
    EXPECT_EQ(yv, std::vector<float>(3, 99.0f));  // recorded, not run
    group.end();
  }
  EXPECT_EQ(yv, xv);  // one rank: the reduction is x itself
  EXPECT_EQ(gv, xv);
}

TEST(CommGroup, BadCallInsideAGroupFailsAtGroupEndWithNothingWritten) {
  Device& cpu = hal::device("cpu");
  CommOptions o;
  o.launch = one_rank();
  auto comm = create_communicator(cpu, o);
  Stream s(cpu);
  std::vector<float> xv(4, 1.0f), yv(4, 7.0f), bad(5, 7.0f);
  const Tensor x = Tensor::contiguous(xv.data(), &cpu, DType::f32, Shape{4});
  const Tensor y = Tensor::contiguous(yv.data(), &cpu, DType::f32, Shape{4});
  const Tensor wrong = Tensor::contiguous(bad.data(), &cpu, DType::f32, Shape{5});
  group_start(*comm);
  all_reduce(*comm, s, x, y, ReduceOp::sum);      // valid
  all_reduce(*comm, s, x, wrong, ReduceOp::sum);  // y of the wrong shape: recorded with its error
  const std::string e = error_of([&] { group_end(*comm); });
  EXPECT_NE(e.find("rank 0, call 1 of its group: all_reduce: argument 'y'"), std::string::npos) << e;
  EXPECT_EQ(yv, std::vector<float>(4, 7.0f));  // the valid call did not run either
  EXPECT_FALSE(group_open(*comm));
  // barrier and all_to_all are refused inside a group.
  group_start(*comm);
  barrier(*comm, s);
  EXPECT_NE(error_of([&] { group_end(*comm); }).find("barrier: not allowed inside a group"), std::string::npos);
}

TEST(CommGroup, ExceptionInsideAGroupDiscardsIt) {
  Device& cpu = hal::device("cpu");
  CommOptions o;
  o.launch = one_rank();
  auto comm = create_communicator(cpu, o);
  Stream s(cpu);
  std::vector<float> xv(2, 1.0f), yv(2, 5.0f);
  const Tensor x = Tensor::contiguous(xv.data(), &cpu, DType::f32, Shape{2});
  const Tensor y = Tensor::contiguous(yv.data(), &cpu, DType::f32, Shape{2});
  try {
    Group g(*comm);
    all_reduce(*comm, s, x, y, ReduceOp::sum);
    throw std::runtime_error("user code failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(group_open(*comm));
  EXPECT_EQ(yv, std::vector<float>(2, 5.0f));
}
