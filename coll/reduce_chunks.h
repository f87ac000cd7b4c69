// Reduction messages cut into chunks, alike on every rank.
//
// Ring and Rabenseifner allreduce and ring reduce-scatter send blocks that
// the receiver reduces. A rank whose buffers are on a GPU runs them
// pipelined (coll/device_pipe.h): while chunk k of a block is in flight,
// chunk k-1 is reduced on the device. That needs one message per chunk.
// Ranks of one call may differ in where their buffers are (a host rank and
// a device rank in one allreduce), and a receive must get exactly the
// bytes its sender sent, so the cut depends only on what every rank knows
// alike, the element count, the type's size and LOOM_COLL_REDUCE_CHUNK,
// and the host forms of those algorithms cut their messages the same way.
//
// Only messages whose receiver reduces them are cut; plain moves (an
// allgather phase, Rabenseifner's fold-out) go whole on every rank.
//
// Cost on host ranks: nothing at or below the chunk size (one piece is the
// message it always was); above, one message per chunk instead of one
// (alpha per extra chunk, about 1% of a 1 MiB chunk's transfer time here).
// The pieces are posted together in one round, so the host algorithms keep
// their round structure.
#pragma once

#include <cstdint>

#include "coll/schedule.h"
#include "core/datatype.h"

namespace loom::coll {

class Op;

// The chunk size in bytes (LOOM_COLL_REDUCE_CHUNK, read once; 0: never
// cut). Every rank of a job must use the same value.
int64_t reduceChunkBytes();
// Tests only: sets it (-1 goes back to the parameter); returns the old one.
int64_t setReduceChunkBytesForTest(int64_t bytes);

// Into how many pieces a reduction message of `count` elements of `t` is
// cut: ceil(bytes / chunk), at least 1, at most `count` (no empty pieces).
int64_t reduceChunks(int64_t count, const Datatype* t);

// Piece c of `count` elements cut into k: sizes differ by at most one
// element, the first count % k one larger (as blockSize/blockOffset).
inline int64_t chunkSize(int64_t count, int64_t k, int64_t c) {
  return count / k + (c < count % k ? 1 : 0);
}
inline int64_t chunkOffset(int64_t count, int64_t k, int64_t c) {
  const int64_t q = count / k, r = count % k;
  return c * q + (c < r ? c : r);
}

// The host forms: one send, receive or folding receive per piece, all in
// the current round. recvReduceChunks is Schedule::recvReduce cut into
// pieces (a type that cannot fold is received whole into scratch and
// reduced in a round of its own, so it ends the round too: add it last).
void sendChunks(Schedule& s, const void* buf, int64_t count, Datatype* t, int peer);
void recvChunks(Schedule& s, void* buf, int64_t count, Datatype* t, int peer);
void recvReduceChunks(Schedule& s, void* buf, int64_t count, Datatype* t, Op* op, int peer);
// buf = received op base, piece by piece (Schedule::recvReduceFrom); with
// `baseFirst`, buf = base op received (base must not be buf).
void recvReduceChunksFrom(Schedule& s, void* buf, const void* base, int64_t count, Datatype* t,
                          Op* op, int peer, bool baseFirst = false);

}  // namespace loom::coll
