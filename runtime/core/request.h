// Request: one operation in flight (a send, a receive, a collective).
//
// The layer that starts an operation fills the "operation" fields; the layer
// that progresses it sets `complete` and the result fields. Requests come
// from a free list (allocation is on the hot path of every MPI_Isend).
// Persistent requests stay allocated across MPI_Start/MPI_Wait cycles.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace loom {

class Comm;
class Datatype;
namespace device {
class Stage;
}

// kGeneralized: MPI_Grequest_start (the user completes it; runtime/api/
// grequest_api.cc). kCompound: MPI_Isendrecv(_replace), done when its send
// and receive are (owner: the parts; runtime/api/request_compound.cc).
enum class ReqKind : uint8_t { kSend, kRecv, kColl, kDone, kGeneralized, kCompound };
enum class SendMode : uint8_t { kStandard, kSync, kReady, kBuffered };
// Which of a communicator's contexts a message travels in: user
// point-to-point traffic, the library's own collective traffic, or the
// collectives' control messages (call probes, coll/call_probe.h), so none
// can ever match another's.
enum class Channel : uint8_t { kPt2pt = 0, kColl = 1, kCtl = 2 };
constexpr uint32_t kChannels = 3;

struct Request {
  static constexpr uint32_t kMagic = 0x51455251;  // "REQQ"
  uint32_t magic = kMagic;
  ReqKind kind = ReqKind::kDone;
  SendMode mode = SendMode::kStandard;
  Channel channel = Channel::kPt2pt;
  bool complete = false;
  bool persistent = false;
  bool active = false;      // started and not yet completed by wait/test
  bool userFreed = false;   // MPI_Request_free before completion: recycle when done
  bool cancelled = false;
  bool holdsRefs = false;   // `comm` and `type` retained while active

  // The operation.
  void* buf = nullptr;      // const for sends
  int64_t count = 0;
  Datatype* type = nullptr;
  int peer = 0;             // comm rank: destination, or source (may be MPI_ANY_SOURCE)
  int tag = 0;              // may be MPI_ANY_TAG for receives
  Comm* comm = nullptr;
  // Collective-channel messages: the call's signature (what it is, root,
  // op; 0: none), and for a receive the different one a peer's message
  // carried, which fails the receive (mismatched collective calls).
  uint16_t sig = 0;
  uint16_t peerSig = 0;

  // The result of a receive (and MPI_ERROR of any request).
  int statusSource = MPI_ANY_SOURCE;
  int statusTag = MPI_ANY_TAG;
  int statusError = MPI_SUCCESS;
  int64_t bytes = 0;        // bytes received (or sent)
  // Why the operation failed, where its owner can say more than the class
  // (a collective whose ranks disagreed); empty otherwise.
  Status error;

  // Protocol state, owned by the layer that progresses the request.
  uint8_t protocol = 0;     // how the owner moves it (p2p::Kind for p2p)
  uint8_t stage = 0;        // owner-defined progress stage
  uint8_t hint = 0;         // owner-defined flags (p2p: copy with non-temporal stores)
  int remoteRank = -1;      // job rank of the peer, once known
  uint64_t remoteId = 0;    // the peer's request id (rendezvous, sync acks)
  size_t transferred = 0;   // bytes moved so far
  size_t issued = 0;        // bytes handed to the transport (p2p: reads started)
  size_t total = 0;         // bytes the operation moves
  uint64_t remoteAddr = 0;  // p2p: the sender's exposed buffer (a rendezvous read)
  uint64_t remoteKey = 0;
  uint64_t startTicks = 0;  // owner-defined (p2p: when a measured receive sent its kCts)
  void* scratch = nullptr;  // owner-defined (p2p: the exposed buffer's handle)
  Request* nextPending = nullptr;  // intrusive link for the owner's queues

  // A receive that folds into its buffer instead of overwriting it
  // (collectives' reduce steps): each piece of the message is handed to
  // fold(in, inout, bytes, foldCtx, type) as it arrives, while it is still in
  // the cache, instead of being copied aside and reduced afterwards.
  void (*fold)(const void* in, void* inout, size_t bytes, void* ctx, Datatype* type) = nullptr;
  void* foldCtx = nullptr;

  // Device buffers staged through host memory (core/device_stage.h): the
  // host twins are copied back and freed when the request finishes, before
  // onComplete runs. Null for host buffers (one load and branch in finish).
  device::Stage* staged = nullptr;

  // Called once when the request completes (collective schedules, buffered
  // sends). Runs inside progress.
  void (*onComplete)(Request*) = nullptr;
  void* owner = nullptr;

  bool valid() const { return magic == kMagic; }
  uint64_t id() const { return reinterpret_cast<uintptr_t>(this); }
  static Request* fromId(uint64_t id) { return reinterpret_cast<Request*>(id); }

  // Free-list allocation; a released request's magic is cleared so a stale
  // handle is detected.
  static Request* alloc(ReqKind kind);
  static void release(Request* r);
  // Marks complete, runs onComplete, recycles if the user already freed it.
  void finish();
};

}  // namespace loom
