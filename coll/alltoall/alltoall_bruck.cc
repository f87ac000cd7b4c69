// Alltoall by Bruck's algorithm (small blocks, many ranks).
//
// Terms: a scratch buffer of p packed blocks of m bytes.
// Steps:
//   1. rotate: scratch block i = the send block for rank (r + i) mod p;
//   2. for each k = 1, 2, 4, ... < p: pack the scratch blocks whose index
//      has bit k set, send them to (r + k) mod p, receive as many from
//      (r - k) mod p and put them back at the same indices. A block at
//      index i thus travels i ranks forward in all;
//   3. scratch block i now comes from rank (r - i) mod p: unpack it there
//      in the receive buffer.
// MPI_IN_PLACE needs no extra care: step 1 packs the whole receive buffer
// before anything arrives.
//
// Cost: ceil(log2 p) * alpha + ceil(log2 p) * (n/2) * beta for n = p * m
// bytes, plus a pack and an unpack per step: log2 latencies instead of
// p - 1, paid for with about log2(p)/2 times more data: only small blocks.
// Restrictions: alltoall only (equal blocks); any p (the bit tests of step
// 2 just find fewer blocks when p is not a power of two).
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status alltoallBruck(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const size_t m = a.recvType->packedSize(a.recvCount);
  std::vector<move::Block> src(p), dst(p);
  for (int i = 0; i < p; ++i) {
    const int to = (r + i) % p, from = (r - i + p) % p;
    src[i] = a.inPlace ? move::equalBlock(a.recvbuf, a.recvCount, a.recvType, to)
                       : move::equalBlock(a.sendbuf, a.count, a.type, to);
    dst[i] = move::equalBlock(a.recvbuf, a.recvCount, a.recvType, from);
  }
  char* tmp = static_cast<char*>(s.scratch(p * m));
  s.local([src, tmp, m] {
    for (size_t i = 0; i < src.size(); ++i) move::packBlock(src[i], tmp + i * m);
  });
  char* out = static_cast<char*>(s.scratch((p / 2 + 1) * m));
  char* in = static_cast<char*>(s.scratch((p / 2 + 1) * m));
  int prev = 0;  // the bit whose blocks arrive in `in` during the previous round
  for (int k = 1; k < p; k <<= 1) {
    size_t blocks = 0;
    for (int i = 0; i < p; ++i) blocks += (i & k) ? 1 : 0;
    s.local([=] {
      size_t j = 0;
      if (prev)
        for (int i = 0; i < p; ++i)
          if (i & prev) std::memcpy(tmp + i * m, in + (j++) * m, m);
      j = 0;
      for (int i = 0; i < p; ++i)
        if (i & k) std::memcpy(out + (j++) * m, tmp + i * m, m);
    });
    move::sendBytes(s, out, blocks * m, (r + k) % p);
    move::recvBytes(s, in, blocks * m, (r - k + p) % p);
    s.endRound();
    prev = k;
  }
  s.local([=] {
    size_t j = 0;
    if (prev)
      for (int i = 0; i < p; ++i)
        if (i & prev) std::memcpy(tmp + i * m, in + (j++) * m, m);
    for (int i = 0; i < p; ++i) move::unpackBlock(dst[i], tmp + i * m);
  });
  return Status::ok();
}

}  // namespace loom::coll
