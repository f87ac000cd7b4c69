#include "coll/reduce_chunks.h"

#include "coll/op.h"
#include "core/params.h"
#include "p2p/p2p.h"

namespace loom::coll {

namespace {
int64_t gChunk = -1;  // -1: not read yet
}  // namespace

int64_t reduceChunkBytes() {
  if (gChunk < 0) [[unlikely]] {
    const int64_t v = params::getInt("LOOM_COLL_REDUCE_CHUNK");
    gChunk = v > 0 ? v : 0;
  }
  return gChunk;
}

int64_t setReduceChunkBytesForTest(int64_t bytes) {
  const int64_t old = reduceChunkBytes();
  gChunk = bytes;
  if (bytes < 0) (void)reduceChunkBytes();
  return old;
}

int64_t reduceChunks(int64_t count, const Datatype* t) {
  const int64_t chunk = reduceChunkBytes();
  if (count <= 1 || chunk == 0) return 1;
  const int64_t bytes = count * t->size();
  if (bytes <= chunk) return 1;
  const int64_t k = (bytes + chunk - 1) / chunk;
  return k < count ? k : count;
}

void sendChunks(Schedule& s, const void* buf, int64_t count, Datatype* t, int peer) {
  const int64_t k = reduceChunks(count, t);
  for (int64_t c = 0; c < k; ++c)
    s.send(elemAt(buf, chunkOffset(count, k, c), t), chunkSize(count, k, c), t, peer);
}

void recvChunks(Schedule& s, void* buf, int64_t count, Datatype* t, int peer) {
  const int64_t k = reduceChunks(count, t);
  for (int64_t c = 0; c < k; ++c)
    s.recv(elemAt(buf, chunkOffset(count, k, c), t), chunkSize(count, k, c), t, peer);
}

void recvReduceChunks(Schedule& s, void* buf, int64_t count, Datatype* t, Op* op, int peer) {
  const int64_t k = reduceChunks(count, t);
  if (k == 1) {
    s.recvReduce(buf, count, t, op, peer);
    return;
  }
  if (p2p::canFold(t)) {  // each piece folded as it arrives (k > 1: no piece is empty)
    for (int64_t c = 0; c < k; ++c)
      s.recvReduce(elemAt(buf, chunkOffset(count, k, c), t), chunkSize(count, k, c), t, op, peer);
    return;
  }
  // As recvReduce's fallback: the pieces into one scratch block, reduced
  // whole in the next round.
  char* tmp = scratchLike(s, count, t);
  recvChunks(s, tmp, count, t, peer);
  s.endRound();
  s.local([=] { (void)reduceLocal(tmp, buf, count, t, op); });
}

void recvReduceChunksFrom(Schedule& s, void* buf, const void* base, int64_t count, Datatype* t,
                          Op* op, int peer, bool baseFirst) {
  if (count == 0 || !p2p::canFold(t)) {
    if (baseFirst) {  // into buf, cut as the sender cuts it; the base folded in after
      recvChunks(s, buf, count, t, peer);
      s.endRound();
      s.local([=] { (void)reduceLocal(base, buf, count, t, op); });
      return;
    }
    if (base != buf) s.local([=] { copyLike(base, buf, count, t); });
    recvReduceChunks(s, buf, count, t, op, peer);
    return;
  }
  const int64_t k = reduceChunks(count, t);
  for (int64_t c = 0; c < k; ++c) {
    const int64_t off = chunkOffset(count, k, c);
    s.recvReduceFrom(elemAt(buf, off, t), elemAt(base, off, t), chunkSize(count, k, c), t, op,
                     peer, baseFirst);
  }
}

}  // namespace loom::coll
