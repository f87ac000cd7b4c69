// Allreduce as a reduce to rank 0 along the rank-order chain ("linear"
// reduce), then a binomial broadcast from rank 0 (any op).
//
// Steps: the reduce of reduce_linear.cc (rank p-1 to 0, each rank folding
// its operand in on the left), then the broadcast: a rank receives from
// the rank that differs in its lowest set bit and forwards to
// rank + 2^j for every 2^j below that bit (rank 0: below p).
// The result is computed once, on rank 0, and copied everywhere: bitwise
// identical on every rank.
//
// Cost: (p-1)*(alpha + n*beta + n*gamma) + ceil(log2 p)*(alpha + n*beta).
// Slow; kept as the simplest order-preserving reference and reachable via
// LOOM_COLL_ALLREDUCE=reduce_bcast (recursive doubling keeps rank order
// too, at log p cost, so the rules never need this one).
//
// Restrictions: none; any p and n.
#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status allreduceReduceBcast(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  CollArgs red = a;
  red.coll = Collective::kReduce;
  red.root = 0;
  // At rank 0 the reduce writes recvbuf; elsewhere recvbuf just waits for
  // the broadcast (a non-root's sendbuf is never written).
  LOOM_TRY(reduceLinear(s, red));
  s.endRound();
  if (p == 1) return Status::ok();
  int low = 1;
  while (low < p && !(r & low)) low <<= 1;  // r's lowest set bit (p for rank 0)
  if (r != 0) {
    s.recv(a.recvbuf, a.count, a.type, r - low);
    s.endRound();
  }
  for (int m = low >> 1; m >= 1; m >>= 1)
    if (r + m < p) s.send(a.recvbuf, a.count, a.type, r + m);
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
