#include "comm/group_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "hal/dtype.h"

namespace hal::comm {
namespace {

bool is_p2p(CallKind k) { return k == CallKind::send || k == CallKind::recv; }

std::string dtype_str(std::int32_t d) { return d < 0 ? "none" : std::string(dtype_name(static_cast<DType>(d))); }

std::string error_of(const CallSignature& s) { return std::string(s.error, strnlen(s.error, CallSignature::kMaxError)); }

bool same_shape(const CallSignature& a, const CallSignature& b) {
  return a.ndim == b.ndim && std::equal(a.dims, a.dims + a.ndim, b.dims);
}

// Rank r's collectives, as indices into its list, in issue order.
std::vector<int> collectives_of(const std::vector<CallSignature>& calls) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(calls.size()); ++i)
    if (!is_p2p(calls[static_cast<std::size_t>(i)].kind)) out.push_back(i);
  return out;
}

}  // namespace

std::string plan_group(const std::vector<std::vector<CallSignature>>& per_rank, GroupPlan* plan) {
  const int P = static_cast<int>(per_rank.size());
  // Local errors first: the first one, by rank then call.
  for (int r = 0; r < P; ++r)
    for (std::size_t k = 0; k < per_rank[static_cast<std::size_t>(r)].size(); ++k)
      if (per_rank[static_cast<std::size_t>(r)][k].error[0])
        return fmt::format("group_end: rank {}, call {} of its group: {}", r, k,
                           error_of(per_rank[static_cast<std::size_t>(r)][k]));

  // Collectives: the same sequence on every rank.
  const std::vector<int> ref = collectives_of(per_rank[0]);
  for (int r = 1; r < P; ++r) {
    const std::vector<int> mine = collectives_of(per_rank[static_cast<std::size_t>(r)]);
    if (mine.size() != ref.size())
      return fmt::format("group_end: ranks disagree: rank 0's group holds {} collectives, rank {}'s holds {}",
                         ref.size(), r, mine.size());
    for (std::size_t c = 0; c < ref.size(); ++c) {
      const CallSignature& a = per_rank[0][static_cast<std::size_t>(ref[c])];
      const CallSignature& b = per_rank[static_cast<std::size_t>(r)][static_cast<std::size_t>(mine[c])];
      const char* what = nullptr;
      if (a.kind != b.kind) what = "kind";
      else if (a.dtype != b.dtype) what = "dtype";
      else if (a.reduce != b.reduce) what = "reduce op";
      else if (a.root != b.root) what = "root";
      else if (!same_shape(a, b)) what = "shape";
      if (what)
        return fmt::format(
            "group_end: ranks disagree on collective {} of the group ({}): rank 0 has {} {} {}, rank {} has {} {} {}",
            c, what, call_kind_name(a.kind), dtype_str(a.dtype), a.shape_str(), r, call_kind_name(b.kind),
            dtype_str(b.dtype), b.shape_str());
    }
  }

  // Point to point: rank i's k-th send to j meets rank j's k-th recv from i.
  // sends[i][j] / recvs[j][i]: call indices in issue order.
  std::vector<std::vector<std::vector<int>>> sends(static_cast<std::size_t>(P)), recvs(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    sends[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(P));
    recvs[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(P));
    const auto& calls = per_rank[static_cast<std::size_t>(r)];
    for (int k = 0; k < static_cast<int>(calls.size()); ++k) {
      const CallSignature& s = calls[static_cast<std::size_t>(k)];
      if (!is_p2p(s.kind)) continue;
      if (s.root < 0 || s.root >= P || s.root == r)
        return fmt::format("group_end: rank {}, call {}: {} names peer {}, expected a rank in [0, {}) other than {}",
                           r, k, call_kind_name(s.kind), s.root, P, r);
      auto& table = s.kind == CallKind::send ? sends : recvs;
      table[static_cast<std::size_t>(r)][static_cast<std::size_t>(s.root)].push_back(k);
    }
  }
  GroupPlan out;
  for (int i = 0; i < P; ++i) {
    for (int j = 0; j < P; ++j) {
      const auto& s = sends[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      const auto& v = recvs[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)];
      if (s.size() != v.size())
        return fmt::format("group_end: ranks disagree: rank {} sends {} message(s) to rank {}, which receives {} from it",
                           i, s.size(), j, v.size());
      for (std::size_t k = 0; k < s.size(); ++k) {
        const CallSignature& a = per_rank[static_cast<std::size_t>(i)][static_cast<std::size_t>(s[k])];
        const CallSignature& b = per_rank[static_cast<std::size_t>(j)][static_cast<std::size_t>(v[k])];
        if (a.dtype != b.dtype)
          return fmt::format("group_end: ranks disagree: message {} from rank {} to rank {}: dtype {} sent, {} expected",
                             k, i, j, dtype_str(a.dtype), dtype_str(b.dtype));
        if (a.count != b.count)
          return fmt::format(
              "group_end: ranks disagree: message {} from rank {} to rank {}: rank {} sends {} elements, rank {} "
              "expects {}",
              k, i, j, i, a.count, j, b.count);
        out.messages.push_back({i, j, s[k], v[k]});
      }
    }
  }
  if (plan) *plan = std::move(out);
  return {};
}

void run_group_in_order(int rank, std::vector<GroupedCall>& calls, const GroupPlan& plan) {
  for (GroupedCall& c : calls)
    if (!is_p2p(c.sig.kind)) c.run();
  for (const GroupMessage& m : plan.messages) {
    if (m.sender == rank) calls[static_cast<std::size_t>(m.send_call)].run();
    else if (m.receiver == rank) calls[static_cast<std::size_t>(m.recv_call)].run();
  }
}

}  // namespace hal::comm
