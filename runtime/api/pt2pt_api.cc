// Point-to-point entry points: blocking, nonblocking and persistent sends and
// receives in every mode, MPI_Sendrecv(_replace), MPI_Isendrecv(_replace),
// MPI_Start(all).
//
// Each call checks its arguments (communicator, count, datatype, buffer,
// rank, tag, in that order), handles MPI_PROC_NULL itself (the engine never
// sees it) and hands the rest to the p2p engine. Blocking calls are the
// nonblocking ones plus a wait.
//
// Modes: standard and ready sends are the same thing in Loom (a ready send
// is allowed to behave like a standard one); synchronous sends complete when
// the receiver has matched; buffered sends copy into the attached buffer
// (bsend.h) and are complete at once.
//
// Datatype lifetime: a nonblocking operation holds a reference on its type
// until it finishes, a persistent request until it is freed, so the user may
// call MPI_Type_free while the operation is pending.
#include <memory>

#include "api/bsend.h"
#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/persistent_coll.h"
#include "api/request_kinds.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "core/device_stage.h"
#include "core/progress.h"
#include "p2p/p2p.h"

using loom::Channel;
using loom::Comm;
using loom::Datatype;
using loom::errorf;
using loom::ReqKind;
using loom::Request;
using loom::SendMode;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;

namespace {

struct Checked {
  Comm* comm = nullptr;
  Datatype* type = nullptr;
};

// Validates a send's arguments in the documented order, raising the first
// failure; MPI_SUCCESS or the code the error handler gave back. Out of line:
// the hot path below only calls it when a quick test fails.
[[gnu::noinline, gnu::cold]] int checkSendSlow(const void* buf, int64_t count, MPI_Datatype datatype,
                                               int dest, int tag, MPI_Comm comm, const char* fn,
                                               Checked* out) {
  out->comm = loom::api::toComm(comm);
  if (!out->comm) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  out->type = loom::api::typeOrEmpty(loom::api::toDatatype(datatype), datatype, count);
  Status st = loom::api::checkData(buf, count, out->type);
  if (!st.isOk()) return raise(out->comm, st, fn);
  if (!loom::api::validSendRank(dest, out->comm->peerSize()))
    return raise(out->comm,
                 errorf(MPI_ERR_RANK, "dest=%d is not a rank of %s (size %d) or MPI_PROC_NULL",
                        dest, loom::api::describeComm(out->comm).c_str(), out->comm->peerSize()),
                 fn);
  if (!loom::api::validSendTag(tag))
    return raise(out->comm, errorf(MPI_ERR_TAG, "tag=%d is not in [0, %d]", tag, loom::kTagUb), fn);
  return MPI_SUCCESS;
}

[[gnu::noinline, gnu::cold]] int checkRecvSlow(const void* buf, int64_t count, MPI_Datatype datatype,
                                               int source, int tag, MPI_Comm comm, const char* fn,
                                               Checked* out) {
  out->comm = loom::api::toComm(comm);
  if (!out->comm) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  out->type = loom::api::typeOrEmpty(loom::api::toDatatype(datatype), datatype, count);
  Status st = loom::api::checkData(buf, count, out->type);
  if (!st.isOk()) return raise(out->comm, st, fn);
  if (!loom::api::validRecvRank(source, out->comm->peerSize()))
    return raise(out->comm,
                 errorf(MPI_ERR_RANK,
                        "source=%d is not a rank of %s (size %d), MPI_ANY_SOURCE or "
                        "MPI_PROC_NULL",
                        source, loom::api::describeComm(out->comm).c_str(), out->comm->peerSize()),
                 fn);
  if (!loom::api::validRecvTag(tag))
    return raise(out->comm,
                 errorf(MPI_ERR_TAG, "tag=%d is not in [0, %d] or MPI_ANY_TAG", tag, loom::kTagUb),
                 fn);
  return MPI_SUCCESS;
}

// The checks as one quick test (no Status, no strings built): true when all
// pass. Any failure goes to the slow version, which finds and reports the
// first problem.
template <bool kSend>
inline bool quickCheck(const void* buf, int64_t count, MPI_Datatype datatype, int peer, int tag,
                       MPI_Comm comm, Checked* out) {
  Comm* c = loom::api::toComm(comm);
  if (!c) return false;
  Datatype* t = loom::api::toDatatype(datatype);
  // checkData's success is an int and a null pointer: nothing is built.
  const bool ok = loom::api::checkData(buf, count, t).isOk() &&
                  (kSend ? loom::api::validSendRank(peer, c->peerSize()) &&
                               loom::api::validSendTag(tag)
                         : loom::api::validRecvRank(peer, c->peerSize()) &&
                               loom::api::validRecvTag(tag));
  if (!ok) return false;
  out->comm = c;
  out->type = t;
  return true;
}

inline int checkSend(const void* buf, int64_t count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, const char* fn, Checked* out) {
  if (quickCheck<true>(buf, count, datatype, dest, tag, comm, out)) [[likely]]
    return MPI_SUCCESS;
  return checkSendSlow(buf, count, datatype, dest, tag, comm, fn, out);
}

inline int checkRecv(const void* buf, int64_t count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, const char* fn, Checked* out) {
  if (quickCheck<false>(buf, count, datatype, source, tag, comm, out)) [[likely]]
    return MPI_SUCCESS;
  return checkRecvSlow(buf, count, datatype, source, tag, comm, fn, out);
}

// The error of a finished receive, raised (MPI_SUCCESS when none).
int receiveError(const Request* r, Comm* comm, const char* fn) {
  if (r->statusError == MPI_SUCCESS) return MPI_SUCCESS;
  if (r->statusError == MPI_ERR_TRUNCATE)
    return raise(comm,
                 errorf(MPI_ERR_TRUNCATE,
                        "a message of %zu bytes from rank %d (tag %d) does not fit the "
                        "%lld-byte receive buffer",
                        r->total, r->statusSource, r->statusTag,
                        static_cast<long long>(r->count * r->type->size())),
                 fn);
  return raise(comm, errorf(r->statusError, "the receive failed"), fn);
}

// Starts a send (any mode). *out is a request even for MPI_PROC_NULL and
// buffered sends. While it is in flight the engine holds references on the
// communicator and the datatype (the user may free both meanwhile).
int startSend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm,
              SendMode mode, Request** out, const char* fn) {
  *out = nullptr;
  if (dest == MPI_PROC_NULL) {
    *out = loom::api::completedRequest(ReqKind::kSend, comm, MPI_PROC_NULL);
    return MPI_SUCCESS;
  }
  if (mode == SendMode::kBuffered) {
    Status st = loom::api::bufferedSend(buf, count, type, dest, tag, comm);
    if (!st.isOk()) return raise(comm, st, fn);
    *out = loom::api::completedRequest(ReqKind::kSend, comm, MPI_ANY_SOURCE);
    return MPI_SUCCESS;
  }
  Request* r = nullptr;
  Status st = loom::p2p::isend(buf, count, type, dest, tag, comm, mode, Channel::kPt2pt, &r);
  if (!st.isOk()) {
    if (r) Request::release(r);
    return raise(comm, st, fn);
  }
  *out = r;
  return MPI_SUCCESS;
}

int startRecv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm,
              Request** out, const char* fn) {
  *out = nullptr;
  if (source == MPI_PROC_NULL) {
    *out = loom::api::completedRequest(ReqKind::kRecv, comm, MPI_PROC_NULL);
    return MPI_SUCCESS;
  }
  Request* r = nullptr;
  Status st = loom::p2p::irecv(buf, count, type, source, tag, comm, Channel::kPt2pt, &r);
  if (!st.isOk()) {
    if (r) Request::release(r);
    return raise(comm, st, fn);
  }
  *out = r;
  return MPI_SUCCESS;
}

// Waits for a request the caller owns, then recycles it. Returns the
// receive's error, raised.
int finishBlocking(Request* r, Comm* comm, MPI_Status* status, const char* fn) {
  loom::progress::waitUntil([r] { return r->complete; });
  loom::api::fillStatus(status, *r);
  int rc = r->kind == ReqKind::kRecv ? receiveError(r, comm, fn) : MPI_SUCCESS;
  if (rc == MPI_SUCCESS && r->statusError != MPI_SUCCESS)
    rc = raise(comm, errorf(r->statusError, "the send failed"), fn);
  Request::release(r);
  return rc;
}

int blockingSend(const void* buf, int64_t count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, SendMode mode, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Checked c;
  if (int rc = checkSend(buf, count, datatype, dest, tag, comm, fn, &c)) return rc;
  // Small standard sends go straight into the peer's ring, without a request.
  if ((mode == SendMode::kStandard || mode == SendMode::kReady) && dest != MPI_PROC_NULL &&
      loom::p2p::sendEagerNow(buf, count, c.type, dest, tag, c.comm))
    return MPI_SUCCESS;
  Request* r;
  if (int rc = startSend(buf, count, c.type, dest, tag, c.comm, mode, &r, fn)) return rc;
  return finishBlocking(r, c.comm, MPI_STATUS_IGNORE, fn);
}

int nonblockingSend(const void* buf, int64_t count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request, SendMode mode, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  Checked c;
  if (int rc = checkSend(buf, count, datatype, dest, tag, comm, fn, &c)) return rc;
  Request* r;
  if (int rc = startSend(buf, count, c.type, dest, tag, c.comm, mode, &r, fn)) return rc;
  *request = loom::api::toHandle(r);
  return MPI_SUCCESS;
}

// Builds an inactive persistent request; MPI_Start starts it.
int persistentInit(const void* buf, int64_t count, MPI_Datatype datatype, int peer, int tag,
                   MPI_Comm comm, MPI_Request* request, ReqKind kind, SendMode mode,
                   const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  Checked c;
  int rc = kind == ReqKind::kSend ? checkSend(buf, count, datatype, peer, tag, comm, fn, &c)
                                  : checkRecv(buf, count, datatype, peer, tag, comm, fn, &c);
  if (rc) return rc;
  Request* r = Request::alloc(kind);
  r->persistent = true;
  r->active = false;
  r->buf = const_cast<void*>(buf);
  r->count = count;
  r->type = c.type;
  r->peer = peer;
  r->tag = tag;
  r->comm = c.comm;
  r->mode = mode;
  r->channel = Channel::kPt2pt;
  c.type->retain();  // released by MPI_Request_free
  *request = loom::api::toHandle(r);
  return MPI_SUCCESS;
}

// Starts one inactive persistent request.
int startPersistent(Request* r, const char* fn) {
  if (loom::api::isPersistentColl(r)) return loom::api::startPersistentColl(r, fn);
  auto doneNow = [r](int source) {
    r->complete = true;
    r->active = true;
    r->cancelled = false;
    r->statusError = MPI_SUCCESS;
    r->statusSource = source;
    r->statusTag = MPI_ANY_TAG;
    r->bytes = 0;
  };
  if (r->peer == MPI_PROC_NULL) {
    doneNow(MPI_PROC_NULL);
    return MPI_SUCCESS;
  }
  if (r->kind == ReqKind::kSend && r->mode == SendMode::kBuffered) {
    Status st = loom::api::bufferedSend(r->buf, r->count, r->type, r->peer, r->tag, r->comm);
    if (!st.isOk()) return raise(r->comm, st, fn);
    doneNow(MPI_ANY_SOURCE);
    return MPI_SUCCESS;
  }
  Status st = loom::p2p::start(r);
  if (!st.isOk()) return raise(r->comm, st, fn);
  return MPI_SUCCESS;
}

int checkStartable(MPI_Request h, Request** out, const char* fn) {
  Request* r = loom::api::toRequest(h);
  *out = r;
  if (!r || !r->persistent)
    return raise(nullptr, errorf(MPI_ERR_REQUEST, "not a persistent request"), fn);
  if (r->active)
    return raise(r->comm, errorf(MPI_ERR_REQUEST, "the request is already active"), fn);
  return MPI_SUCCESS;
}

}  // namespace

// ---- Blocking sends and receive ------------------------------------------
//
// Every function below exists twice: MPI_Foo with an int count and
// MPI_Foo_c (MPI 4.0) with an MPI_Count one; both call the same int64_t
// implementation (api/large_count.h).

namespace {

int recv(void* buf, int64_t count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
         MPI_Status* status, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Checked c;
  if (int rc = checkRecv(buf, count, datatype, source, tag, comm, fn, &c)) return rc;
  Request* r;
  if (int rc = startRecv(buf, count, c.type, source, tag, c.comm, &r, fn)) return rc;
  return finishBlocking(r, c.comm, status, fn);
}

int irecv(void* buf, int64_t count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
          MPI_Request* request, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  Checked c;
  if (int rc = checkRecv(buf, count, datatype, source, tag, comm, fn, &c)) return rc;
  Request* r;
  if (int rc = startRecv(buf, count, c.type, source, tag, c.comm, &r, fn)) return rc;
  *request = loom::api::toHandle(r);
  return MPI_SUCCESS;
}

int sendrecv(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, int dest, int sendtag,
             void* recvbuf, int64_t recvcount, MPI_Datatype recvtype, int source, int recvtag,
             MPI_Comm comm, MPI_Status* status, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Checked s, r;
  if (int rc = checkSend(sendbuf, sendcount, sendtype, dest, sendtag, comm, fn, &s)) return rc;
  if (int rc = checkRecv(recvbuf, recvcount, recvtype, source, recvtag, comm, fn, &r)) return rc;
  Request* rreq;
  if (int rc = startRecv(recvbuf, recvcount, r.type, source, recvtag, r.comm, &rreq, fn)) return rc;
  Request* sreq;
  if (int rc = startSend(sendbuf, sendcount, s.type, dest, sendtag, s.comm, SendMode::kStandard,
                         &sreq, fn)) {
    // Withdraw the posted receive; one that matched already is finished.
    if (!rreq->complete && !loom::p2p::cancelRecv(rreq))
      loom::progress::waitUntil([&] { return rreq->complete; });
    Request::release(rreq);
    return rc;
  }
  loom::progress::waitUntil([&] { return sreq->complete && rreq->complete; });
  Request::release(sreq);
  return finishBlocking(rreq, r.comm, status, fn);
}

int sendrecvReplace(void* buf, int64_t count, MPI_Datatype datatype, int dest, int sendtag,
                    int source, int recvtag, MPI_Comm comm, MPI_Status* status, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Checked s, r;
  if (int rc = checkSend(buf, count, datatype, dest, sendtag, comm, fn, &s)) return rc;
  if (int rc = checkRecv(buf, count, datatype, source, recvtag, comm, fn, &r)) return rc;
  // The outgoing data is packed aside first, so the incoming message may land
  // in `buf` while the send still reads.
  const size_t bytes = dest == MPI_PROC_NULL ? 0 : s.type->packedSize(count);
  std::unique_ptr<std::byte[]> tmp(new (std::nothrow) std::byte[bytes ? bytes : 1]);
  if (!tmp) return raise(s.comm, errorf(MPI_ERR_NO_MEM, "cannot allocate %zu bytes", bytes), fn);
  if (Status ps = loom::device::packAny(s.type, buf, count, tmp.get(), bytes); !ps.isOk())
    return raise(s.comm, ps, fn);
  Datatype* byteType = loom::predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
  Request* sreq;
  if (int rc = startSend(tmp.get(), static_cast<int64_t>(bytes), byteType, dest, sendtag, s.comm,
                         SendMode::kStandard, &sreq, fn))
    return rc;
  Request* rreq;
  if (int rc = startRecv(buf, count, r.type, source, recvtag, r.comm, &rreq, fn)) {
    loom::progress::waitUntil([&] { return sreq->complete; });
    Request::release(sreq);
    return rc;
  }
  loom::progress::waitUntil([&] { return sreq->complete && rreq->complete; });
  Request::release(sreq);
  return finishBlocking(rreq, r.comm, status, fn);
}

}  // namespace

// The blocking, nonblocking and persistent sends share one parameter list
// (a request at the end for the last two); SEND_ENTRIES stamps out MPI_Foo
// and MPI_Foo_c for one of them.
#define SEND_PARAMS(COUNT) \
  (const void* buf, COUNT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
#define SEND_PARAMS_REQ(COUNT)                                                                 \
  (const void* buf, COUNT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, \
   MPI_Request* request)
#define SEND_ENTRIES(NAME, PARAMS, CALL)                           \
  extern "C" int PMPI_##NAME PARAMS(int) { return CALL("MPI_" #NAME); } \
  LOOM_WEAK_ALIAS(MPI_##NAME)                                      \
  LOOM_LARGE_COUNT(NAME, PARAMS(MPI_Count), CALL("MPI_" #NAME "_c"))

#define BLOCKING(MODE) \
  [&](const char* fn) { return blockingSend(buf, count, datatype, dest, tag, comm, MODE, fn); }
#define NONBLOCKING(MODE)                                                                \
  [&](const char* fn) {                                                                  \
    return nonblockingSend(buf, count, datatype, dest, tag, comm, request, MODE, fn); \
  }
#define PERSISTENT(MODE)                                                                   \
  [&](const char* fn) {                                                                    \
    return persistentInit(buf, count, datatype, dest, tag, comm, request, ReqKind::kSend, \
                          MODE, fn);                                                       \
  }

SEND_ENTRIES(Send, SEND_PARAMS, BLOCKING(SendMode::kStandard))
SEND_ENTRIES(Ssend, SEND_PARAMS, BLOCKING(SendMode::kSync))
SEND_ENTRIES(Rsend, SEND_PARAMS, BLOCKING(SendMode::kReady))
SEND_ENTRIES(Bsend, SEND_PARAMS, BLOCKING(SendMode::kBuffered))

extern "C" int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                         MPI_Comm comm, MPI_Status* status) {
  return recv(buf, count, datatype, source, tag, comm, status, "MPI_Recv");
}
LOOM_WEAK_ALIAS(MPI_Recv)
LOOM_LARGE_COUNT(Recv,
                 (void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Status* status),
                 recv(buf, count, datatype, source, tag, comm, status, "MPI_Recv_c"))

// ---- Nonblocking ----------------------------------------------------------

SEND_ENTRIES(Isend, SEND_PARAMS_REQ, NONBLOCKING(SendMode::kStandard))
SEND_ENTRIES(Issend, SEND_PARAMS_REQ, NONBLOCKING(SendMode::kSync))
SEND_ENTRIES(Irsend, SEND_PARAMS_REQ, NONBLOCKING(SendMode::kReady))
SEND_ENTRIES(Ibsend, SEND_PARAMS_REQ, NONBLOCKING(SendMode::kBuffered))

extern "C" int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Request* request) {
  return irecv(buf, count, datatype, source, tag, comm, request, "MPI_Irecv");
}
LOOM_WEAK_ALIAS(MPI_Irecv)
LOOM_LARGE_COUNT(Irecv,
                 (void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request* request),
                 irecv(buf, count, datatype, source, tag, comm, request, "MPI_Irecv_c"))

// ---- Send-receive ---------------------------------------------------------

extern "C" int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                             int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                             int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                  source, recvtag, comm, status, "MPI_Sendrecv");
}
LOOM_WEAK_ALIAS(MPI_Sendrecv)
LOOM_LARGE_COUNT(Sendrecv,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                  int source, int recvtag, MPI_Comm comm, MPI_Status* status),
                 sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                          recvtype, source, recvtag, comm, status, "MPI_Sendrecv_c"))

extern "C" int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                     int sendtag, int source, int recvtag, MPI_Comm comm,
                                     MPI_Status* status) {
  return sendrecvReplace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
                         "MPI_Sendrecv_replace");
}
LOOM_WEAK_ALIAS(MPI_Sendrecv_replace)
LOOM_LARGE_COUNT(Sendrecv_replace,
                 (void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag,
                  int source, int recvtag, MPI_Comm comm, MPI_Status* status),
                 sendrecvReplace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                 status, "MPI_Sendrecv_replace_c"))

// Nonblocking forms (MPI 4.0): one request for both parts, with the status
// of the receive (request_compound.cc). `replace`: MPI_Isendrecv_replace,
// whose receive lands in the send buffer.
namespace {
int isendrecv(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, int dest,
              int sendtag, void* recvbuf, int64_t recvcount, MPI_Datatype recvtype, int source,
              int recvtag, MPI_Comm comm, bool replace, MPI_Request* request, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  Checked s, r;
  if (int rc = checkSend(sendbuf, sendcount, sendtype, dest, sendtag, comm, fn, &s)) return rc;
  if (int rc = checkRecv(recvbuf, recvcount, recvtype, source, recvtag, comm, fn, &r)) return rc;
  Request* req = nullptr;
  Status st = loom::api::startSendrecv(sendbuf, sendcount, s.type, dest, sendtag, recvbuf,
                                       recvcount, r.type, source, recvtag, r.comm, replace, &req);
  if (!st.isOk()) return raise(r.comm, st, fn);
  *request = loom::api::toHandle(req);
  return MPI_SUCCESS;
}
}  // namespace

extern "C" int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              int dest, int sendtag, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                              MPI_Request* request) {
  return isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                   source, recvtag, comm, false, request, "MPI_Isendrecv");
}
LOOM_WEAK_ALIAS(MPI_Isendrecv)
LOOM_LARGE_COUNT(Isendrecv,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                  int source, int recvtag, MPI_Comm comm, MPI_Request* request),
                 isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, false, request, "MPI_Isendrecv_c"))

extern "C" int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                      int sendtag, int source, int recvtag, MPI_Comm comm,
                                      MPI_Request* request) {
  return isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag,
                   comm, true, request, "MPI_Isendrecv_replace");
}
LOOM_WEAK_ALIAS(MPI_Isendrecv_replace)
LOOM_LARGE_COUNT(Isendrecv_replace,
                 (void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag,
                  int source, int recvtag, MPI_Comm comm, MPI_Request* request),
                 isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source,
                           recvtag, comm, true, request, "MPI_Isendrecv_replace_c"))

// ---- Persistent -------------------------------------------------------------

SEND_ENTRIES(Send_init, SEND_PARAMS_REQ, PERSISTENT(SendMode::kStandard))
SEND_ENTRIES(Ssend_init, SEND_PARAMS_REQ, PERSISTENT(SendMode::kSync))
SEND_ENTRIES(Rsend_init, SEND_PARAMS_REQ, PERSISTENT(SendMode::kReady))
SEND_ENTRIES(Bsend_init, SEND_PARAMS_REQ, PERSISTENT(SendMode::kBuffered))

extern "C" int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                              MPI_Comm comm, MPI_Request* request) {
  return persistentInit(buf, count, datatype, source, tag, comm, request, ReqKind::kRecv,
                        SendMode::kStandard, "MPI_Recv_init");
}
LOOM_WEAK_ALIAS(MPI_Recv_init)
LOOM_LARGE_COUNT(Recv_init,
                 (void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request* request),
                 persistentInit(buf, count, datatype, source, tag, comm, request, ReqKind::kRecv,
                                SendMode::kStandard, "MPI_Recv_init_c"))

#undef SEND_PARAMS
#undef SEND_PARAMS_REQ
#undef SEND_ENTRIES
#undef BLOCKING
#undef NONBLOCKING
#undef PERSISTENT

extern "C" int PMPI_Start(MPI_Request* request) {
  if (!requireRunning("MPI_Start")) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), "MPI_Start");
  Request* r;
  if (int rc = checkStartable(*request, &r, "MPI_Start")) return rc;
  return startPersistent(r, "MPI_Start");
}
LOOM_WEAK_ALIAS(MPI_Start)

extern "C" int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
  const char* fn = "MPI_Startall";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (count < 0) return raise(nullptr, errorf(MPI_ERR_COUNT, "count=%d < 0", count), fn);
  if (count > 0 && !array_of_requests)
    return raise(nullptr, errorf(MPI_ERR_ARG, "array_of_requests is NULL"), fn);
  // Check them all before starting any, so a bad handle leaves nothing half
  // done. (A request listed twice is caught when its second turn comes: it
  // is active by then.)
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (int rc = checkStartable(array_of_requests[i], &r, fn)) return rc;
  }
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (int rc = checkStartable(array_of_requests[i], &r, fn)) return rc;
    if (int rc = startPersistent(r, fn)) return rc;
  }
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Startall)
