// Compound requests: MPI_Isendrecv and MPI_Isendrecv_replace (request_kinds.h).
//
// The user's request (kind kCompound) owns a Parts record naming the two
// point-to-point requests it started. Each part's onComplete hook copies
// what it contributes (the receive: source, tag, count, cancelled, error;
// the send: its error, when the receive has none) into the compound and
// counts down; the last one completes the compound (Request::finish), whose
// own hook frees the record and the packed copy of the replace form. The
// parts are marked userFreed, so the engine recycles them after their hook.
// A part that is complete as soon as it starts (MPI_PROC_NULL, a message
// already waiting) is accounted for at once.
//
// MPI_Cancel has no effect on a compound request (as on sends): both parts
// complete normally.
#include <cstring>
#include <memory>

#include "api/request_kinds.h"
#include "api/status_util.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/device_stage.h"
#include "core/progress.h"
#include "p2p/p2p.h"

namespace loom::api {
namespace {

struct Parts {
  Request* compound = nullptr;
  int pending = 0;
  std::unique_ptr<std::byte[]> packed;  // the replace form's outgoing data
};

void compoundDone(Request* c) {
  delete static_cast<Parts*>(c->owner);
  c->owner = nullptr;
  c->onComplete = nullptr;
}

// Folds a finished part into its compound; completes the compound after
// the last part.
void account(Parts* p, Request* part, bool isRecv) {
  Request* c = p->compound;
  if (isRecv) {
    c->statusSource = part->statusSource;
    c->statusTag = part->statusTag;
    c->bytes = part->bytes;
    c->total = part->total;
    c->cancelled = part->cancelled;
    if (part->statusError != MPI_SUCCESS) c->statusError = part->statusError;
  } else if (part->statusError != MPI_SUCCESS && c->statusError == MPI_SUCCESS) {
    c->statusError = part->statusError;
  }
  if (--p->pending == 0) c->finish();  // runs compoundDone: p is gone
}

void sendDone(Request* part) { account(static_cast<Parts*>(part->owner), part, false); }
void recvDone(Request* part) { account(static_cast<Parts*>(part->owner), part, true); }

// Hooks a started part onto the compound, or accounts for it now when it
// is complete already.
void attach(Parts* p, Request* part, bool isRecv) {
  if (part->complete) {
    account(p, part, isRecv);
    Request::release(part);
    return;
  }
  part->owner = p;
  part->onComplete = isRecv ? recvDone : sendDone;
  part->userFreed = true;
}

}  // namespace

Status startSendrecv(const void* sbuf, int64_t scount, Datatype* stype, int dest, int stag,
                     void* rbuf, int64_t rcount, Datatype* rtype, int source, int rtag,
                     Comm* comm, bool replace, Request** out) {
  *out = nullptr;
  auto parts = std::make_unique<Parts>();
  Datatype* sendType = stype;
  int64_t sendCount = scount;
  if (replace && dest != MPI_PROC_NULL) {
    // The incoming message may land in the buffer while the send still
    // reads: send a packed copy.
    const size_t bytes = stype->packedSize(scount);
    parts->packed.reset(new (std::nothrow) std::byte[bytes ? bytes : 1]);
    if (!parts->packed) return errorf(MPI_ERR_NO_MEM, "cannot allocate %zu bytes", bytes);
    LOOM_TRY(device::packAny(stype, sbuf, scount, parts->packed.get(), bytes));
    sbuf = parts->packed.get();
    sendType = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
    sendCount = static_cast<int64_t>(bytes);
  }

  Request* recv = nullptr;
  if (source == MPI_PROC_NULL) {
    recv = completedRequest(ReqKind::kRecv, comm, MPI_PROC_NULL);
  } else {
    Status st = p2p::irecv(rbuf, rcount, rtype, source, rtag, comm, Channel::kPt2pt, &recv);
    if (!st.isOk()) {
      if (recv) Request::release(recv);
      return st;
    }
  }
  Request* send = nullptr;
  if (dest == MPI_PROC_NULL) {
    send = completedRequest(ReqKind::kSend, comm, MPI_PROC_NULL);
  } else {
    Status st = p2p::isend(sbuf, sendCount, sendType, dest, stag, comm, SendMode::kStandard,
                           Channel::kPt2pt, &send);
    if (!st.isOk()) {
      if (send) Request::release(send);
      // Withdraw the posted receive; one that matched already is finished.
      if (!recv->complete && !p2p::cancelRecv(recv))
        progress::waitUntil([&] { return recv->complete; });
      Request::release(recv);
      return st;
    }
  }

  Request* c = Request::alloc(ReqKind::kCompound);
  c->comm = comm;
  c->active = true;
  c->statusSource = MPI_ANY_SOURCE;
  c->statusTag = MPI_ANY_TAG;
  Parts* p = parts.release();
  p->compound = c;
  p->pending = 2;
  c->owner = p;
  c->onComplete = compoundDone;
  // No progress runs between here and the end of attach(): the parts
  // cannot complete behind our back.
  attach(p, recv, true);
  attach(p, send, false);
  *out = c;
  return Status::ok();
}

}  // namespace loom::api
