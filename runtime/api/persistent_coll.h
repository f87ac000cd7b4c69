// Persistent collective requests (MPI_*_init, MPI 5.0 §6.13), as the
// request machinery of pt2pt_api.cc (MPI_Start, MPI_Startall) and
// request_api.cc (MPI_Wait..., MPI_Request_free) sees them.
//
// Such a request is a Request of kind kColl with `persistent` set whose
// `owner` is a PersistentColl: the plan of the operation, built once by the
// init call (arguments checked, buffers, counts, datatypes, communicator
// and its tag captured, references held). Each MPI_Start runs the plan
// again: the plan starts an ordinary collective schedule and the schedule's
// completion completes the user's request, which then becomes inactive like
// a persistent send or receive. MPI_Request_free deletes the plan (at once
// when inactive, when the running activation finishes otherwise).
#pragma once

#include "core/request.h"
#include "core/status.h"

namespace loom::api {

class PersistentColl {
 public:
  virtual ~PersistentColl() = default;
  // Starts one activation; it completes `user` (through completeFrom or
  // by setting it complete) when done. `user` is already marked active.
  virtual Status start(Request* user) = 0;
  // The source and tag a completed activation's status reports (a
  // partitioned receive's); false: none (MPI_ANY_SOURCE, MPI_ANY_TAG).
  virtual bool envelope(int* source, int* tag) const {
    (void)source;
    (void)tag;
    return false;
  }
};

// A new inactive persistent request owning `plan`.
Request* newPersistentColl(Comm* comm, PersistentColl* plan);

inline bool isPersistentColl(const Request* r) {
  return r->persistent && r->kind == ReqKind::kColl && r->owner;
}

// MPI_Start of an inactive persistent collective; an MPI error code, raised.
int startPersistentColl(Request* r, const char* fn);

// MPI_Request_free of an inactive one: deletes the plan and the request.
void freePersistentColl(Request* r);
// MPI_Request_free of an active one: the plan goes when the activation
// finishes (this becomes the request's onComplete hook).
void freePersistentCollOnComplete(Request* r);

// Runs a started schedule's request `inner` to the end of `user`'s
// activation: copies its result into `user` when it has completed already,
// else arranges for its completion to complete `user`. Takes `inner`.
void completeFrom(Request* inner, Request* user);

}  // namespace loom::api
