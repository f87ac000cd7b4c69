// Broadcast along a binomial tree.
//
// Steps: ranks are renumbered relative to the root (vr = (r - root) mod p).
// A non-root rank receives the whole buffer from its parent, vr with its
// lowest set bit cleared; then every rank sends it to its children vr + 2^k
// for each 2^k below vr's lowest set bit (the root: below p), all posted at
// once. The buffer is the user's, sent as (buf, count, type): non-contiguous
// types are packed by the p2p engine, no scratch is needed.
//
// Cost: ceil(log2 p) * (alpha + n * beta) for n bytes: every level of the
// tree forwards the whole message. Good for small messages, where the
// latency term dominates; large messages prefer scatter_allgather.
// Restrictions: none. Any p (a subtree is just cut short at p), any root.
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status bcastBinomial(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), vr = move::relRank(s.comm()->rank(), a.root, p);
  int mask = 1;
  while (mask < p && !(vr & mask)) mask <<= 1;
  // mask is now vr's lowest set bit (or the first power of two >= p at the root).
  if (vr != 0) {
    s.recv(a.recvbuf, a.count, a.type, move::absRank(vr - mask, a.root, p));
    s.endRound();
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < p) s.send(a.recvbuf, a.count, a.type, move::absRank(vr + mask, a.root, p));
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
