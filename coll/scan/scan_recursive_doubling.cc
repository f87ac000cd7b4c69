// Scan and exscan by recursive doubling (any op; rank order kept).
//
// Terms: `partial` is the reduction of the contiguous range of ranks this
// rank has heard from so far, itself included (starts as its own input);
// `result` is what it returns: x(0) op ... op x(r) for scan, the same
// without x(r) for exscan.
// Steps: in round k rank r exchanges `partial` with r ^ 2^k (when that
// rank exists). A partner below r covers the ranks just before r's range:
// partial = theirs op partial, and result = theirs op result (exscan: the
// first such message becomes result). A partner above: partial = partial
// op theirs, and result is unchanged. Lower ranks are always on the left,
// so non-commutative ops are fine.
//
// Cost: ceil(log2 p)*(alpha + n*beta + 2*n*gamma).
//
// Restrictions: none; any p (partners beyond p - 1 are skipped). Exscan
// leaves rank 0's recvbuf untouched (the standard leaves it undefined).
#include <utility>

#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status scanRecursiveDoubling(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  const bool ex = a.coll == Collective::kExscan;
  char* const result = static_cast<char*>(a.recvbuf);
  const void* mine = a.sendbuf;  // == recvbuf when in place

  if (!ex && !a.inPlace) s.local([=] { copyLike(mine, result, n, t); });
  if (p == 1) return Status::ok();
  char* partial = scratchLike(s, n, t);
  char* tmp = scratchLike(s, n, t);
  s.local([=] { copyLike(mine, partial, n, t); });
  bool haveResult = !ex;
  for (int mask = 1; mask < p; mask <<= 1) {
    const int peer = r ^ mask;
    if (peer >= p) continue;
    s.send(partial, n, t, peer);
    s.recv(tmp, n, t, peer);
    s.endRound();
    if (peer < r) {
      const bool first = !haveResult;
      s.local([=] {
        if (first) copyLike(tmp, result, n, t);
        else (void)reduceLocal(tmp, result, n, t, op);
        (void)reduceLocal(tmp, partial, n, t, op);
      });
      haveResult = true;
    } else {
      s.local([=] { (void)reduceLocal(partial, tmp, n, t, op); });  // tmp = partial op theirs
      std::swap(partial, tmp);
    }
  }
  return Status::ok();
}

}  // namespace loom::coll
