// Helpers of the shared-memory algorithms: moving pieces of a user buffer's
// packed stream in and out of the staging slots.
#pragma once

#include <algorithm>
#include <cstring>

#include "coll/op.h"
#include "coll/shm/shm_coll.h"
#include "core/copy_small.h"
#include "core/datatype.h"

namespace loom::coll::shm {

// Bytes [off, off + len) of the packed stream of (buf, count, t) to dst.
// A piece past the end of (buf, count, t) is cut short: a rank whose counts
// disagree with its peers' (an erroneous call, reported by the signatures)
// must still not read or write outside its own buffer.
inline void packPiece(const void* buf, int64_t count, Datatype* t, size_t off, void* dst,
                      size_t len) {
  const size_t have = t->packedSize(count);
  if (off >= have) return;
  len = std::min(len, have - off);
  if (len == 0) return;
  if (t->isContiguous())
    copySmall(static_cast<char*>(dst), static_cast<const char*>(buf) + t->trueLb() + off, len);
  else
    (void)t->pack(buf, count, off, dst, len);
}

// The mirror: src to bytes [off, off + len) of (buf, count, t)'s stream.
inline void unpackPiece(void* buf, int64_t count, Datatype* t, size_t off, const void* src,
                        size_t len) {
  const size_t have = t->packedSize(count);
  if (off >= have) return;
  len = std::min(len, have - off);
  if (len == 0) return;
  if (t->isContiguous())
    copySmall(static_cast<char*>(buf) + t->trueLb() + off, static_cast<const char*>(src), len);
  else
    (void)t->unpack(buf, count, off, src, len);
}

// Copies bytes [from, from + len) of (src, scount, st)'s stream to bytes
// [to, to + len) of (dst, dcount, dt)'s, straight from buffer to buffer;
// both types contiguous. Cut short like packPiece where either buffer ends
// first.
inline void copyDirect(const void* src, int64_t scount, Datatype* st, size_t from, void* dst,
                       int64_t dcount, Datatype* dt, size_t to, size_t len) {
  const size_t shave = st->packedSize(scount), dhave = dt->packedSize(dcount);
  if (from >= shave || to >= dhave) return;
  len = std::min({len, shave - from, dhave - to});
  if (len)
    copySmall(static_cast<char*>(dst) + dt->trueLb() + to,
              static_cast<const char*>(src) + st->trueLb() + from, len);
}

// How far the root of a bcast or scatter may run ahead of its slowest reader
// within one call (steps). A root only writes, and the readers only watch
// its flag, so a root that never waited would never compare the others'
// descriptions of the call (a different root, say) with its own: a call of
// more steps than this waits at least once, which compares them all. Across
// calls the root runs up to the depth ahead.
//
// 16 steps, or half the depth where that is more (64 with the oversubscribed
// default of 128 slots). A window shorter than a call makes its root wait,
// step by step, for the readers whose pieces it wrote a window before (a
// scatter's reader gets there only once it has copied its block), and where
// ranks outnumber cores each of those waits hands the core round. 16 ranks
// on 2 cores, 100 calls of 32 KiB scatter blocks (512 KiB, 32 steps of
// 16 KiB), four interleaved runs: 60-74 us with 16, 39-43 with 64; 64 KiB
// blocks 148-172 against 92-98; 1 MiB bcasts 453-503 against 332-360 (three
// runs). Waiting instead only once, at step 16, until every rank has
// entered the call: 60-74 and 106-117 us (the root loses its lead).
constexpr uint32_t kRootWindowMin = 16;
inline uint32_t rootWindow(const ShmColl& c) {
  return std::max<uint32_t>(kRootWindowMin, static_cast<uint32_t>(c.depth() / 2));
}
inline bool rootMayWrite(ShmColl& c, const ShmOp& op, uint64_t k) {
  const uint32_t w = rootWindow(c);
  return c.slotFree(k) && (op.step < w || c.allReached(k - w + 1));
}
// The root has written every step of a call: one of more than
// kRootWindowMin steps (256 KiB with the default slot) that never had to
// wait compares the peers already in the call (without waiting for the
// others), so two ranks that both think they are the root mostly learn it
// in the calls between kRootWindowMin steps and the window, too.
inline void rootWrote(ShmColl& c, const ShmOp& op) {
  if (op.steps > kRootWindowMin) c.verifyPeers();
}

// Where step op.step of an op that moves `total` bytes lies: its global
// number k and its bytes [off, off + len) of the stream.
struct Step {
  uint64_t k;
  size_t off, len;
};
inline Step stepAt(const ShmOp& op, size_t total) {
  const size_t off = op.step * op.piece;
  return Step{op.base + op.step, off, std::min(op.piece, total - std::min(total, off))};
}

// Phase 0 of a step in which every rank stages its own piece of (buf,
// count, t) and publishes the step: false while its slot is still read.
inline bool stageOwn(ShmColl& c, ShmOp& op, const Step& s, const void* buf, int64_t count,
                     Datatype* t) {
  if (op.phase != 0) return true;
  if (!c.slotFree(s.k)) return false;  // everyone is done with this slot
  packPiece(buf, count, t, s.off, c.slot(c.rank(), s.k), s.len);
  c.publish(s.k);
  op.phase = 1;
  return true;
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

// Folds the pieces of step k (bytes [off, off + len) of the stream) into
// the call's result, through the scratch piece when the type is not
// contiguous.
inline void foldIntoResult(ShmColl& c, ShmOp& op, uint64_t k, size_t off, size_t len) {
  const CollArgs& a = op.args;
  if (len == 0) return;
  if (a.type->isContiguous()) {
    foldSlots(c, k, len, static_cast<char*>(a.recvbuf) + a.type->trueLb() + off, a.type, a.op);
  } else {
    foldSlots(c, k, len, op.scratch.data(), a.type, a.op);
    unpackPiece(a.recvbuf, a.count, a.type, off, op.scratch.data(), len);
  }
}

// Starts a call on the communicator's context: `bytes` is what the ranks
// must agree on (its signature), and the call moves `stream` bytes through
// the slots in pieces of `unit`-aligned size (one step at least). With
// `scratch`, the op gets a scratch buffer of at most one piece.
// `described`: the bytes the op's signature states (SIZE_MAX: `bytes`);
// allgather and alltoall state what this rank sends, so that a rank whose
// send and receive counts disagree shows it to its peers.
inline Status startOp(const CollArgs& a, ShmOp::RunFn run, size_t bytes, size_t stream,
                      Request** out, size_t unit = 1, bool scratch = false,
                      size_t described = SIZE_MAX) {
  ShmColl* c = ShmColl::of(a.comm);
  ShmOp* op = c->newOp();
  op->args = a;
  op->run = run;
  op->bytes = bytes;
  op->described = described == SIZE_MAX ? bytes : described;
  op->piece = c->slotBytes() / unit * unit;
  op->steps = stepsFor(stream, op->piece);
  if (scratch) op->scratch.resize(std::min(stream, op->piece));
  return c->start(op, out);
}

// A reduction (reduce or allreduce): pieces are whole reduction units
// (reduceUnit), and a type that is not contiguous folds through a packed
// scratch piece.
inline Status startReduction(const CollArgs& a, ShmOp::RunFn run, Request** out) {
  const size_t bytes = a.type->packedSize(a.count);
  return startOp(a, run, bytes, bytes, out, reduceUnit(a.type, a.op), !a.type->isContiguous());
}

}  // namespace loom::coll::shm
