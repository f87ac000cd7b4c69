#include "core/request.h"

#include "core/comm.h"
#include "core/datatype.h"
#include "core/device_stage.h"

namespace loom {
namespace {
// Requests are never returned to the system while the process runs: a stale
// user handle then points at recycled memory whose magic tells the truth.
// The free list is intrusive (through nextPending): allocation is a pointer
// pop on the path of every MPI_Send and MPI_Recv.
Request* gFree = nullptr;
}  // namespace

Request* Request::alloc(ReqKind kind) {
  Request* r = gFree;
  if (r) {
    gFree = r->nextPending;
    *r = Request();
  } else {
    r = new Request();
  }
  r->kind = kind;
  return r;
}

void Request::release(Request* r) {
  r->magic = 0;
  r->kind = ReqKind::kDone;
  r->nextPending = gFree;
  gFree = r;
}

void Request::finish() {
  if (staged) [[unlikely]]
    device::finishStaged(this);
  complete = true;
  // A communicator or datatype freed by the user while this request was
  // pending lives until here.
  if (holdsRefs) {
    holdsRefs = false;
    if (comm) Comm::release(comm);
    if (type && !type->isPredefined()) type->release();  // predefined: never counted
  }
  if (onComplete) onComplete(this);
  if (userFreed && !persistent) release(this);
}

}  // namespace loom
