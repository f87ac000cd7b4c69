// The requests the API layer makes itself, and what the completion calls
// (request_api.cc) must do for them:
//   - generalized requests (MPI_Grequest_start, grequest_api.cc): the
//     status comes from the user's query_fn when a completion call reports
//     it, the user's free_fn runs when the request is freed, cancel_fn on
//     MPI_Cancel;
//   - compound requests (MPI_Isendrecv(_replace), request_compound.cc):
//     complete when both parts are, with the receive's status.
#pragma once

#include <mpi.h>

#include "core/request.h"
#include "core/status.h"

namespace loom {
class Comm;
class Datatype;
}  // namespace loom

namespace loom::api {

// Generalized requests. Each returns the callback's code (MPI_SUCCESS when
// there is nothing to call).
// Calls query_fn and stores its status in r (source, tag, count, cancelled;
// statusError = query_fn's code). A completed generalized request only.
int generalizedQuery(Request* r);
// Calls free_fn once (later calls do nothing) and drops the callbacks.
int generalizedFree(Request* r);
// Calls cancel_fn(extra_state, complete).
int generalizedCancel(Request* r);

// Compound send-receive: starts a receive into (rbuf, rcount, rtype) from
// `source` and a send of (sbuf, scount, stype) to `dest`, both on comm's
// point-to-point channel, under one request. With `replace` the send data
// is packed aside first (MPI_Isendrecv_replace: sbuf == rbuf). Arguments
// are already checked.
Status startSendrecv(const void* sbuf, int64_t scount, Datatype* stype, int dest, int stag,
                     void* rbuf, int64_t rcount, Datatype* rtype, int source, int rtag,
                     Comm* comm, bool replace, Request** out);

}  // namespace loom::api
