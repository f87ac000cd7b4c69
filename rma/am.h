// Operations as messages (Access::kMessage): what an origin sends on the
// window's private communicator and what the target's progress does with
// it (am_target.cc).
//
// A put or accumulate has no answer of its own: the target acknowledges
// what it applied, per origin, at the end of each pass (kTagAck, a count),
// so a flush is waiting for the count to catch up, one message per
// operation in each direction at most.
//
// Requests travel with tag kTagRequest from origin to target: a fixed
// header, the target pieces (address, length in the target's address
// space), then the packed origin data. Each reply goes to a tag the origin
// drew for it (>= kTagReplyBase), so a get's data lands straight in the
// origin's buffer by an ordinary receive with the origin's datatype. The
// target handles requests in the order they were matched, which is each
// origin's order (MPI's non-overtaking rule), so a flush or an unlock
// answered means every earlier operation of that origin is applied.
// Post and complete of post-start-complete-wait are plain messages too
// (kTagPost, kTagComplete), for every pair of ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/comm.h"

#include "core/request.h"
#include "core/status.h"

namespace loom::rma {

class Window;

enum : int {
  kTagRequest = 1,
  kTagPost = 2,
  kTagComplete = 3,
  kTagAck = 4,
  kTagReplyBase = 16,
  kTagReplySpan = 1 << 28,
};

enum class AmOp : uint8_t {
  kPut, kGet, kAcc, kGetAcc, kCas, kLock, kUnlock, kFlush,
};

struct AmHeader {
  AmOp op;
  uint8_t lockType;   // kLock: 1 shared, 2 exclusive
  uint16_t pad = 0;
  int32_t replyTag;   // where the answer goes (ops with one)
  uint32_t opAbi;     // accumulates: the MPI_Op's ABI value
  uint32_t typeAbi;   // accumulates: the predefined type of the elements
  uint32_t pieces;    // target pieces that follow
  uint32_t pad2 = 0;
  uint64_t bytes;     // packed data bytes (the total of the pieces)
};
static_assert(sizeof(AmHeader) == 32);

struct AmPiece {
  uint64_t addr;
  uint64_t bytes;
};

// The windows whose targets are reached by message, polled by one
// progress poller (registered while there is any).
struct Am {
  static void add(Window* w);
  static void remove(Window* w);
  // Waits for the window's replies in flight and frees what it holds.
  static void drain(Window* w);
  // The private communicators of the windows still registered (MPI_Finalize
  // synchronises on them before the progress thread stops).
  static std::vector<Comm*> communicators();
};

// Sends `bytes` at `buf` (malloc'ed; freed once sent) to window rank `dest`
// with `tag`; the request is not kept.
Status sendOwned(Window* w, int dest, int tag, void* buf, size_t bytes);

}  // namespace loom::rma
