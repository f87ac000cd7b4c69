// Gather straight to the root, and gatherv (the same schedule with per-rank
// counts and displacements).
//
// Steps: every non-root rank sends its block to the root; the root posts
// all p - 1 receives at once, each into its place in the user's receive
// buffer (so non-contiguous receive types cost no extra copy), and then
// copies its own block locally unless it passed MPI_IN_PLACE. One round.
//
// Cost: (p - 1) * alpha + (p - 1) * m * beta at the root for blocks of m
// bytes; the receives are concurrent, so on one node the senders' copies
// overlap. No intermediate copies, which is why it wins for large blocks.
// Restrictions: none; any p, root, counts (zero counts are empty messages).
// Device buffers (contiguous types, moveDeviceSupports): the messages move
// them as they are; the root's own block is a device copy.
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

namespace {
move::Block rootBlock(const CollArgs& a, int i) {
  if (a.coll == Collective::kGatherv)
    return move::Block{static_cast<char*>(a.recvbuf) + a.recvDispls[i] * a.recvType->extent(),
                       a.recvCounts[i], a.recvType};
  return move::equalBlock(a.recvbuf, a.recvCount, a.recvType, i);
}
}  // namespace

Status gatherLinear(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  if (r != a.root) {
    s.send(a.sendbuf, a.count, a.type, a.root);
    s.endRound();
    return Status::ok();
  }
  for (int i = 0; i < p; ++i)
    if (i != r) move::recvBlock(s, rootBlock(a, i), i);
  if (!a.inPlace) {
    const move::Block own{static_cast<char*>(const_cast<void*>(a.sendbuf)), a.count, a.type};
    if (a.mem == device::MemKind::kDevice)
      move::scheduleDeviceCopy(s, own, rootBlock(a, r));
    else
      move::scheduleCopyAfterPosting(s, own, rootBlock(a, r));
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
