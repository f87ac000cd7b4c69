// Helpers the origin side (ops.cc) and the target side (am_target.cc)
// share: moving bytes between piece lists, the accumulate mutex, and the
// combination of packed elements with an op.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <vector>

#include "core/request.h"
#include "core/status.h"
#include "rma/window.h"

namespace loom::rma {

// A request that is already complete (operations that finished in the call).
Request* completedRequest();
// The predefined type the elements of `t` are made of (its first leaf).
const Datatype* elementType(const Datatype* t);
// Spins (yielding when the node is oversubscribed) until the target's
// accumulate mutex is ours.
// (Inline: one exchange when free; OSU's atomics loops take it per call.)
void lockAccContended(Control* c);
inline void lockAcc(Control* c) {
  if (c->accLock.exchange(1, std::memory_order_acquire) != 0) [[unlikely]]
    lockAccContended(c);
}
inline void unlockAcc(Control* c) { c->accLock.store(0, std::memory_order_release); }
// dst and src cover the same number of bytes.
void copyPieces(const std::vector<iovec>& dst, const std::vector<iovec>& src);
void gatherPieces(const std::vector<iovec>& src, char* out);
void scatterPieces(const char* in, const std::vector<iovec>& dst);
// target = origin op target over `bytes` packed bytes of `elem` elements;
// MPI_REPLACE copies, MPI_NO_OP leaves the target.
Status combine(coll::Op* op, const Datatype* elem, const void* origin, void* target, size_t bytes);

}  // namespace loom::rma
