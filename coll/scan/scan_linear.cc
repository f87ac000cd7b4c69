// Scan and exscan along a chain in rank order (any op).
//
// Steps: rank r receives the prefix x(0) op ... op x(r-1) from r-1 (rank 0
// receives nothing), combines it with its own input on the right, and
// sends the new prefix to r+1. Scan returns the new prefix; exscan the
// received one.
//
// Cost: (p-1)*(alpha + n*beta + n*gamma) on the last rank's path; each
// rank sends once, so the least traffic, but latency grows with p.
// Recursive doubling beats it from p = 3 on; kept for p <= 2, where the
// two coincide and this one needs no scratch, and as a reference.
//
// Restrictions: none; any p.
#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status scanLinear(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  const bool ex = a.coll == Collective::kExscan;
  char* const result = static_cast<char*>(a.recvbuf);
  const void* mine = a.sendbuf;

  if (!ex) {
    if (!a.inPlace) s.local([=] { copyLike(mine, result, n, t); });
    if (r > 0) {
      char* prefix = scratchLike(s, n, t);
      s.recv(prefix, n, t, r - 1);
      s.endRound();
      s.local([=] { (void)reduceLocal(prefix, result, n, t, op); });
    }
    if (r < p - 1) {
      s.send(result, n, t, r + 1);
      s.endRound();
    }
    return Status::ok();
  }
  // Exscan: recvbuf gets the prefix; the next rank gets prefix op mine.
  // In place, `mine` is recvbuf itself: keep a copy before it is overwritten.
  const void* own = mine;
  if (a.inPlace && r > 0 && r < p - 1) {
    char* c = scratchLike(s, n, t);
    s.local([=] { copyLike(mine, c, n, t); });
    own = c;
  }
  if (r > 0) {
    s.recv(result, n, t, r - 1);
    s.endRound();
  }
  if (r < p - 1) {
    if (r == 0) {
      s.send(own, n, t, 1);
    } else {
      char* next = scratchLike(s, n, t);
      s.local([=] {
        copyLike(own, next, n, t);
        (void)reduceLocal(result, next, n, t, op);  // next = prefix op mine
      });
      s.send(next, n, t, r + 1);
    }
    s.endRound();
  }
  return Status::ok();
}

}  // namespace loom::coll
