// The MPI 5.0 buffered-mode calls beyond MPI_Buffer_attach/detach/flush
// (bsend.cc): MPI_Buffer_iflush; a buffer per communicator
// (MPI_Comm_attach_buffer, _detach_buffer, _flush_buffer, _iflush_buffer);
// a buffer per session (MPI_Session_attach_buffer, ...). bsend.h says which
// buffer a buffered send uses.
//
// Each attach and detach call has its large-count _c form (MPI_Count size;
// api/large_count.h) sharing one implementation. The int detach reports
// MPI_ERR_VALUE_TOO_LARGE, and leaves the buffer attached, when the
// attached size does not fit an int (as MPI_Buffer_detach does).
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

#include <climits>
#include <cstdint>

#include "api/bsend.h"
#include "api/comm_internal.h"
#include "api/info_internal.h"
#include "api/large_count.h"
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

// MPI_*_detach_buffer's out-arguments. `maxSize`: the largest value the
// caller's size argument holds; a larger buffer stays attached and the call
// fails with MPI_ERR_VALUE_TOO_LARGE.
int detachInto(SendBuffer* b, void* buffer_addr, int64_t* size, int64_t maxSize, Status* st) {
  if (b && b->attached() && b->size() > static_cast<size_t>(maxSize)) {
    *st = errorf(MPI_ERR_VALUE_TOO_LARGE,
                 "the attached buffer's size (%zu bytes) does not fit an int: detach it with "
                 "the _c form",
                 b->size());
    return st->code();
  }
  void* base = nullptr;
  int64_t n = 0;
  *st = b ? b->detach(&base, &n) : errorf(MPI_ERR_BUFFER, "no buffer is attached");
  if (!st->isOk()) return st->code();
  *static_cast<void**>(buffer_addr) = base;
  *size = n;
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

int commAttach(MPI_Comm comm, void* buffer, int64_t size, const char* fn) {
  int rc;
  Comm* c = commOf(comm, &rc, fn);
  if (!c) return rc;
  Status st = loom::api::commBufferSlot(c, true)->attach(buffer, size);
  if (!st.isOk()) return raise(c, st, fn);
  return MPI_SUCCESS;
}

int commDetach(MPI_Comm comm, void* buffer_addr, int64_t* size, int64_t maxSize,
               const char* fn) {
  int rc;
  Comm* c = commOf(comm, &rc, fn);
  if (!c) return rc;
  if (!buffer_addr || !size)
    return raise(c, errorf(MPI_ERR_ARG, "buffer_addr or size is NULL"), fn);
  Status st;
  if (detachInto(loom::api::commBufferSlot(c, false), buffer_addr, size, maxSize, &st) !=
      MPI_SUCCESS)
    return raise(c, st, fn);
  return MPI_SUCCESS;
}
}  // namespace

extern "C" int PMPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
  return commAttach(comm, buffer, size, "MPI_Comm_attach_buffer");
}
LOOM_WEAK_ALIAS(MPI_Comm_attach_buffer)
LOOM_LARGE_COUNT(Comm_attach_buffer, (MPI_Comm comm, void* buffer, MPI_Count size),
                 commAttach(comm, buffer, size, "MPI_Comm_attach_buffer_c"))

extern "C" int PMPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
  int64_t n = 0;
  int rc = commDetach(comm, buffer_addr, size ? &n : nullptr, INT_MAX, "MPI_Comm_detach_buffer");
  if (rc == MPI_SUCCESS) *size = static_cast<int>(n);
  return rc;
}
LOOM_WEAK_ALIAS(MPI_Comm_detach_buffer)
LOOM_LARGE_COUNT(Comm_detach_buffer, (MPI_Comm comm, void* buffer_addr, MPI_Count* size),
                 commDetach(comm, buffer_addr, size, INT64_MAX, "MPI_Comm_detach_buffer_c"))

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

int sessionAttach(MPI_Session session, void* buffer, int64_t size, const char* fn) {
  int rc;
  SendBuffer** slot = sessionSlot(session, &rc, fn);
  if (!slot) return rc;
  if (!*slot) *slot = new SendBuffer;
  Status st = (*slot)->attach(buffer, size);
  if (!st.isOk()) return loom::api::raiseOnSession(session, st, fn);
  return MPI_SUCCESS;
}

int sessionDetach(MPI_Session session, void* buffer_addr, int64_t* size, int64_t maxSize,
                  const char* fn) {
  int rc;
  SendBuffer** slot = sessionSlot(session, &rc, fn);
  if (!slot) return rc;
  if (!buffer_addr || !size)
    return loom::api::raiseOnSession(session,
                                     errorf(MPI_ERR_ARG, "buffer_addr or size is NULL"), fn);
  Status st;
  if (detachInto(*slot, buffer_addr, size, maxSize, &st) != MPI_SUCCESS)
    return loom::api::raiseOnSession(session, st, fn);
  return MPI_SUCCESS;
}
}  // namespace

extern "C" int PMPI_Session_attach_buffer(MPI_Session session, void* buffer, int size) {
  return sessionAttach(session, buffer, size, "MPI_Session_attach_buffer");
}
LOOM_WEAK_ALIAS(MPI_Session_attach_buffer)
LOOM_LARGE_COUNT(Session_attach_buffer, (MPI_Session session, void* buffer, MPI_Count size),
                 sessionAttach(session, buffer, size, "MPI_Session_attach_buffer_c"))

extern "C" int PMPI_Session_detach_buffer(MPI_Session session, void* buffer_addr, int* size) {
  int64_t n = 0;
  int rc = sessionDetach(session, buffer_addr, size ? &n : nullptr, INT_MAX,
                         "MPI_Session_detach_buffer");
  if (rc == MPI_SUCCESS) *size = static_cast<int>(n);
  return rc;
}
LOOM_WEAK_ALIAS(MPI_Session_detach_buffer)
LOOM_LARGE_COUNT(Session_detach_buffer, (MPI_Session session, void* buffer_addr, MPI_Count* size),
                 sessionDetach(session, buffer_addr, size, INT64_MAX,
                               "MPI_Session_detach_buffer_c"))

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
