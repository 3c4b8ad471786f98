#pragma once
// The ranks agree on a call before any data moves.
//
// Each rank describes its call in a CallSignature (fixed size, so it travels
// as bytes) together with its local validation error, if any; the signatures
// are all-gathered over the control channel and every rank runs the same
// comparison on the same data, so either every rank proceeds or every rank
// throws the same invalid_argument, naming the rank at fault. This is what
// turns "one rank sends 10 elements, the other expects 12" into an error
// instead of a hang or a truncated message.
#include <array>
#include <cstdint>
#include <string>

#include "comm/host_transport.h"
#include "hal/shape.h"

namespace hal::comm {

enum class CallKind : std::int32_t {
  all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send, recv, barrier
};
const char* call_kind_name(CallKind k);

struct CallSignature {
  static constexpr int kMaxDims = 8;
  static constexpr int kMaxError = 384;
  CallKind kind = CallKind::barrier;
  std::int32_t dtype = -1;      // hal::DType of the data, -1 when none
  std::int32_t reduce = -1;     // ReduceOp, -1 when none
  std::int32_t root = -1;       // broadcast root, or peer of send/recv
  std::int32_t ndim = 0;        // of the checked shape
  std::int32_t pad = 0;
  std::int64_t dims[kMaxDims] = {};  // the shape every rank must agree on
  std::int64_t count = 0;       // elements moved (send/recv)
  char error[kMaxError] = {};   // this rank's validation error, "" when valid

  void set_shape(const Shape& s);
  std::string shape_str() const;
  void set_error(const std::string& message);
};

// Throws on every rank when any rank's signature has an error or differs
// from rank 0's in kind, dtype, reduce, root or (if `compare_shape`) shape.
// Without a control channel, throws the local error only.
void agree_collective(HostTransport* control, const CallSignature& mine, bool compare_shape);
// send/recv: the two ranks exchange signatures; throws on both when either
// has an error, the kinds do not pair (send with recv), each does not name the
// other, or dtype or element count differ.
void agree_point_to_point(HostTransport* control, int rank, const CallSignature& mine);
// A second round for checks that need the first round's data (all_to_all's
// counts): every rank throws when any rank's `local_error` is non-empty.
void agree_no_error(HostTransport* control, const char* op, const std::string& local_error);

}  // namespace hal::comm
