// Reduce-scatter (and reduce-scatter-block) by ring (commutative ops).
//
// Terms: block b is rank b's share of the result, counts[b] elements at
// element offset displ(b) = counts[0] + ... + counts[b-1] of the input.
// Steps: p-1 rounds. In round k rank r sends block (r-k-1) mod p to r+1
// and receives block (r-k-2) mod p from r-1. What it sends in round 0 is
// its own input block; in later rounds it first folds its own input into
// the block just received, then forwards it. The block received in the
// last round is r's own: folding its input in finishes it, and it is
// copied to recvbuf. Two scratch blocks alternate (one in flight out, one
// in flight in).
//
// Cost: (p-1)*alpha + (p-1)/p*n*beta + (p-1)/p*n*gamma for n input
// elements split evenly: bandwidth-optimal, linear in alpha.
//
// Restrictions: commutative ops (each block collects its contributions in
// ring order, starting at the rank after its owner). Any p; blocks of any
// (even zero) size. In place: the input is recvbuf itself, and the result
// is written to its start only after the last round.
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status reduceScatterRing(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const std::vector<int64_t> cnt = reduceScatterCounts(a, p);
  std::vector<int64_t> displ(p + 1, 0);
  for (int i = 0; i < p; ++i) displ[i + 1] = displ[i] + cnt[i];
  const int64_t maxCnt = *std::max_element(cnt.begin(), cnt.end());
  const char* in = static_cast<const char*>(a.sendbuf);
  char* out = static_cast<char*>(a.recvbuf);
  auto mod = [p](int x) { return ((x % p) + p) % p; };

  if (p == 1) {
    if (in != out) {
      const int64_t n = cnt[0];
      s.local([=] { copyLike(in, out, n, t); });
    }
    return Status::ok();
  }
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  char* buf[2] = {scratchLike(s, maxCnt, t), scratchLike(s, maxCnt, t)};
  int cur = 0;  // buf[cur] receives this round
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r - k - 1), rb = mod(r - k - 2);
    if (k == 0) {
      s.send(elemAt(in, displ[sb], t), cnt[sb], t, right);
    } else {
      char* b = buf[1 - cur];  // received last round: block sb
      const char* mine = elemAt(in, displ[sb], t);
      const int64_t c = cnt[sb];
      s.local([=] { (void)reduceLocal(mine, b, c, t, op); });
      s.send(b, c, t, right);
    }
    s.recv(buf[cur], cnt[rb], t, left);
    s.endRound();
    cur = 1 - cur;
  }
  char* last = buf[1 - cur];  // block r
  const char* mine = elemAt(in, displ[r], t);
  const int64_t c = cnt[r];
  s.local([=] {
    (void)reduceLocal(mine, last, c, t, op);
    copyLike(last, out, c, t);
  });
  return Status::ok();
}

}  // namespace loom::coll
