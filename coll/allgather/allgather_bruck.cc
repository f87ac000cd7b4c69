// Allgather by Bruck's algorithm (concatenation; any rank count).
//
// Terms: a scratch buffer of p packed blocks of m bytes; after the last
// step its block i holds the block of rank (r + i) mod p.
// Steps: pack the own block into scratch block 0. In step k, with
// d = 2^k < p, send the first min(d, p - d) scratch blocks to (r - d) mod p
// and receive as many from (r + d) mod p behind them, at block d (the
// sender's first blocks are ranks r + d, r + d + 1, ...). Finally unpack
// scratch block i into the receive buffer's block (r + i) mod p.
//
// Cost: ceil(log2 p) * alpha + (p-1)/p * n * beta for n = p * m bytes, plus
// a pack and an unpack of the whole result: log2 latencies for any p, so
// the choice for small blocks when p is not a power of two.
// Restrictions: none; the last step sends p - d < d blocks when p is not a
// power of two, which is how it handles any p.
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status allgatherBruck(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const move::Block own =
      a.inPlace ? move::equalBlock(a.recvbuf, a.recvCount, a.recvType, r)
                : move::Block{static_cast<char*>(const_cast<void*>(a.sendbuf)), a.count, a.type};
  const size_t m = a.recvType->packedSize(a.recvCount);
  if (p == 1) {
    if (!a.inPlace) move::scheduleCopy(s, own, move::equalBlock(a.recvbuf, a.recvCount, a.recvType, r));
    return Status::ok();
  }
  char* tmp = static_cast<char*>(s.scratch(p * m));
  s.local([own, tmp] { move::packBlock(own, tmp); });
  for (int d = 1; d < p; d <<= 1) {
    const size_t blocks = std::min(d, p - d);
    move::sendBytes(s, tmp, blocks * m, (r - d + p) % p);
    move::recvBytes(s, tmp + d * m, blocks * m, (r + d) % p);
    s.endRound();
  }
  std::vector<move::Block> dst;
  for (int i = 0; i < p; ++i)
    dst.push_back(move::equalBlock(a.recvbuf, a.recvCount, a.recvType, (r + i) % p));
  const bool skipOwn = a.inPlace;
  s.local([dst, tmp, m, skipOwn] {
    for (size_t i = skipOwn ? 1 : 0; i < dst.size(); ++i) move::unpackBlock(dst[i], tmp + i * m);
  });
  return Status::ok();
}

}  // namespace loom::coll
