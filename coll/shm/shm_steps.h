// Helpers of the shared-memory algorithms: moving pieces of a user buffer's
// packed stream in and out of the staging slots.
#pragma once

#include <algorithm>
#include <cstring>

#include "coll/op.h"
#include "coll/shm/shm_coll.h"
#include "core/datatype.h"

namespace loom::coll::shm {

// Bytes [off, off + len) of the packed stream of (buf, count, t) to dst.
inline void packPiece(const void* buf, int64_t count, Datatype* t, size_t off, void* dst,
                      size_t len) {
  if (len == 0) return;
  if (t->isContiguous())
    std::memcpy(dst, static_cast<const char*>(buf) + t->trueLb() + off, len);
  else
    (void)t->pack(buf, count, off, dst, len);
}

// The mirror: src to bytes [off, off + len) of (buf, count, t)'s stream.
inline void unpackPiece(void* buf, int64_t count, Datatype* t, size_t off, const void* src,
                        size_t len) {
  if (len == 0) return;
  if (t->isContiguous())
    std::memcpy(static_cast<char*>(buf) + t->trueLb() + off, src, len);
  else
    (void)t->unpack(buf, count, off, src, len);
}

// Steps to move `bytes` through slots in pieces of `piece` bytes (at least
// one: a zero-byte call still synchronises like its collective must).
inline uint32_t stepsFor(size_t bytes, size_t piece) {
  return bytes == 0 ? 1 : static_cast<uint32_t>((bytes + piece - 1) / piece);
}

// The part of [lo, hi) that falls in [off, off + len): its start, and its
// length (0 when they do not meet).
struct Overlap {
  size_t at, len;
};
inline Overlap overlap(size_t lo, size_t hi, size_t off, size_t len) {
  const size_t a = std::max(lo, off), b = std::min(hi, off + len);
  return a < b ? Overlap{a, b - a} : Overlap{a, 0};
}

// Reduces the pieces every rank staged at step k (`len` packed bytes each)
// into `dst` in rank order, x0 op (x1 op (... op x[p-1])), so every rank
// that folds gets the same bits and non-commutative ops keep their order.
inline void foldSlots(ShmColl& c, uint64_t k, size_t len, void* dst, Datatype* t, Op* op) {
  const int p = c.size();
  std::memcpy(dst, c.slot(p - 1, k), len);
  for (int r = p - 2; r >= 0; --r) reducePacked(c.slot(r, k), dst, len, t, op);
}

// Starts a reduction op (reduce or allreduce) on the communicator's
// context: pieces are whole reduction units (reduceUnit), and a type that
// is not contiguous folds through a packed scratch piece.
inline Status startReduction(const CollArgs& a, ShmOp::RunFn run, Request** out) {
  ShmColl* c = ShmColl::of(a.comm);
  ShmOp* op = c->newOp();
  op->args = a;
  op->run = run;
  op->bytes = a.type->packedSize(a.count);
  const size_t unit = reduceUnit(a.type, a.op);
  op->piece = c->slotBytes() / unit * unit;
  op->steps = stepsFor(op->bytes, op->piece);
  if (!a.type->isContiguous()) op->scratch.resize(std::min(op->bytes, op->piece));
  return c->start(op, out);
}

}  // namespace loom::coll::shm
