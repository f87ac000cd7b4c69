// Buffered sends: the buffers the user attaches (to the process with
// MPI_Buffer_attach, to a communicator with MPI_Comm_attach_buffer, to a
// session with MPI_Session_attach_buffer), and the messages MPI_Bsend,
// MPI_Ibsend and MPI_Bsend_init copy into them.
//
// Each message occupies its packed size plus MPI_BSEND_OVERHEAD bytes of a
// buffer from the moment it is copied until the engine has sent it; the
// space is then free again. Loom keeps its bookkeeping outside the user's
// buffer, so the overhead is pure accounting: a buffer sized by the
// standard's formula (sum of MPI_Pack_size + MPI_BSEND_OVERHEAD) is enough.
//
// Which buffer a buffered send on communicator `c` uses (MPI 5.0 §3.6):
// c's own if one is attached, else that of the session c derives from (a
// communicator made by MPI_Comm_create_from_group from a session's process
// set group, or duplicated from one), else the process's. With none
// attached the send fails with MPI_ERR_BUFFER.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "core/comm.h"
#include "core/datatype.h"
#include "core/request.h"
#include "core/status.h"

namespace loom::api {

// One attachable buffer. MPI_BUFFER_AUTOMATIC: no user memory; every
// message gets its own heap copy (freed once sent), so a send never fails
// for lack of space.
class SendBuffer {
 public:
  SendBuffer();
  ~SendBuffer();  // flushes first
  SendBuffer(const SendBuffer&) = delete;
  SendBuffer& operator=(const SendBuffer&) = delete;

  bool attached() const { return attached_; }
  size_t size() const { return size_; }  // bytes attached (0 in automatic mode)
  // MPI_ERR_BUFFER when one is attached already, MPI_ERR_ARG for a
  // negative size or NULL with size > 0.
  Status attach(void* buffer, int64_t size);
  // Waits until every message has left the buffer, then detaches it:
  // *base and *size are what was attached (MPI_BUFFER_AUTOMATIC and 0 for
  // automatic mode). MPI_ERR_BUFFER when none is attached.
  Status detach(void** base, int64_t* size);
  // Waits until every message has left the buffer.
  void flush();
  // A request that completes when every message now in the buffer has
  // left it (at once when it is empty).
  Request* iflush();

  Status send(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm);

  // Every buffer alive (MPI_Finalize flushes them all).
  static std::vector<SendBuffer*>& all();
  static SendBuffer& process();

 private:
  struct Region {
    size_t offset;  // in the attached buffer (0 in automatic mode)
    size_t length;  // bytes reserved, overhead included
    void* heap;     // automatic mode: the message's own copy
    Request* req;   // the internal send reading it
  };
  bool findGap(size_t need, size_t* offset, size_t* index) const;
  size_t bytesInUse() const;
  void dropRegion(Request* req);
  static void onSent(Request* req);

  char* base_ = nullptr;
  size_t size_ = 0;
  bool attached_ = false;
  bool automatic_ = false;
  std::vector<Region> regions_;        // sorted by offset
  std::vector<Request*> flushWaiters_;  // iflush requests, completed when empty
};

// A buffered send on `comm`, through the buffer that applies (see above).
Status bufferedSend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm);

// Waits until every buffered send has left every buffer (MPI_Finalize).
void flushBufferedSends();

// The attached buffer of `c` itself or else of its session (nullptr:
// neither; buffer_api.cc). commBufferSlot is c's own buffer object (an
// internal attribute, not copied by MPI_Comm_dup, flushed and freed when the
// communicator is), made when `create`, attached or not.
SendBuffer* commBuffer(Comm* c);
SendBuffer* commBufferSlot(Comm* c, bool create);

// Sessions (session_api.cc): the buffer slot of a valid session, nullptr
// for an invalid handle; errors reported through the session's handler.
SendBuffer** sessionBufferSlot(MPI_Session s);
int raiseOnSession(MPI_Session s, const Status& st, const char* fn);
// Marks `c` as derived from session `s` (MPI_Comm_create_from_group; the
// mark is copied by MPI_Comm_dup), so its buffered sends may use the
// session's buffer.
void noteCommSession(Comm* c, void* session);

}  // namespace loom::api
