// What every collective entry point shares once its arguments are checked:
// start the schedule the selector picks (coll/coll.h), then wait on it
// (blocking form) or hand its request to the caller (MPI_I* form).
//
// Lifetimes. A nonblocking collective keeps its communicator and every
// datatype named in its CollArgs (type, recvType, and for alltoallw each
// per-rank type) alive until it completes: the user may free them right
// after the MPI_I* call returns. The references are taken here, before the
// schedule starts, and dropped by the request's onComplete hook (or at once
// when the schedule completed inside Schedule::start, or failed to start).
// A blocking collective needs none: the user cannot free anything while the
// call has not returned. Count and displacement arrays are read while the
// schedule is built, so the algorithms never keep pointers to them.
#pragma once

#include <mpi.h>

#include <cassert>
#include <vector>

#include "api/runtime.h"
#include "api/status_util.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/progress.h"
#include "core/request.h"

namespace loom::api {

// References a pending nonblocking collective holds (Request::owner).
struct CollHold {
  Comm* comm = nullptr;
  std::vector<Datatype*> types;

  void release() {
    for (Datatype* t : types) t->release();
    types.clear();
    if (comm) Comm::release(comm);
    comm = nullptr;
  }
};

inline CollHold* holdCollArgs(const coll::CollArgs& a) {
  auto* h = new CollHold;
  h->comm = a.comm;
  a.comm->retain();
  auto add = [h](Datatype* t) {
    if (t && !t->isPredefined()) {
      t->retain();
      h->types.push_back(t);
    }
  };
  add(a.type);
  add(a.recvType);
  const int p = a.comm->size();
  if (a.sendTypes)
    for (int i = 0; i < p; ++i) add(a.sendTypes[i]);
  if (a.recvTypes)
    for (int i = 0; i < p; ++i) add(a.recvTypes[i]);
  return h;
}

inline void releaseCollHold(Request* r) {
  auto* h = static_cast<CollHold*>(r->owner);
  r->owner = nullptr;
  r->onComplete = nullptr;
  if (h) {
    h->release();
    delete h;
  }
}

// Waits for a collective's request, releases it, reports its error.
inline int waitCollective(Request* r, Comm* comm, const char* fn) {
  progress::waitUntil([r] { return r->complete; });
  int code = r->statusError;
  Status why = code == MPI_SUCCESS ? Status::ok()
               : r->error.isOk() ? errorf(code, "the collective failed")
                                 : std::move(r->error);
  Request::release(r);
  if (code != MPI_SUCCESS) return raise(comm, why, fn);
  return MPI_SUCCESS;
}

// Starts a collective; with `request` NULL waits for it (blocking form),
// else hands its request to the caller.
// args.blocking must say whether `request` is NULL.
inline int runCollective(const coll::CollArgs& args, MPI_Request* request, const char* fn) {
  assert(args.blocking == (request == nullptr));
  Request* r = nullptr;
  CollHold* hold = request ? holdCollArgs(args) : nullptr;
  Status st = coll::run(args, &r);
  if (hold) {
    // No progress thread: a schedule that did not complete inside run()
    // cannot complete before the hook is attached here.
    if (st.isOk() && r && !r->complete) {
      r->owner = hold;
      r->onComplete = releaseCollHold;
    } else {
      hold->release();
      delete hold;
    }
  }
  if (!st.isOk()) {
    if (r) Request::release(r);
    return raise(args.comm, st, fn);
  }
  if (request) {
    *request = toHandle(r);
    return MPI_SUCCESS;
  }
  if (!r) return MPI_SUCCESS;  // finished inside run() (CollArgs::blocking)
  return waitCollective(r, args.comm, fn);
}

}  // namespace loom::api
