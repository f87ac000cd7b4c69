// The stream-ordered API (MPIX_Stream_*, MPIX_*_enqueue; mpi-ext.h) inside
// runtime/api: stream objects (stream_api.cc), the engine that runs
// enqueued operations in stream order (stream_enqueue.cc) and the
// enqueuing entry points (stream_enqueue_api.cc, stream_coll_api.cc).
// docs/gpu.md, "Stream-ordered operations", tells the design.
//
// Two kinds of stream:
//   host  MPIX_Stream_create without a GPU stream in its info. An enqueued
//         operation runs at once, as its blocking MPI call would: the
//         host thread is the stream, so calls run in the order made.
//   gpu   a cudaStream_t (or a mock device stream). An enqueued operation
//         is queued behind the work already on the stream and later work
//         waits for it, without the calling thread blocking: see Engine.
#pragma once

#include <mpi-ext.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/device.h"
#include "core/device_stream.h"
#include "core/progress_async.h"
#include "core/status.h"

namespace loom {
class Comm;
}

namespace loom::api::stream {

struct Op;  // an enqueued operation (stream_enqueue.cc)

struct StreamObj {
  static constexpr uint32_t kMagic = 0x5354524d;  // "STRM"
  uint32_t magic = kMagic;
  bool gpu = false;
  uint64_t value = 0;       // the handle the program passed (messages)
  device::Stream dev{};     // gpu: the program's stream
  device::Gate gate{};      // gpu: what the stream waits on
  uint32_t gateNext = 0;    // the last gate number handed out
  uint32_t gateOpened = 0;  // the last gate opened (gates open in order)
  int comms = 0;            // stream communicators it is attached to
  std::vector<Op*> ops;     // enqueued, not yet retired, in stream order
};

// nullptr for MPIX_STREAM_NULL and anything that is not a live stream.
StreamObj* toStream(MPIX_Stream h);
inline MPIX_Stream toHandle(StreamObj* s) {
  return reinterpret_cast<MPIX_Stream>(s);
}
// The local stream of a stream communicator; nullptr for any other one
// (or one made with MPIX_STREAM_NULL).
StreamObj* streamOf(Comm* c);

// The checks every enqueuing call starts with: MPI_Init done, `comm` valid
// (MPI_ERR_COMM) and a stream communicator (MPI_ERR_COMM: "has no
// stream"). MPI_SUCCESS or the code raised.
int front(MPI_Comm comm, const char* fn, Comm** c, StreamObj** s);

// Runs `body` as the generated entry points run an MPI function: under the
// API lock while the asynchronous progress thread runs
// (core/progress_async.h). The MPIX_ entry points are written by hand, so
// they take it themselves.
template <class Body>
int locked(Body&& body) {
  if (!progress::asyncOn()) [[likely]] {
    progress::enterUnlockedCall();
    int rc = body();
    progress::leaveUnlockedCall();
    return rc;
  }
  progress::ApiGuard guard;
  return body();
}

// ---- the engine (stream_enqueue.cc) ---------------------------------------

// Whether enqueued operations run on the device buffers themselves (the
// default) or on host twins of them (LOOM_STREAM_TWINS=1).
bool onTwins();

// The host twins of an operation's device buffers. add() every buffer the
// calling rank's part of the call touches, then commit() and pass
// translate(p) to the MPI call in place of each buffer.
class Staging {
 public:
  enum Dir : uint8_t { kIn = 1, kOut = 2, kInOut = 3 };
  // [p + lo, p + hi) of a buffer at `p`. Host buffers, MPI_IN_PLACE, NULL
  // and empty spans are ignored. `whole`: an output the call writes
  // entirely (no copy in first); other outputs are copied in too, so the
  // copy back of the whole span leaves untouched bytes as they were.
  void add(const void* p, int64_t lo, int64_t hi, Dir dir, bool whole = false);
  Status commit();
  void* translate(const void* p) const;
  bool empty() const { return spans_.empty(); }

  struct Span {
    const void* p;
    int64_t lo, hi;
    uint8_t dir;
    bool whole;
    void* host = nullptr;  // the twin of [p + lo, p + hi)
    size_t cap = 0;
  };
  std::vector<Span>& spans() { return spans_; }
  ~Staging();  // frees twins not handed to an operation

 private:
  std::vector<Span> spans_;
};

// The bytes `count` elements of `type` touch, as [*lo, *hi) from the
// buffer's address; empty for an invalid type or count (the MPI call's own
// checks then fail).
void typeSpan(int64_t count, MPI_Datatype type, int64_t* lo, int64_t* hi);
// The union of blocks i (counts[i] elements at displs[i] extents) of a
// v-collective buffer; empty when an array is NULL.
void blocksSpan(int n, const std::function<int64_t(int)>& counts,
                const std::function<int64_t(int)>& displs, MPI_Datatype type, int64_t* lo,
                int64_t* hi);
bool contiguous(MPI_Datatype type);

// What enqueue() does with an operation once its arguments are checked:
// `inner` is an inactive persistent request (MPI_Send_init, MPI_Recv_init,
// MPI_Allreduce_init ...) on the host twins; `status` (or NULL) receives a
// receive's status when it completes.
enum class OpKind : uint8_t {
  kBlocking,  // MPIX_Send/Recv_enqueue, the collectives: later work waits
  kStart,     // MPIX_Isend/Irecv_enqueue: later work does not wait
};
// Queues the operation on gpu stream `s`. kStart ops hand back a request
// for MPIX_Wait(all)_enqueue in *request. On failure nothing is left
// queued that could stop the stream; the Status says why.
Status enqueue(StreamObj* s, Comm* comm, OpKind kind, Staging& staging, MPI_Request inner,
               MPI_Status* status, const char* fn, MPI_Request* request);
// MPIX_Wait_enqueue / MPIX_Waitall_enqueue of requests enqueue() handed out
// (all of one stream); `statuses` as the call's (may be ignore).
Status enqueueWait(int count, MPI_Request reqs[], MPI_Status* statuses, bool all, const char* fn);
// How many requests of kStart operations on `s` the program still holds
// (not waited for with MPIX_Wait(all)_enqueue, not freed).
int unwaited(StreamObj* s);
// Whether `h` is a request of kStart operation (then *s its stream).
bool isEnqueuedRequest(MPI_Request h, StreamObj** s);

// A gpu stream created / about to be freed: the engine's poller and the
// progress thread follow the number of gpu streams. drain() waits until
// every operation of `s` (every stream: nullptr) retired.
void streamAdded(StreamObj* s);
void streamRemoved(StreamObj* s);
void drain(StreamObj* s);

}  // namespace loom::api::stream
