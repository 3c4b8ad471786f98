#pragma once
// Group calls: collectives and sends/receives issued between group_start and
// group_end are validated, agreed on and run together at group_end, so that
// e.g. a send and a receive between two ranks, issued in either order on each
// side, cannot deadlock (the MoE exchange and pipeline patterns).
//
//   {
//     comm::Group g(comm);                       // group_start(comm)
//     comm::send(comm, s, x, (rank + 1) % P);
//     comm::recv(comm, s, y, (rank + P - 1) % P);
//     g.end();                                   // group_end(comm): data moves here
//   }
//
// Inside a group the calls only record themselves (after their local
// validation); nothing is read or written until group_end. There, every rank's
// list of calls is all-gathered over the control channel and checked as one
// (comm/group_plan.h): the collectives must be the same sequence on every
// rank, and each rank's k-th send to rank j must meet rank j's k-th receive
// from it with the same dtype and element count. A mismatch or a local error
// is an invalid_argument on *every* rank before any data moves.
//
// Engines: NCCL/RCCL issue the calls between ncclGroupStart and ncclGroupEnd
// (their own group semantics). The MPI engine runs them in a defined order:
// the collectives in issue order, then the point-to-point messages in one
// global order, by (sender rank, receiver rank, issue order), which every rank
// walks; each message blocks only its two ranks, so the schedule never
// deadlocks however the calls were interleaved.
//
// As with ncclGroupStart, the calls of one group must be independent (no call
// reads what another call of the group writes): their order of execution is
// the engine's. Tensors and streams named inside a group must live until
// group_end returns.
//
// Misuse is a clear invalid_argument, thrown locally at once: groups do not
// nest; group_end without an open group, or on another communicator than the
// one whose group is open; a collective on another communicator while a group
// is open (one thread, one group, one communicator). all_to_all and barrier
// are refused inside a group on every rank (all_to_all needs a second
// agreement round; a barrier inside a group has no meaning).
namespace hal::comm {

class Communicator;

void group_start(Communicator& comm);
void group_end(Communicator& comm);
// Whether this thread has a group open on `comm`.
bool group_open(const Communicator& comm);

// RAII: group_start in the constructor; end() is group_end. A group still open
// at destruction is ended there unless an exception is unwinding, in which
// case its calls are discarded (nothing had moved). A rank that discards its
// group while the others reach group_end leaves them waiting: under mpirun the
// launcher's --timeout is the backstop, as for any rank that stops early.
class Group {
 public:
  explicit Group(Communicator& comm);
  ~Group() noexcept(false);
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  void end();

 private:
  Communicator* comm_;
  int exceptions_at_start_;
  bool ended_ = false;
};

}  // namespace hal::comm
