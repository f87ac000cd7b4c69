// Probes and matched probes: MPI_Probe, MPI_Iprobe, MPI_Mprobe,
// MPI_Improbe, MPI_Mrecv, MPI_Imrecv.
//
// A probe looks at the engine's unexpected messages without receiving; the
// matched variants take the message out of matching and hand it to the user
// as an MPI_Message, which only MPI_Mrecv/MPI_Imrecv can consume. Loom
// remembers each outstanding message with its communicator: that validates
// the handle and names the error handler of the receive.
#include <unordered_map>

#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "core/progress.h"
#include "p2p/p2p.h"

using loom::Comm;
using loom::Datatype;
using loom::errorf;
using loom::ReqKind;
using loom::Request;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::p2p::Message;
using loom::p2p::ProbeResult;

namespace {

// Messages taken by a matched probe and not yet received.
std::unordered_map<Message*, Comm*>& outstanding() {
  static std::unordered_map<Message*, Comm*> m;
  return m;
}

int checkProbe(int source, int tag, MPI_Comm comm, const char* fn, Comm** out) {
  Comm* c = loom::api::toComm(comm);
  *out = c;
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (!loom::api::validRecvRank(source, c->peerSize()))
    return raise(c,
                 errorf(MPI_ERR_RANK,
                        "source=%d is not a rank of %s (size %d), MPI_ANY_SOURCE or "
                        "MPI_PROC_NULL",
                        source, loom::api::describeComm(c).c_str(), c->peerSize()),
                 fn);
  if (!loom::api::validRecvTag(tag))
    return raise(
        c, errorf(MPI_ERR_TAG, "tag=%d is not in [0, %d] or MPI_ANY_TAG", tag, loom::kTagUb), fn);
  return MPI_SUCCESS;
}

void probeStatus(MPI_Status* status, const ProbeResult& pr) {
  loom::api::fillStatus(status, pr.source, pr.tag, pr.bytes, false);
}

// One look; a failure is raised (returned in *rc).
bool lookOnce(int source, int tag, Comm* c, ProbeResult* pr, const char* fn, int* rc) {
  bool found = false;
  Status st = loom::p2p::iprobe(source, tag, c, &found, pr);
  if (!st.isOk()) *rc = raise(c, st, fn);
  return found;
}

bool takeOnce(int source, int tag, Comm* c, Message** msg, ProbeResult* pr, const char* fn,
              int* rc) {
  bool found = false;
  Status st = loom::p2p::improbe(source, tag, c, &found, msg, pr);
  if (!st.isOk()) *rc = raise(c, st, fn);
  if (found) outstanding()[*msg] = c;
  return found;
}

// The message behind a handle the user passes to MPI_(I)mrecv; nullptr for
// MPI_MESSAGE_NO_PROC (the caller handles it) and for invalid handles.
int lookupMessage(MPI_Message* message, const char* fn, Message** msg, Comm** comm) {
  *msg = nullptr;
  *comm = nullptr;
  if (!message) return raise(nullptr, errorf(MPI_ERR_ARG, "message is NULL"), fn);
  if (*message == MPI_MESSAGE_NO_PROC) return MPI_SUCCESS;
  auto* m = reinterpret_cast<Message*>(*message);
  auto it = outstanding().find(m);
  if (*message == MPI_MESSAGE_NULL || it == outstanding().end())
    return raise(
        nullptr,
        errorf(MPI_ERR_REQUEST, "invalid message handle (MPI_MESSAGE_NULL, or already received)"),
        fn);
  *msg = m;
  *comm = it->second;
  return MPI_SUCCESS;
}

// Starts receiving a matched message; consumes the handle.
int startMrecv(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message, bool hold,
               Request** out, Comm** commOut, const char* fn) {
  *out = nullptr;
  Message* m;
  Comm* c;
  if (int rc = lookupMessage(message, fn, &m, &c)) return rc;
  *commOut = c;
  Datatype* type = loom::api::toDatatype(datatype);
  Status st = loom::api::checkData(buf, count, type);
  if (!st.isOk()) return raise(c, st, fn);
  if (!m) {  // MPI_MESSAGE_NO_PROC
    *out = loom::api::completedRequest(ReqKind::kRecv, nullptr, MPI_PROC_NULL);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  outstanding().erase(m);
  *message = MPI_MESSAGE_NULL;
  Request* r = nullptr;
  st = loom::p2p::imrecv(buf, count, type, m, &r);
  if (!st.isOk()) {
    if (r) Request::release(r);
    return raise(c, st, fn);
  }
  r->comm = c;
  if (hold && !r->complete) {
    type->retain();
    r->onComplete = loom::api::releaseTypeOnComplete;
  }
  *out = r;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  const char* fn = "MPI_Iprobe";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c;
  if (int rc = checkProbe(source, tag, comm, fn, &c)) return rc;
  if (!flag) return raise(c, errorf(MPI_ERR_ARG, "flag is NULL"), fn);
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    loom::api::setProcNullStatus(status);
    return MPI_SUCCESS;
  }
  int rc = MPI_SUCCESS;
  ProbeResult pr;
  bool found = lookOnce(source, tag, c, &pr, fn, &rc);
  if (!found && rc == MPI_SUCCESS) {
    // A program that loops on MPI_Iprobe must see messages arrive.
    loom::progress::testPoll();
    found = lookOnce(source, tag, c, &pr, fn, &rc);
  }
  if (rc != MPI_SUCCESS) return rc;
  *flag = found ? 1 : 0;
  if (found) probeStatus(status, pr);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Iprobe)

extern "C" int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const char* fn = "MPI_Probe";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c;
  if (int rc = checkProbe(source, tag, comm, fn, &c)) return rc;
  if (source == MPI_PROC_NULL) {
    loom::api::setProcNullStatus(status);
    return MPI_SUCCESS;
  }
  int rc = MPI_SUCCESS;
  ProbeResult pr;
  loom::progress::waitUntil(
      [&] { return lookOnce(source, tag, c, &pr, fn, &rc) || rc != MPI_SUCCESS; });
  if (rc != MPI_SUCCESS) return rc;
  probeStatus(status, pr);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Probe)

extern "C" int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                            MPI_Status* status) {
  const char* fn = "MPI_Improbe";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c;
  if (int rc = checkProbe(source, tag, comm, fn, &c)) return rc;
  if (!flag || !message) return raise(c, errorf(MPI_ERR_ARG, "flag or message is NULL"), fn);
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    loom::api::setProcNullStatus(status);
    return MPI_SUCCESS;
  }
  int rc = MPI_SUCCESS;
  ProbeResult pr;
  Message* m = nullptr;
  bool found = takeOnce(source, tag, c, &m, &pr, fn, &rc);
  if (!found && rc == MPI_SUCCESS) {
    loom::progress::testPoll();
    found = takeOnce(source, tag, c, &m, &pr, fn, &rc);
  }
  if (rc != MPI_SUCCESS) return rc;
  *flag = found ? 1 : 0;
  if (found) {
    *message = reinterpret_cast<MPI_Message>(m);
    probeStatus(status, pr);
  }
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Improbe)

extern "C" int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                           MPI_Status* status) {
  const char* fn = "MPI_Mprobe";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c;
  if (int rc = checkProbe(source, tag, comm, fn, &c)) return rc;
  if (!message) return raise(c, errorf(MPI_ERR_ARG, "message is NULL"), fn);
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    loom::api::setProcNullStatus(status);
    return MPI_SUCCESS;
  }
  int rc = MPI_SUCCESS;
  ProbeResult pr;
  Message* m = nullptr;
  loom::progress::waitUntil(
      [&] { return takeOnce(source, tag, c, &m, &pr, fn, &rc) || rc != MPI_SUCCESS; });
  if (rc != MPI_SUCCESS) return rc;
  *message = reinterpret_cast<MPI_Message>(m);
  probeStatus(status, pr);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Mprobe)

// MPI_Mrecv/MPI_Imrecv and their MPI_Count forms (api/large_count.h).

namespace {

int mrecv(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message,
          MPI_Status* status, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Request* r;
  Comm* c;
  if (int rc = startMrecv(buf, count, datatype, message, false, &r, &c, fn)) return rc;
  loom::progress::waitUntil([r] { return r->complete; });
  loom::api::fillStatus(status, *r);
  int err = r->statusError;
  int64_t total = static_cast<int64_t>(r->total);
  Request::release(r);
  if (err == MPI_ERR_TRUNCATE)
    return raise(c,
                 errorf(err, "a message of %lld bytes does not fit the receive buffer",
                        static_cast<long long>(total)),
                 fn);
  if (err != MPI_SUCCESS) return raise(c, errorf(err, "the receive failed"), fn);
  return MPI_SUCCESS;
}

int imrecv(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message,
           MPI_Request* request, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  Request* r;
  Comm* c;
  if (int rc = startMrecv(buf, count, datatype, message, true, &r, &c, fn)) return rc;
  *request = loom::api::toHandle(r);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                          MPI_Status* status) {
  return mrecv(buf, count, datatype, message, status, "MPI_Mrecv");
}
LOOM_WEAK_ALIAS(MPI_Mrecv)
LOOM_LARGE_COUNT(Mrecv,
                 (void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                  MPI_Status* status),
                 mrecv(buf, count, datatype, message, status, "MPI_Mrecv_c"))

extern "C" int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                           MPI_Request* request) {
  return imrecv(buf, count, datatype, message, request, "MPI_Imrecv");
}
LOOM_WEAK_ALIAS(MPI_Imrecv)
LOOM_LARGE_COUNT(Imrecv,
                 (void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                  MPI_Request* request),
                 imrecv(buf, count, datatype, message, request, "MPI_Imrecv_c"))
