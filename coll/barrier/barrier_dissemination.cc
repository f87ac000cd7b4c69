// Barrier by dissemination (Hensgen, Finkel and Manber).
//
// Steps: in round k = 0, 1, ... while 2^k < p, rank r sends an empty message
// to (r + 2^k) mod p and receives one from (r - 2^k) mod p. After round k a
// rank has heard, directly or through others, from the 2^(k+1) - 1 ranks
// before it, so after ceil(log2 p) rounds every rank knows all have arrived.
//
// Cost: ceil(log2 p) * alpha (no bandwidth term: messages are empty).
// Restrictions: none; any p, no power-of-two case to special-case (the
// modular distances wrap around). One rank: no rounds at all.
#include "coll/algorithms.h"

namespace loom::coll {

Status barrierDissemination(Schedule& s, const CollArgs&) {
  Comm* comm = s.comm();
  const int p = comm->size(), r = comm->rank();
  Datatype* byte = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
  for (int dist = 1; dist < p; dist *= 2) {
    s.send(nullptr, 0, byte, (r + dist) % p);
    s.recv(nullptr, 0, byte, (r - dist + p) % p);
    s.endRound();
  }
  return Status::ok();
}

}  // namespace loom::coll
