// Reduce-scatter (and reduce-scatter-block) as a reduce of the whole input
// to rank 0, then a linear scatter of the blocks (any op).
//
// Steps: the full vector is reduced into a scratch buffer on rank 0 by the
// binomial tree when the op is commutative, else by the rank-order chain
// ("linear" reduce); rank 0 then sends block b to rank b, one message
// each, all in one round, and copies its own block.
//
// Cost (commutative): ceil(log2 p)*(alpha + n*beta + n*gamma) for the
// reduce plus (p-1)*alpha + (p-1)/p*n*beta for the scatter; with a
// non-commutative op the reduce is the chain's (p-1)*(alpha + n*beta +
// n*gamma). Every rank but 0 sends the whole vector: the fallback for
// non-commutative ops, which the ring cannot keep in order.
//
// Restrictions: none; any p, any block sizes.
#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status reduceScatterReduceScatterv(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  const std::vector<int64_t> cnt = reduceScatterCounts(a, p);
  std::vector<int64_t> displ(p + 1, 0);
  for (int i = 0; i < p; ++i) displ[i + 1] = displ[i] + cnt[i];
  const int64_t total = displ[p];

  CollArgs red = a;
  red.coll = Collective::kReduce;
  red.root = 0;
  red.count = total;
  red.inPlace = false;
  char* full = r == 0 ? scratchLike(s, total, t) : nullptr;
  red.recvbuf = full;
  LOOM_TRY(a.op->commutative() ? reduceBinomial(s, red) : reduceLinear(s, red));
  s.endRound();
  if (r == 0) {
    for (int b = 1; b < p; ++b) s.send(elemAt(full, displ[b], t), cnt[b], t, b);
    void* out = a.recvbuf;
    const int64_t c = cnt[0];
    s.local([=] { copyLike(full, out, c, t); });
  } else {
    s.recv(a.recvbuf, cnt[r], t, 0);
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
