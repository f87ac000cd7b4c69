// Scatter straight from the root, and scatterv (the same schedule with
// per-rank counts and displacements).
//
// Steps: the root posts p - 1 sends at once, each from its block of the
// user's send buffer (so non-contiguous types cost no extra copy), and
// then, while the others read theirs, copies its own block into its receive
// buffer unless it passed MPI_IN_PLACE; every other rank posts one receive.
// One round.
//
// Cost: (p - 1) * alpha + (p - 1) * m * beta at the root for blocks of m
// bytes, no intermediate copies: the choice for large blocks.
// Restrictions: none; any p, root, counts (zero counts are empty messages).
// Device buffers (contiguous types, moveDeviceSupports): the messages move
// them as they are; the root's own block is a device copy.
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

namespace {
move::Block rootBlock(const CollArgs& a, int i) {
  if (a.coll == Collective::kScatterv)
    return move::Block{static_cast<char*>(const_cast<void*>(a.sendbuf)) +
                           a.sendDispls[i] * a.type->extent(),
                       a.sendCounts[i], a.type};
  return move::equalBlock(a.sendbuf, a.count, a.type, i);
}
}  // namespace

Status scatterLinear(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const move::Block mine{static_cast<char*>(a.recvbuf), a.recvCount, a.recvType};
  if (r != a.root) {
    move::recvBlock(s, mine, a.root);
    s.endRound();
    return Status::ok();
  }
  for (int i = 0; i < p; ++i)
    if (i != r) move::sendBlock(s, rootBlock(a, i), i);
  if (!a.inPlace) {
    if (a.mem == device::MemKind::kDevice)
      move::scheduleDeviceCopy(s, rootBlock(a, r), mine);
    else
      move::scheduleCopyAfterPosting(s, rootBlock(a, r), mine);
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
