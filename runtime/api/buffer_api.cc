// The MPI 5.0 buffered-mode calls beyond MPI_Buffer_attach/detach/flush
// (bsend.cc): MPI_Buffer_iflush; a buffer per communicator
// (MPI_Comm_attach_buffer, _detach_buffer, _flush_buffer, _iflush_buffer);
// a buffer per session (MPI_Session_attach_buffer, ...). bsend.h says which
// buffer a buffered send uses.
//
// Where the buffers live. A communicator's buffer hangs on the
// communicator as an internal attribute (a keyval Loom creates on first
// use; MPI_Comm_dup does not copy it), whose delete callback flushes and
// frees it when the communicator is freed (or at MPI_Finalize for the
// predefined ones). A session's buffer lives in the session object and is
// flushed and freed by MPI_Session_finalize. Which session a communicator
// derives from is a second internal attribute, set by
// MPI_Comm_create_from_group when the group came from a session's process
// set (MPI_Group_from_session_pset) and copied by MPI_Comm_dup; a
// communicator split or created from such a communicator, or from a group
// derived from a session's group by the group operations, does not carry
// it, and uses the process's buffer instead.
//
// Nonblocking flushes return a request that completes when every message
// in the buffer at that moment, and any added meanwhile, has left it.
#include <mpi.h>

#include "api/bsend.h"
#include "api/comm_internal.h"
#include "api/info_internal.h"
#include "api/runtime.h"
#include "api/status_util.h"

using loom::Comm;
using loom::Request;
using loom::Status;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::SendBuffer;

namespace {

int deleteCommBuffer(MPI_Comm, int, void* value, void*) {
  delete static_cast<SendBuffer*>(value);  // flushes first
  return MPI_SUCCESS;
}

// The internal keyvals, made on first use.
int bufferKeyval() {
  static int k = [] {
    int kv = MPI_KEYVAL_INVALID;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteCommBuffer, &kv, nullptr);
    return kv;
  }();
  return k;
}
int sessionKeyval() {
  static int k = [] {
    int kv = MPI_KEYVAL_INVALID;
    PMPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv, nullptr);
    return kv;
  }();
  return k;
}

// The value of internal attribute `keyval` on `c`; nullptr when unset.
void* attr(Comm* c, int keyval) {
  for (const loom::Attribute& a : c->attributes())
    if (a.keyval == keyval) return a.value;
  return nullptr;
}

}  // namespace

namespace loom::api {

SendBuffer* commBufferSlot(Comm* c, bool create) {
  auto* b = static_cast<SendBuffer*>(attr(c, bufferKeyval()));
  if (b || !create) return b;
  b = new SendBuffer;
  PMPI_Comm_set_attr(toHandle(c), bufferKeyval(), b);
  return b;
}

SendBuffer* commBuffer(Comm* c) {
  if (SendBuffer* b = commBufferSlot(c, false); b && b->attached()) return b;
  if (void* s = attr(c, sessionKeyval())) {
    SendBuffer** slot = sessionBufferSlot(reinterpret_cast<MPI_Session>(s));
    if (slot && *slot && (*slot)->attached()) return *slot;
  }
  return nullptr;
}

void noteCommSession(Comm* c, void* session) {
  PMPI_Comm_set_attr(toHandle(c), sessionKeyval(), session);
}

}  // namespace loom::api

namespace {

// MPI_*_detach_buffer's out-arguments.
int detachInto(SendBuffer* b, void* buffer_addr, int* size, Status* st) {
  void* base = nullptr;
  int64_t n = 0;
  *st = b ? b->detach(&base, &n) : errorf(MPI_ERR_BUFFER, "no buffer is attached");
  if (!st->isOk()) return st->code();
  *static_cast<void**>(buffer_addr) = base;
  *size = static_cast<int>(n);
  return MPI_SUCCESS;
}

}  // namespace

// ---- The process's buffer ---------------------------------------------------

extern "C" int PMPI_Buffer_iflush(MPI_Request* request) {
  static const char* fn = "MPI_Buffer_iflush";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  *request = loom::api::toHandle(SendBuffer::process().iflush());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Buffer_iflush)

// ---- A communicator's buffer ------------------------------------------------

namespace {
Comm* commOf(MPI_Comm comm, int* rc, const char* fn) {
  *rc = MPI_SUCCESS;
  if (!requireRunning(fn)) {
    *rc = MPI_ERR_OTHER;
    return nullptr;
  }
  Comm* c = loom::api::toComm(comm);
  if (!c) *rc = raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  return c;
}
}  // namespace

extern "C" int PMPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
  static const char* fn = "MPI_Comm_attach_buffer";
  int rc;
  Comm* c = commOf(comm, &rc, fn);
  if (!c) return rc;
  Status st = loom::api::commBufferSlot(c, true)->attach(buffer, size);
  if (!st.isOk()) return raise(c, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_attach_buffer)

extern "C" int PMPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
  static const char* fn = "MPI_Comm_detach_buffer";
  int rc;
  Comm* c = commOf(comm, &rc, fn);
  if (!c) return rc;
  if (!buffer_addr || !size)
    return raise(c, errorf(MPI_ERR_ARG, "buffer_addr or size is NULL"), fn);
  Status st;
  if (detachInto(loom::api::commBufferSlot(c, false), buffer_addr, size, &st) != MPI_SUCCESS)
    return raise(c, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_detach_buffer)

// Flushing a communicator without a buffer of its own does nothing.
extern "C" int PMPI_Comm_flush_buffer(MPI_Comm comm) {
  static const char* fn = "MPI_Comm_flush_buffer";
  int rc;
  Comm* c = commOf(comm, &rc, fn);
  if (!c) return rc;
  if (SendBuffer* b = loom::api::commBufferSlot(c, false)) b->flush();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_flush_buffer)

extern "C" int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request) {
  static const char* fn = "MPI_Comm_iflush_buffer";
  int rc;
  Comm* c = commOf(comm, &rc, fn);
  if (!c) return rc;
  if (!request) return raise(c, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  *request = loom::api::toHandle(loom::api::commBufferSlot(c, true)->iflush());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_iflush_buffer)

// ---- A session's buffer -------------------------------------------------------

namespace {
SendBuffer** sessionSlot(MPI_Session session, int* rc, const char* fn) {
  *rc = MPI_SUCCESS;
  SendBuffer** slot = loom::api::sessionBufferSlot(session);
  if (!slot)
    *rc = loom::api::raiseNoObject(errorf(MPI_ERR_SESSION, "invalid session"), fn);
  return slot;
}
}  // namespace

extern "C" int PMPI_Session_attach_buffer(MPI_Session session, void* buffer, int size) {
  static const char* fn = "MPI_Session_attach_buffer";
  int rc;
  SendBuffer** slot = sessionSlot(session, &rc, fn);
  if (!slot) return rc;
  if (!*slot) *slot = new SendBuffer;
  Status st = (*slot)->attach(buffer, size);
  if (!st.isOk()) return loom::api::raiseOnSession(session, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_attach_buffer)

extern "C" int PMPI_Session_detach_buffer(MPI_Session session, void* buffer_addr, int* size) {
  static const char* fn = "MPI_Session_detach_buffer";
  int rc;
  SendBuffer** slot = sessionSlot(session, &rc, fn);
  if (!slot) return rc;
  if (!buffer_addr || !size)
    return loom::api::raiseOnSession(session,
                                     errorf(MPI_ERR_ARG, "buffer_addr or size is NULL"), fn);
  Status st;
  if (detachInto(*slot, buffer_addr, size, &st) != MPI_SUCCESS)
    return loom::api::raiseOnSession(session, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_detach_buffer)

extern "C" int PMPI_Session_flush_buffer(MPI_Session session) {
  static const char* fn = "MPI_Session_flush_buffer";
  int rc;
  SendBuffer** slot = sessionSlot(session, &rc, fn);
  if (!slot) return rc;
  if (*slot) (*slot)->flush();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_flush_buffer)

extern "C" int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request* request) {
  static const char* fn = "MPI_Session_iflush_buffer";
  int rc;
  SendBuffer** slot = sessionSlot(session, &rc, fn);
  if (!slot) return rc;
  if (!request)
    return loom::api::raiseOnSession(session, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  if (!*slot) *slot = new SendBuffer;
  *request = loom::api::toHandle((*slot)->iflush());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_iflush_buffer)
