// Reduce along a chain in rank order (any op, including non-commutative).
//
// Steps: rank p-1 sends its contribution to rank p-2; each rank i below
// receives the partial x(i+1) op ... op x(p-1) from i+1, computes
// x(i) op partial (its own operand on the left: rank order is kept) and
// passes it down; rank 0 ends with x(0) op ... op x(p-1) and sends it to
// the root (or keeps it when it is the root).
//
// Cost: p-1 (+1 when root != 0) sequential steps of (alpha + n*beta +
// n*gamma). Linear in p, but every rank reduces once and holds O(n) memory,
// where a root that received from everyone would do all p-1 reductions.
//
// Restrictions: none; it is the order-preserving fallback. Any p (nothing
// depends on powers of two). Also the first phase of "reduce_bcast" for
// allreduce and of "reduce_scatterv" for reduce-scatter.
#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status reduceLinear(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  const bool isRoot = r == a.root;
  const void* mine = a.sendbuf;  // == recvbuf at an in-place root

  if (p == 1) {
    if (!a.inPlace) {
      void* dst = a.recvbuf;
      s.local([=] { copyLike(mine, dst, n, t); });
    }
    return Status::ok();
  }
  // The partial this rank passes on.
  const void* out = mine;
  if (r < p - 1) {
    char* tmp = scratchLike(s, n, t);
    s.recv(tmp, n, t, r + 1);
    s.endRound();
    s.local([=] { (void)reduceLocal(mine, tmp, n, t, op); });  // tmp = mine op tmp
    out = tmp;
  }
  if (r > 0) {
    s.send(out, n, t, r - 1);
    s.endRound();
  } else if (isRoot) {
    void* dst = a.recvbuf;
    s.local([=] { copyLike(out, dst, n, t); });
  } else {
    s.send(out, n, t, a.root);
    s.endRound();
  }
  if (isRoot && r != 0) {
    s.recv(a.recvbuf, n, t, 0);
    s.endRound();
  }
  return Status::ok();
}

}  // namespace loom::coll
