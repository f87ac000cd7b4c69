// Generalized requests: MPI_Grequest_start and MPI_Grequest_complete, and
// the callbacks the completion calls run (request_kinds.h).
//
// The request is a Request of kind kGeneralized whose owner holds the
// user's callbacks. Loom never progresses it: MPI_Grequest_complete marks
// it complete (Request::finish), after which a wait or test returns.
//   query_fn  when a completion call (wait, test, MPI_Request_get_status
//             and their any/all/some forms) reports the status; its return
//             code is the request's error;
//   free_fn   when the request is freed: by the wait or test that completes
//             it (after query_fn), or by MPI_Request_free, at once, even
//             before MPI_Grequest_complete (the object then lives until
//             MPI_Grequest_complete, which the user must still call);
//   cancel_fn on MPI_Cancel, told whether MPI_Grequest_complete was called.
#include "api/request_kinds.h"
#include "api/runtime.h"
#include "api/status_util.h"

using loom::errorf;
using loom::ReqKind;
using loom::Request;
using loom::api::raise;
using loom::api::requireRunning;

namespace {

struct Callbacks {
  MPI_Grequest_query_function* query;
  MPI_Grequest_free_function* free;
  MPI_Grequest_cancel_function* cancel;
  void* extra;
};

Callbacks* callbacks(Request* r) {
  return r->kind == ReqKind::kGeneralized ? static_cast<Callbacks*>(r->owner) : nullptr;
}

}  // namespace

namespace loom::api {

int generalizedQuery(Request* r) {
  Callbacks* cb = callbacks(r);
  if (!cb || !cb->query) return MPI_SUCCESS;
  MPI_Status st;
  setEmptyStatus(&st);
  int rc = cb->query(cb->extra, &st);
  r->statusSource = st.MPI_SOURCE;
  r->statusTag = st.MPI_TAG;
  r->bytes = statusBytes(&st);
  r->cancelled = statusCancelled(&st);
  r->statusError = rc;
  return rc;
}

int generalizedFree(Request* r) {
  Callbacks* cb = callbacks(r);
  if (!cb) return MPI_SUCCESS;
  r->owner = nullptr;
  int rc = cb->free ? cb->free(cb->extra) : MPI_SUCCESS;
  delete cb;
  return rc;
}

int generalizedCancel(Request* r) {
  Callbacks* cb = callbacks(r);
  if (!cb || !cb->cancel) return MPI_SUCCESS;
  return cb->cancel(cb->extra, r->complete ? 1 : 0);
}

}  // namespace loom::api

extern "C" int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn,
                                   MPI_Grequest_free_function* free_fn,
                                   MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                                   MPI_Request* request) {
  const char* fn = "MPI_Grequest_start";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  // NULL callbacks are accepted (as MPICH does) and do nothing.
  Request* r = Request::alloc(ReqKind::kGeneralized);
  r->owner = new Callbacks{query_fn, free_fn, cancel_fn, extra_state};
  r->active = true;
  *request = loom::api::toHandle(r);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Grequest_start)

extern "C" int PMPI_Grequest_complete(MPI_Request request) {
  const char* fn = "MPI_Grequest_complete";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Request* r = loom::api::toRequest(request);
  if (!r || r->kind != ReqKind::kGeneralized)
    return raise(nullptr, errorf(MPI_ERR_REQUEST, "not a generalized request"), fn);
  if (r->complete)
    return raise(nullptr,
                 errorf(MPI_ERR_REQUEST, "MPI_Grequest_complete was already called on it"), fn);
  r->finish();  // recycles it if the user freed it already
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Grequest_complete)
