// Scatter along a binomial tree (the mirror of the binomial gather).
//
// Terms: relative rank vr = (r - root) mod p; a rank's subtree is the
// relative ranks [vr, vr + min(lowbit(vr), p - vr)); blocks are m bytes,
// packed.
// Steps: the root packs the blocks of relative ranks 1 .. p-1 (rotated by
// root) into a scratch buffer and sends each child vr + 2^k its subtree's
// blocks, all at once; it copies its own block unless it passed
// MPI_IN_PLACE. An inner rank receives its subtree's blocks into scratch,
// then unpacks its own and forwards each child its part. A leaf receives
// its block straight into the user's receive buffer.
//
// Cost: ceil(log2 p) * alpha + (p-1)/p * p*m * beta from the root, plus a
// pack at the root and a copy per level at inner ranks. For small blocks;
// large blocks prefer the linear scatter (no copies).
// Restrictions: none; any p (subtrees are cut at p), any root.
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status scatterBinomial(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const int vr = move::relRank(r, a.root, p);
  const move::Block mine{static_cast<char*>(a.recvbuf), a.recvCount, a.recvType};
  const size_t m = vr == 0 ? a.type->packedSize(a.count) : mine.bytes();
  int mask = 1;
  while (mask < p && !(vr & mask)) mask <<= 1;
  const int sub = std::min(mask, p - vr);
  if (sub == 1 && vr != 0) {  // a leaf
    move::recvBlock(s, mine, move::absRank(vr - mask, a.root, p));
    s.endRound();
    return Status::ok();
  }
  char* tmp = static_cast<char*>(s.scratch(sub * m));
  if (vr == 0) {
    std::vector<move::Block> src;
    for (int i = 1; i < p; ++i)
      src.push_back(move::equalBlock(a.sendbuf, a.count, a.type, move::absRank(i, a.root, p)));
    s.local([src, tmp, m] {
      for (size_t i = 0; i < src.size(); ++i) move::packBlock(src[i], tmp + (i + 1) * m);
    });
    if (!a.inPlace) move::scheduleCopy(s, move::equalBlock(a.sendbuf, a.count, a.type, r), mine);
  } else {
    move::recvBytes(s, tmp, sub * m, move::absRank(vr - mask, a.root, p));
    s.endRound();
    s.local([mine, tmp] { move::unpackBlock(mine, tmp); });
  }
  for (int k = mask >> 1; k > 0; k >>= 1) {
    const int child = vr + k;
    if (child >= p) continue;
    move::sendBytes(s, tmp + k * m, std::min(k, p - child) * m, move::absRank(child, a.root, p));
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
