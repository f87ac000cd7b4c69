// Allgather (and allgatherv) around a ring.
//
// Steps: a rank copies its own block into its place in the receive buffer
// (nothing to do with MPI_IN_PLACE); then in step s = 0 .. p-2 it sends
// block (r - s) mod p to r + 1 and receives block (r - s - 1) mod p from
// r - 1, each straight from and into the user's buffer. With allgatherv the
// blocks are the per-rank counts and displacements.
//
// Cost: (p - 1) * alpha + (p-1)/p * n * beta for n bytes in all: the least
// data, and each rank talks only to its neighbours, but p - 1 latencies:
// the choice for large blocks.
// Restrictions: none; any p (the ring wraps), any counts.
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

namespace {
move::Block recvBlock(const CollArgs& a, int i) {
  if (a.coll == Collective::kAllgatherv)
    return move::Block{static_cast<char*>(a.recvbuf) + a.recvDispls[i] * a.recvType->extent(),
                       a.recvCounts[i], a.recvType};
  return move::equalBlock(a.recvbuf, a.recvCount, a.recvType, i);
}
}  // namespace

Status allgatherRing(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  if (!a.inPlace)
    move::scheduleCopy(s, move::Block{static_cast<char*>(const_cast<void*>(a.sendbuf)), a.count, a.type},
                       recvBlock(a, r));
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    move::sendBlock(s, recvBlock(a, (r - step + p) % p), right);
    move::recvBlock(s, recvBlock(a, (r - step - 1 + 2 * p) % p), left);
    s.endRound();
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
