// Stream-ordered point-to-point (mpi-ext.h): MPIX_Send_enqueue,
// MPIX_Recv_enqueue, MPIX_Isend_enqueue, MPIX_Irecv_enqueue,
// MPIX_Wait_enqueue, MPIX_Waitall_enqueue and the large-count _c forms.
//
// Every call first checks the communicator and that it has a stream
// (MPI_ERR_COMM otherwise), then the arguments as the blocking call does,
// naming itself in the message. On a host stream it then is that call
// (MPI_Send, MPI_Isend, ...). On a GPU stream it builds the persistent
// request (MPI_Send_init, MPI_Recv_init) on the device buffers (moved as
// any device message is: CUDA IPC on a node, the pinned pipeline between
// nodes) and queues it (stream_enqueue.cc). With LOOM_STREAM_TWINS=1 the
// request works on host twins instead; a receive's twin is filled from the
// device first, so a shorter message leaves the rest of the buffer as it was.
#include <mpi-ext.h>
#include <mpi.h>

#include "api/handles_datatype.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "api/stream_internal.h"
#include "core/comm.h"

using loom::Comm;
using loom::errorf;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::stream::OpKind;
using loom::api::stream::Staging;
using loom::api::stream::StreamObj;

namespace loom::api::stream {

// The checks every enqueuing call starts with.
int front(MPI_Comm comm, const char* fn, Comm** c, StreamObj** s) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  *c = toComm(comm);
  if (!*c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  *s = streamOf(*c);
  if (!*s)
    return raise(*c,
                 errorf(MPI_ERR_COMM,
                        "%s has no stream: make one with MPIX_Stream_create and the "
                        "communicator with MPIX_Stream_comm_create",
                        (*c)->name().empty() ? "the communicator" : (*c)->name().c_str()),
                 fn);
  return MPI_SUCCESS;
}

}  // namespace loom::api::stream

namespace {

namespace st = loom::api::stream;

int checkP2p(bool send, const void* buf, int64_t count, MPI_Datatype type, int peer, int tag,
             Comm* c, const char* fn) {
  Status s = loom::api::checkData(buf, count, loom::api::toDatatype(type));
  if (!s.isOk()) return raise(c, s, fn);
  const bool rankOk = send ? loom::api::validSendRank(peer, c->peerSize())
                           : loom::api::validRecvRank(peer, c->peerSize());
  if (!rankOk)
    return raise(c,
                 errorf(MPI_ERR_RANK, "%s=%d is not a rank of %s (size %d)%s",
                        send ? "dest" : "source", peer, loom::api::describeComm(c).c_str(), c->peerSize(),
                        send ? " or MPI_PROC_NULL" : ", MPI_ANY_SOURCE or MPI_PROC_NULL"),
                 fn);
  const bool tagOk = send ? loom::api::validSendTag(tag) : loom::api::validRecvTag(tag);
  if (!tagOk)
    return raise(c,
                 errorf(MPI_ERR_TAG, "tag=%d is not in [0, %d]%s", tag, loom::kTagUb,
                        send ? "" : " or MPI_ANY_TAG"),
                 fn);
  return MPI_SUCCESS;
}

// A send or receive, blocking (`request` NULL) or not.
int p2p(bool send, void* buf, int64_t count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
        MPI_Status* status, MPI_Request* request, bool nonblocking, const char* fn) {
  Comm* c = nullptr;
  StreamObj* s = nullptr;
  if (int rc = st::front(comm, fn, &c, &s)) return rc;
  if (nonblocking && !request) return raise(c, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  if (int rc = checkP2p(send, buf, count, type, peer, tag, c, fn)) return rc;
  if (!s->gpu) {  // the host is the stream: the call itself, now
    if (send)
      return nonblocking ? PMPI_Isend_c(buf, count, type, peer, tag, comm, request)
                         : PMPI_Send_c(buf, count, type, peer, tag, comm);
    return nonblocking ? PMPI_Irecv_c(buf, count, type, peer, tag, comm, request)
                       : PMPI_Recv_c(buf, count, type, peer, tag, comm, status);
  }
  Staging staging;
  if (peer != MPI_PROC_NULL && st::onTwins()) {
    int64_t lo, hi;
    st::typeSpan(count, type, &lo, &hi);
    staging.add(buf, lo, hi, send ? Staging::kIn : Staging::kInOut);
  }
  Status s2 = staging.commit();
  if (!s2.isOk()) return raise(c, s2, fn);
  MPI_Request inner = MPI_REQUEST_NULL;
  int rc = send ? PMPI_Send_init_c(staging.translate(buf), count, type, peer, tag, comm, &inner)
                : PMPI_Recv_init_c(staging.translate(buf), count, type, peer, tag, comm, &inner);
  if (rc != MPI_SUCCESS) return rc;
  s2 = st::enqueue(s, c, nonblocking ? OpKind::kStart : OpKind::kBlocking, staging, inner,
                   send ? nullptr : status, fn, request);
  return s2.isOk() ? MPI_SUCCESS : raise(c, s2, fn);
}

int waitImpl(MPI_Request* request, MPI_Status* status) {
  static const char* fn = "MPIX_Wait_enqueue";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  // A host stream's requests are ordinary ones: waiting is MPI_Wait.
  if (*request == MPI_REQUEST_NULL || !st::isEnqueuedRequest(*request, nullptr))
    return PMPI_Wait(request, status);
  Status s = st::enqueueWait(1, request, status, false, fn);
  return s.isOk() ? MPI_SUCCESS : raise(nullptr, s, fn);
}

int waitallImpl(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  static const char* fn = "MPIX_Waitall_enqueue";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (count < 0) return raise(nullptr, errorf(MPI_ERR_COUNT, "count=%d < 0", count), fn);
  if (count > 0 && !reqs)
    return raise(nullptr, errorf(MPI_ERR_ARG, "array_of_requests is NULL"), fn);
  bool anyEnqueued = false;
  for (int i = 0; i < count && !anyEnqueued; ++i)
    anyEnqueued = reqs[i] != MPI_REQUEST_NULL && st::isEnqueuedRequest(reqs[i], nullptr);
  if (!anyEnqueued) return PMPI_Waitall(count, reqs, statuses);
  Status s = st::enqueueWait(count, reqs, statuses, true, fn);
  return s.isOk() ? MPI_SUCCESS : raise(nullptr, s, fn);
}

}  // namespace

extern "C" int PMPIX_Send_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm) {
  return st::locked([&] {
    return p2p(true, const_cast<void*>(buf), count, datatype, dest, tag, comm, nullptr, nullptr,
               false, "MPIX_Send_enqueue");
  });
}
LOOM_WEAK_ALIAS(MPIX_Send_enqueue)

extern "C" int PMPIX_Send_enqueue_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm) {
  return st::locked([&] {
    return p2p(true, const_cast<void*>(buf), count, datatype, dest, tag, comm, nullptr, nullptr,
               false, "MPIX_Send_enqueue_c");
  });
}
LOOM_WEAK_ALIAS(MPIX_Send_enqueue_c)

extern "C" int PMPIX_Recv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                                  MPI_Comm comm, MPI_Status* status) {
  return st::locked([&] {
    return p2p(false, buf, count, datatype, source, tag, comm, status, nullptr, false,
               "MPIX_Recv_enqueue");
  });
}
LOOM_WEAK_ALIAS(MPIX_Recv_enqueue)

extern "C" int PMPIX_Recv_enqueue_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                                    int tag, MPI_Comm comm, MPI_Status* status) {
  return st::locked([&] {
    return p2p(false, buf, count, datatype, source, tag, comm, status, nullptr, false,
               "MPIX_Recv_enqueue_c");
  });
}
LOOM_WEAK_ALIAS(MPIX_Recv_enqueue_c)

extern "C" int PMPIX_Isend_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest,
                                   int tag, MPI_Comm comm, MPI_Request* request) {
  return st::locked([&] {
    return p2p(true, const_cast<void*>(buf), count, datatype, dest, tag, comm, nullptr, request,
               true, "MPIX_Isend_enqueue");
  });
}
LOOM_WEAK_ALIAS(MPIX_Isend_enqueue)

extern "C" int PMPIX_Isend_enqueue_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                     int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return st::locked([&] {
    return p2p(true, const_cast<void*>(buf), count, datatype, dest, tag, comm, nullptr, request,
               true, "MPIX_Isend_enqueue_c");
  });
}
LOOM_WEAK_ALIAS(MPIX_Isend_enqueue_c)

extern "C" int PMPIX_Irecv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                                   MPI_Comm comm, MPI_Request* request) {
  return st::locked([&] {
    return p2p(false, buf, count, datatype, source, tag, comm, nullptr, request, true,
               "MPIX_Irecv_enqueue");
  });
}
LOOM_WEAK_ALIAS(MPIX_Irecv_enqueue)

extern "C" int PMPIX_Irecv_enqueue_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                                     int tag, MPI_Comm comm, MPI_Request* request) {
  return st::locked([&] {
    return p2p(false, buf, count, datatype, source, tag, comm, nullptr, request, true,
               "MPIX_Irecv_enqueue_c");
  });
}
LOOM_WEAK_ALIAS(MPIX_Irecv_enqueue_c)

extern "C" int PMPIX_Wait_enqueue(MPI_Request* request, MPI_Status* status) {
  return st::locked([&] { return waitImpl(request, status); });
}
LOOM_WEAK_ALIAS(MPIX_Wait_enqueue)

extern "C" int PMPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[],
                                     MPI_Status array_of_statuses[]) {
  return st::locked([&] { return waitallImpl(count, array_of_requests, array_of_statuses); });
}
LOOM_WEAK_ALIAS(MPIX_Waitall_enqueue)
