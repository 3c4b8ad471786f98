#pragma once
// The collectives of hal::comm: what each one computes, on which tensors.
//
// Every function is called by every rank of the communicator (send/recv: by
// the two ranks named), in the same order. Arguments are validated on each
// rank first (dtype, shape, device, contiguity, root and peer in range), then
// the ranks agree: each rank's description of the call (kind, dtype, shape,
// counts, root, reduce op and its local validation error, if any) is exchanged
// before any data moves, so a mismatch between ranks (one rank sends 10
// elements, its peer expects 12) or a bad argument on one rank is an
// invalid_argument hal::Error on *every* rank, naming the rank at fault,
// instead of a hang or a wrong answer. Outputs are not written before that.
//
// Tensors must be contiguous and on the communicator's device. The work is
// queued on `stream` (a stream of that device, or of one of its partitions).
//
// Reductions (all_reduce, reduce_scatter) on the MPI engine are done by hal
// over the gathered buffers, element by element in rank order:
//   y = (((x_0 + x_1) + x_2) + ... + x_{P-1})     (max/min the same way)
// accumulated in fp32 for f32, f16 and bf16 (f64 for f64, i64 for integers),
// rounded once to the output type (avg divides the fp32 sum by P, then rounds).
// So every rank gets the same bits, for any thread count and every run.
// docs/accuracy.md gives the bound. NCCL/RCCL use their own order (see
// comm/xccl/xccl_engine.cpp).
#include <cstdint>
#include <string_view>
#include <vector>

#include "hal/stream.h"
#include "hal/tensor.h"

namespace hal::comm {

class Communicator;

enum class ReduceOp : std::uint8_t { sum, avg, max, min };
std::string_view reduce_op_name(ReduceOp op);

// y = reduce over ranks of x; same shape and dtype; y may be x (in place).
// Dtypes: f32 f16 bf16 f64 i32 i64 (avg: floating only).
void all_reduce(Communicator& comm, Stream& stream, const Tensor& x, const Tensor& y, ReduceOp op);
// y = concatenation of every rank's x along axis 0, in rank order:
// x [n, ...], y [P * n, ...].
void all_gather(Communicator& comm, Stream& stream, const Tensor& x, const Tensor& y);
// x [P * n, ...]; rank r gets block r of the reduction: y [n, ...].
void reduce_scatter(Communicator& comm, Stream& stream, const Tensor& x, const Tensor& y, ReduceOp op);
// In place: every rank's `buffer` becomes root's. Same shape and dtype on all ranks.
void broadcast(Communicator& comm, Stream& stream, const Tensor& buffer, int root);
// All-to-all with per-rank counts along axis 0 (MoE dispatch/combine):
// x [sum(send_counts), ...] holds, in rank order, send_counts[j] rows for rank j;
// y [sum(recv_counts), ...] receives, in rank order, recv_counts[i] rows from
// rank i. recv_counts[i] on rank r must equal send_counts[r] on rank i
// (checked); trailing dimensions and dtype equal on all ranks.
void all_to_all(Communicator& comm, Stream& stream, const Tensor& x, const Tensor& y,
                const std::vector<std::int64_t>& send_counts, const std::vector<std::int64_t>& recv_counts);
// Point to point: `x` to rank `peer`, which calls recv with the same dtype and
// element count (checked on both sides).
void send(Communicator& comm, Stream& stream, const Tensor& x, int peer);
void recv(Communicator& comm, Stream& stream, const Tensor& y, int peer);
// Returns when every rank has called it (after the work queued on `stream`).
void barrier(Communicator& comm, Stream& stream);

}  // namespace hal::comm
