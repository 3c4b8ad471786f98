#include "comm/agreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "hal/dtype.h"
#include "hal/error.h"

namespace hal::comm {
namespace {

constexpr int kAgreementTag = 0x4841;  // "HA"

std::string dtype_str(std::int32_t d) {
  return d < 0 ? "none" : std::string(dtype_name(static_cast<DType>(d)));
}

[[noreturn]] void throw_mismatch(const char* op, const std::string& what) {
  throw Error(ErrorCode::invalid_argument, fmt::format("{}: ranks disagree: {}", op, what));
}

std::vector<CallSignature> gather(HostTransport& control, const CallSignature& mine) {
  std::vector<CallSignature> all(static_cast<std::size_t>(control.size()));
  control.all_gather(&mine, sizeof(CallSignature), all.data());
  return all;
}

// The first rank that reported an error, its message prefixed with the rank.
void throw_first_error(const std::vector<CallSignature>& all, int my_rank) {
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].error[0] == '\0') continue;
    std::string msg(all[r].error, strnlen(all[r].error, CallSignature::kMaxError));
    if (static_cast<int>(r) != my_rank) msg = fmt::format("rank {} reported: {}", r, msg);
    throw Error(ErrorCode::invalid_argument, msg);
  }
}

}  // namespace

const char* call_kind_name(CallKind k) {
  switch (k) {
    case CallKind::all_reduce: return "all_reduce";
    case CallKind::all_gather: return "all_gather";
    case CallKind::reduce_scatter: return "reduce_scatter";
    case CallKind::broadcast: return "broadcast";
    case CallKind::all_to_all: return "all_to_all";
    case CallKind::send: return "send";
    case CallKind::recv: return "recv";
    case CallKind::barrier: return "barrier";
  }
  return "?";
}

void CallSignature::set_shape(const Shape& s) {
  ndim = std::min(s.rank(), kMaxDims);
  for (int i = 0; i < ndim; ++i) dims[i] = s[i];
}

std::string CallSignature::shape_str() const {
  std::string out = "[";
  for (int i = 0; i < ndim; ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

void CallSignature::set_error(const std::string& message) {
  const std::size_t n = std::min<std::size_t>(message.size(), kMaxError - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

void agree_collective(HostTransport* control, const CallSignature& mine, bool compare_shape) {
  if (!control) {
    if (mine.error[0]) throw Error(ErrorCode::invalid_argument, mine.error);
    return;
  }
  const std::vector<CallSignature> all = gather(*control, mine);
  throw_first_error(all, control->rank());
  const char* op = call_kind_name(all[0].kind);
  for (std::size_t r = 1; r < all.size(); ++r) {
    const CallSignature& a = all[0];
    const CallSignature& b = all[r];
    if (a.kind != b.kind)
      throw_mismatch(op, fmt::format("rank 0 called {}, rank {} called {}", op, r, call_kind_name(b.kind)));
    if (a.dtype != b.dtype)
      throw_mismatch(op, fmt::format("dtype {} on rank 0, {} on rank {}", dtype_str(a.dtype), dtype_str(b.dtype), r));
    if (a.reduce != b.reduce) throw_mismatch(op, fmt::format("reduce op differs between rank 0 and rank {}", r));
    if (a.root != b.root) throw_mismatch(op, fmt::format("root {} on rank 0, {} on rank {}", a.root, b.root, r));
    const bool same_shape = a.ndim == b.ndim && std::equal(a.dims, a.dims + a.ndim, b.dims);
    if (compare_shape && !same_shape)
      throw_mismatch(op, fmt::format("shape {} on rank 0, {} on rank {}", a.shape_str(), b.shape_str(), r));
  }
}

void agree_point_to_point(HostTransport* control, int rank, const CallSignature& mine) {
  const char* op = call_kind_name(mine.kind);
  const bool peer_valid = control && mine.root >= 0 && mine.root < control->size() && mine.root != rank;
  // Without a valid peer there is nobody to tell: the error stays local.
  if (!peer_valid) {
    if (mine.error[0]) throw Error(ErrorCode::invalid_argument, mine.error);
    return;
  }
  CallSignature theirs;
  control->exchange(&mine, &theirs, sizeof(CallSignature), mine.root, kAgreementTag);
  if (mine.error[0]) throw Error(ErrorCode::invalid_argument, mine.error);
  if (theirs.error[0])
    throw Error(ErrorCode::invalid_argument,
                fmt::format("rank {} reported: {}", mine.root,
                            std::string(theirs.error, strnlen(theirs.error, CallSignature::kMaxError))));
  const CallKind expected = mine.kind == CallKind::send ? CallKind::recv : CallKind::send;
  if (theirs.kind != expected)
    throw_mismatch(op, fmt::format("rank {} called {} with rank {}, which called {}", rank, op, mine.root,
                                   call_kind_name(theirs.kind)));
  if (theirs.root != rank)
    throw_mismatch(op, fmt::format("rank {} names peer {}, but that rank named peer {}", rank, mine.root, theirs.root));
  if (theirs.dtype != mine.dtype)
    throw_mismatch(op, fmt::format("dtype {} on rank {}, {} on rank {}", dtype_str(mine.dtype), rank,
                                   dtype_str(theirs.dtype), mine.root));
  if (theirs.count != mine.count) {
    const bool i_send = mine.kind == CallKind::send;
    throw_mismatch(op, fmt::format("rank {} sends {} elements, rank {} expects {}", i_send ? rank : mine.root,
                                   i_send ? mine.count : theirs.count, i_send ? mine.root : rank,
                                   i_send ? theirs.count : mine.count));
  }
}

void agree_no_error(HostTransport* control, const char* op, const std::string& local_error) {
  CallSignature mine;
  mine.set_error(local_error);
  if (!control) {
    if (!local_error.empty()) throw Error(ErrorCode::invalid_argument, local_error);
    return;
  }
  throw_first_error(gather(*control, mine), control->rank());
  (void)op;
}

}  // namespace hal::comm
