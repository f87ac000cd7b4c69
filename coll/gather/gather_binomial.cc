// Gather along a binomial tree (MPICH's and Open MPI's small-block gather).
//
// Terms: relative rank vr = (r - root) mod p; a rank's subtree is the
// relative ranks [vr, vr + min(lowbit(vr), p - vr)) (the root's: all p);
// blocks are m bytes, packed.
// Steps: a leaf sends its block from the user's buffer to its parent
// (vr with its lowest bit cleared). An inner rank packs its own block at
// the front of a scratch buffer sized for its subtree, receives each child
// vr + 2^k's subtree behind it (all children at once), then sends the whole
// scratch to its parent. The root unpacks the blocks into their places in
// the receive buffer, rotated back by root, and copies its own block
// unless it passed MPI_IN_PLACE (then it is already there).
//
// Cost: ceil(log2 p) * alpha + (p-1)/p * p*m * beta at the root, plus one
// pack and unpack per level for inner ranks. Wins for small blocks, where
// latency dominates; large blocks prefer the linear gather (no copies).
// Restrictions: none; any p (subtrees are cut at p), any root.
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status gatherBinomial(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const int vr = move::relRank(r, a.root, p);
  const move::Block mine{static_cast<char*>(const_cast<void*>(a.sendbuf)), a.count, a.type};
  const size_t m = vr == 0 ? a.recvType->packedSize(a.recvCount) : mine.bytes();
  int mask = 1;
  while (mask < p && !(vr & mask)) mask <<= 1;
  const int sub = std::min(mask, p - vr);  // ranks in my subtree
  if (sub == 1 && vr != 0) {               // a leaf
    move::sendBlock(s, mine, move::absRank(vr - mask, a.root, p));
    s.endRound();
    return Status::ok();
  }
  char* tmp = static_cast<char*>(s.scratch(sub * m));
  if (vr != 0) {
    s.local([mine, tmp] { move::packBlock(mine, tmp); });
  } else if (!a.inPlace) {
    move::scheduleCopy(s, mine, move::equalBlock(a.recvbuf, a.recvCount, a.recvType, r));
  }
  for (int k = 1; k < mask; k <<= 1) {
    const int child = vr + k;
    if (child >= p) break;
    move::recvBytes(s, tmp + k * m, std::min(k, p - child) * m, move::absRank(child, a.root, p));
  }
  s.endRound();
  if (vr != 0) {
    move::sendBytes(s, tmp, sub * m, move::absRank(vr - mask, a.root, p));
  } else {
    std::vector<move::Block> dst;
    for (int i = 1; i < p; ++i)
      dst.push_back(move::equalBlock(a.recvbuf, a.recvCount, a.recvType, move::absRank(i, a.root, p)));
    s.local([dst, tmp, m] {
      for (size_t i = 0; i < dst.size(); ++i) move::unpackBlock(dst[i], tmp + (i + 1) * m);
    });
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
