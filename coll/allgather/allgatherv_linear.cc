// Allgatherv by direct exchange: every rank sends its block to every other.
//
// Steps: one round. A rank posts p - 1 sends of its own block (from the
// send buffer, or from its place in the receive buffer with MPI_IN_PLACE)
// and p - 1 receives straight into the other ranks' places, and copies its
// own block into place.
//
// Cost: (p - 1) * alpha + (p - 1) * m * beta per rank, all messages in
// flight at once: one round of latency, so the choice for small blocks on
// few ranks; large or many blocks prefer the ring.
// Restrictions: none; any p, any counts.
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status allgathervLinear(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const Datatype* rt = a.recvType;
  auto place = [&](int i) {
    return move::Block{static_cast<char*>(a.recvbuf) + a.recvDispls[i] * rt->extent(),
                       a.recvCounts[i], a.recvType};
  };
  const move::Block mine =
      a.inPlace ? place(r)
                : move::Block{static_cast<char*>(const_cast<void*>(a.sendbuf)), a.count, a.type};
  for (int i = 0; i < p; ++i) {
    if (i == r) continue;
    move::sendBlock(s, mine, i);
    move::recvBlock(s, place(i), i);
  }
  if (!a.inPlace) move::scheduleCopyAfterPosting(s, mine, place(r));
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
