// Broadcast straight from the root.
//
// Steps: the root posts p - 1 sends of the whole buffer at once; every other
// rank posts one receive. One round.
//
// Cost: (p - 1) * (alpha + n * beta) at the root (the sends are concurrent,
// but they share the root's memory bandwidth); the others wait one message.
// The cheapest schedule for tiny communicators (p <= 2 it is the binomial
// tree; p = 3 too, save for send order).
// Restrictions: none; any p and root.
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status bcastLinear(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  if (r == a.root) {
    for (int i = 0; i < p; ++i)
      if (i != r) s.send(a.recvbuf, a.count, a.type, i);
  } else {
    s.recv(a.recvbuf, a.count, a.type, a.root);
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
