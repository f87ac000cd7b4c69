// Completing requests: MPI_Wait/Test and their any/all/some variants,
// MPI_Request_free, MPI_Request_get_status(_all/_any/_some), MPI_Cancel,
// and the status
// queries (MPI_Get_count, MPI_Get_elements, MPI_Test_cancelled).
//
// Rules every function here follows:
//  - MPI_REQUEST_NULL and inactive persistent requests are "done" with an
//    empty status.
//  - Completing a non-persistent request recycles it and sets the handle to
//    MPI_REQUEST_NULL; a persistent one only becomes inactive.
//  - Single-completion calls report a failed request's error through the
//    error handler of the request's communicator and leave MPI_ERROR alone;
//    the all/some calls return MPI_ERR_IN_STATUS and put each request's
//    code in its status (MPI_ERR_PENDING for those not completed).
//  - A test polls progress once; a wait polls until done (yielding when the
//    node is oversubscribed).
#include <cstdint>
#include <vector>

#include "api/handles_datatype.h"
#include "api/persistent_coll.h"
#include "api/request_kinds.h"
#include "api/large_count.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "core/progress.h"
#include "p2p/p2p.h"

using loom::Comm;
using loom::errorf;
using loom::ReqKind;
using loom::Request;
using loom::api::fillStatus;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::setEmptyStatus;
using loom::api::toRequest;

namespace {

// A handle as the completion calls see it.
enum class Slot { kNull, kInactive, kActive, kInvalid };

Slot classify(MPI_Request h, Request** out) {
  *out = nullptr;
  if (h == MPI_REQUEST_NULL) return Slot::kNull;
  Request* r = toRequest(h);
  if (!r) return Slot::kInvalid;
  *out = r;
  if (r->persistent && !r->active) return Slot::kInactive;
  return Slot::kActive;
}

// The status of a completed request, reported without freeing it: a
// generalized request asks the user's query_fn (request_kinds.h). Returns
// the request's error code.
int report(Request* r, MPI_Status* status) {
  if (r->kind == ReqKind::kGeneralized) loom::api::generalizedQuery(r);
  fillStatus(status, *r);
  return r->statusError;
}

// Recycles a request nobody will touch again; a persistent one gives back
// the reference it holds on its datatype, a generalized one runs free_fn.
// Returns free_fn's code (MPI_SUCCESS for the others).
int freeNow(Request* r) {
  if (loom::api::isPersistentColl(r)) {
    loom::api::freePersistentColl(r);
    return MPI_SUCCESS;
  }
  if (r->persistent && r->type) r->type->release();
  int err = loom::api::generalizedFree(r);
  Request::release(r);
  return err;
}

// Finishes a completed request: status out, handle cleared or request
// deactivated. Returns the request's error code (MPI_SUCCESS normally).
int retire(MPI_Request* handle, Request* r, MPI_Status* status) {
  int err = report(r, status);
  if (r->persistent) {
    r->active = false;
  } else {
    int freeErr = freeNow(r);
    if (err == MPI_SUCCESS) err = freeErr;
    *handle = MPI_REQUEST_NULL;
  }
  return err;
}

// Reports a failed request from a single-completion call.
int raiseRequestError(Comm* comm, int err, const char* function) {
  const char* text = loom::errorClassText(err);
  return raise(comm, errorf(err, "the request failed: %s", text ? text : "error"), function);
}

int invalidRequest(const char* function, int index) {
  if (index < 0) return raise(nullptr, errorf(MPI_ERR_REQUEST, "invalid request handle"), function);
  return raise(nullptr,
               errorf(MPI_ERR_REQUEST, "array_of_requests[%d] is not a valid request", index),
               function);
}

// Checks an array argument of count handles; returns MPI_SUCCESS or the
// code raised.
int checkArray(int count, const MPI_Request reqs[], const char* function) {
  if (count < 0) return raise(nullptr, errorf(MPI_ERR_COUNT, "count=%d < 0", count), function);
  if (count > 0 && !reqs)
    return raise(nullptr, errorf(MPI_ERR_ARG, "array_of_requests is NULL"), function);
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (classify(reqs[i], &r) == Slot::kInvalid) return invalidRequest(function, i);
  }
  return MPI_SUCCESS;
}

MPI_Status* statusAt(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? nullptr : &statuses[i];
}

// The communicator whose handler reports MPI_ERR_IN_STATUS: the first
// failed request's.
Comm* errorComm(Comm* c) {
  return c && c->valid() ? c : nullptr;
}

// Completes every done request among reqs[0..count): the shared body of
// MPI_Waitall/MPI_Testall once all are done. With `keep`
// (MPI_Request_get_status_all) the statuses are reported and the requests
// left as they are.
int completeAll(int count, MPI_Request reqs[], MPI_Status statuses[], const char* function,
                bool keep = false) {
  bool anyError = false;
  Comm* failedComm = nullptr;
  std::vector<int> codes(count, MPI_SUCCESS);
  for (int i = 0; i < count; ++i) {
    Request* r;
    Slot s = classify(reqs[i], &r);
    MPI_Status* st = statusAt(statuses, i);
    if (s != Slot::kActive) {
      setEmptyStatus(st);
      continue;
    }
    Comm* comm = r->comm;
    codes[i] = keep ? report(r, st) : retire(&reqs[i], r, st);
    if (codes[i] != MPI_SUCCESS && !anyError) {
      anyError = true;
      failedComm = errorComm(comm);
    }
  }
  if (!anyError) return MPI_SUCCESS;
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < count; ++i) statuses[i].MPI_ERROR = codes[i];
  return raise(failedComm, errorf(MPI_ERR_IN_STATUS, "one or more requests failed"), function);
}

// The first done slot in reqs (null/inactive are skipped); -1 if none is
// done, count if every slot is null or inactive.
int findDone(int count, const MPI_Request reqs[]) {
  bool anyActive = false;
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (classify(reqs[i], &r) != Slot::kActive) continue;
    anyActive = true;
    if (r->complete) return i;
  }
  return anyActive ? -1 : count;
}

bool allDone(int count, const MPI_Request reqs[]) {
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (classify(reqs[i], &r) == Slot::kActive && !r->complete) return false;
  }
  return true;
}

int completeAny(int count, MPI_Request reqs[], int i, int* index, MPI_Status* status,
                const char* function, bool keep = false) {
  if (i == count) {
    *index = MPI_UNDEFINED;
    setEmptyStatus(status);
    return MPI_SUCCESS;
  }
  Request* r = toRequest(reqs[i]);
  Comm* comm = errorComm(r->comm);
  *index = i;
  int err = keep ? report(r, status) : retire(&reqs[i], r, status);
  return err == MPI_SUCCESS ? MPI_SUCCESS : raiseRequestError(comm, err, function);
}

// Completes every done request (MPI_Waitsome/MPI_Testsome); *outcount 0 if
// none is, MPI_UNDEFINED if all are null or inactive.
int completeSome(int count, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[],
                 const char* function, bool keep = false) {
  int n = 0;
  bool anyActive = false, anyError = false;
  Comm* failedComm = nullptr;
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (classify(reqs[i], &r) != Slot::kActive) continue;
    anyActive = true;
    if (!r->complete) continue;
    Comm* comm = r->comm;
    MPI_Status* st = statusAt(statuses, n);
    int err = keep ? report(r, st) : retire(&reqs[i], r, st);
    if (st) st->MPI_ERROR = err;
    if (err != MPI_SUCCESS && !anyError) {
      anyError = true;
      failedComm = errorComm(comm);
    }
    indices[n++] = i;
  }
  *outcount = anyActive ? n : MPI_UNDEFINED;
  if (!anyError) return MPI_SUCCESS;
  return raise(failedComm, errorf(MPI_ERR_IN_STATUS, "one or more requests failed"), function);
}

}  // namespace

extern "C" int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!requireRunning("MPI_Wait")) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), "MPI_Wait");
  Request* r;
  switch (classify(*request, &r)) {
    case Slot::kInvalid:
      return invalidRequest("MPI_Wait", -1);
    case Slot::kNull:
    case Slot::kInactive:
      setEmptyStatus(status);
      return MPI_SUCCESS;
    case Slot::kActive:
      break;
  }
  loom::progress::waitUntil([r] { return r->complete; });
  Comm* comm = errorComm(r->comm);
  int err = retire(request, r, status);
  return err == MPI_SUCCESS ? MPI_SUCCESS : raiseRequestError(comm, err, "MPI_Wait");
}
LOOM_WEAK_ALIAS(MPI_Wait)

extern "C" int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!requireRunning("MPI_Test")) return MPI_ERR_OTHER;
  if (!request || !flag)
    return raise(nullptr, errorf(MPI_ERR_ARG, "request or flag is NULL"), "MPI_Test");
  Request* r;
  switch (classify(*request, &r)) {
    case Slot::kInvalid:
      return invalidRequest("MPI_Test", -1);
    case Slot::kNull:
    case Slot::kInactive:
      *flag = 1;
      setEmptyStatus(status);
      return MPI_SUCCESS;
    case Slot::kActive:
      break;
  }
  if (!r->complete) loom::progress::testPoll();
  *flag = r->complete ? 1 : 0;
  if (!r->complete) return MPI_SUCCESS;
  Comm* comm = errorComm(r->comm);
  int err = retire(request, r, status);
  return err == MPI_SUCCESS ? MPI_SUCCESS : raiseRequestError(comm, err, "MPI_Test");
}
LOOM_WEAK_ALIAS(MPI_Test)

extern "C" int PMPI_Waitall(int count, MPI_Request array_of_requests[],
                            MPI_Status array_of_statuses[]) {
  if (!requireRunning("MPI_Waitall")) return MPI_ERR_OTHER;
  if (int rc = checkArray(count, array_of_requests, "MPI_Waitall")) return rc;
  loom::progress::waitUntil([&] { return allDone(count, array_of_requests); });
  return completeAll(count, array_of_requests, array_of_statuses, "MPI_Waitall");
}
LOOM_WEAK_ALIAS(MPI_Waitall)

extern "C" int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag,
                            MPI_Status array_of_statuses[]) {
  if (!requireRunning("MPI_Testall")) return MPI_ERR_OTHER;
  if (int rc = checkArray(count, array_of_requests, "MPI_Testall")) return rc;
  if (!flag) return raise(nullptr, errorf(MPI_ERR_ARG, "flag is NULL"), "MPI_Testall");
  if (!allDone(count, array_of_requests)) loom::progress::testPoll();
  if (!allDone(count, array_of_requests)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return completeAll(count, array_of_requests, array_of_statuses, "MPI_Testall");
}
LOOM_WEAK_ALIAS(MPI_Testall)

extern "C" int PMPI_Waitany(int count, MPI_Request array_of_requests[], int* index,
                            MPI_Status* status) {
  if (!requireRunning("MPI_Waitany")) return MPI_ERR_OTHER;
  if (int rc = checkArray(count, array_of_requests, "MPI_Waitany")) return rc;
  if (!index) return raise(nullptr, errorf(MPI_ERR_ARG, "index is NULL"), "MPI_Waitany");
  int i = -1;
  loom::progress::waitUntil([&] { return (i = findDone(count, array_of_requests)) >= 0; });
  return completeAny(count, array_of_requests, i, index, status, "MPI_Waitany");
}
LOOM_WEAK_ALIAS(MPI_Waitany)

extern "C" int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag,
                            MPI_Status* status) {
  if (!requireRunning("MPI_Testany")) return MPI_ERR_OTHER;
  if (int rc = checkArray(count, array_of_requests, "MPI_Testany")) return rc;
  if (!index || !flag)
    return raise(nullptr, errorf(MPI_ERR_ARG, "index or flag is NULL"), "MPI_Testany");
  int i = findDone(count, array_of_requests);
  if (i < 0) {
    loom::progress::testPoll();
    i = findDone(count, array_of_requests);
  }
  if (i < 0) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return completeAny(count, array_of_requests, i, index, status, "MPI_Testany");
}
LOOM_WEAK_ALIAS(MPI_Testany)

extern "C" int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount,
                             int array_of_indices[], MPI_Status array_of_statuses[]) {
  if (!requireRunning("MPI_Waitsome")) return MPI_ERR_OTHER;
  if (int rc = checkArray(incount, array_of_requests, "MPI_Waitsome")) return rc;
  if (!outcount || (incount > 0 && !array_of_indices))
    return raise(nullptr, errorf(MPI_ERR_ARG, "outcount or array_of_indices is NULL"),
                 "MPI_Waitsome");
  loom::progress::waitUntil([&] { return findDone(incount, array_of_requests) >= 0; });
  return completeSome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses,
                      "MPI_Waitsome");
}
LOOM_WEAK_ALIAS(MPI_Waitsome)

extern "C" int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount,
                             int array_of_indices[], MPI_Status array_of_statuses[]) {
  if (!requireRunning("MPI_Testsome")) return MPI_ERR_OTHER;
  if (int rc = checkArray(incount, array_of_requests, "MPI_Testsome")) return rc;
  if (!outcount || (incount > 0 && !array_of_indices))
    return raise(nullptr, errorf(MPI_ERR_ARG, "outcount or array_of_indices is NULL"),
                 "MPI_Testsome");
  if (findDone(incount, array_of_requests) < 0) loom::progress::testPoll();
  return completeSome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses,
                      "MPI_Testsome");
}
LOOM_WEAK_ALIAS(MPI_Testsome)

extern "C" int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (!requireRunning("MPI_Request_get_status")) return MPI_ERR_OTHER;
  if (!flag) return raise(nullptr, errorf(MPI_ERR_ARG, "flag is NULL"), "MPI_Request_get_status");
  Request* r;
  switch (classify(request, &r)) {
    case Slot::kInvalid:
      return invalidRequest("MPI_Request_get_status", -1);
    case Slot::kNull:
    case Slot::kInactive:
      *flag = 1;
      setEmptyStatus(status);
      return MPI_SUCCESS;
    case Slot::kActive:
      break;
  }
  if (!r->complete) loom::progress::testPoll();
  *flag = r->complete ? 1 : 0;
  if (r->complete) (void)report(r, status);
  // The request stays allocated: its error is reported when it is waited for.
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Request_get_status)

// MPI 4.1: MPI_Testall/any/some without freeing or deactivating anything.
// The requests' handles are only read (const in the standard's prototypes);
// the shared bodies take them writable because the test forms clear them.
extern "C" int PMPI_Request_get_status_all(int count, const MPI_Request array_of_requests[],
                                           int* flag, MPI_Status array_of_statuses[]) {
  const char* fn = "MPI_Request_get_status_all";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (int rc = checkArray(count, array_of_requests, fn)) return rc;
  if (!flag) return raise(nullptr, errorf(MPI_ERR_ARG, "flag is NULL"), fn);
  if (!allDone(count, array_of_requests)) loom::progress::testPoll();
  if (!allDone(count, array_of_requests)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return completeAll(count, const_cast<MPI_Request*>(array_of_requests), array_of_statuses, fn,
                     true);
}
LOOM_WEAK_ALIAS(MPI_Request_get_status_all)

extern "C" int PMPI_Request_get_status_any(int count, const MPI_Request array_of_requests[],
                                           int* index, int* flag, MPI_Status* status) {
  const char* fn = "MPI_Request_get_status_any";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (int rc = checkArray(count, array_of_requests, fn)) return rc;
  if (!index || !flag) return raise(nullptr, errorf(MPI_ERR_ARG, "index or flag is NULL"), fn);
  int i = findDone(count, array_of_requests);
  if (i < 0) {
    loom::progress::testPoll();
    i = findDone(count, array_of_requests);
  }
  if (i < 0) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return completeAny(count, const_cast<MPI_Request*>(array_of_requests), i, index, status, fn,
                     true);
}
LOOM_WEAK_ALIAS(MPI_Request_get_status_any)

extern "C" int PMPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[],
                                            int* outcount, int array_of_indices[],
                                            MPI_Status array_of_statuses[]) {
  const char* fn = "MPI_Request_get_status_some";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (int rc = checkArray(incount, array_of_requests, fn)) return rc;
  if (!outcount || (incount > 0 && !array_of_indices))
    return raise(nullptr, errorf(MPI_ERR_ARG, "outcount or array_of_indices is NULL"), fn);
  if (findDone(incount, array_of_requests) < 0) loom::progress::testPoll();
  return completeSome(incount, const_cast<MPI_Request*>(array_of_requests), outcount,
                      array_of_indices, array_of_statuses, fn, true);
}
LOOM_WEAK_ALIAS(MPI_Request_get_status_some)

extern "C" int PMPI_Request_free(MPI_Request* request) {
  if (!requireRunning("MPI_Request_free")) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), "MPI_Request_free");
  Request* r;
  switch (classify(*request, &r)) {
    case Slot::kInvalid:
    case Slot::kNull:
      return invalidRequest("MPI_Request_free", -1);
    case Slot::kInactive:
      (void)freeNow(r);
      *request = MPI_REQUEST_NULL;
      return MPI_SUCCESS;
    case Slot::kActive:
      break;
  }
  int err = MPI_SUCCESS;
  if (r->complete) {
    err = freeNow(r);
  } else {
    // A generalized request's free_fn runs now; the request itself lives
    // until MPI_Grequest_complete.
    err = loom::api::generalizedFree(r);
    // Still in flight: the engine recycles it when it finishes. A persistent
    // request freed while active is never started again; its datatype
    // reference goes when the operation finishes.
    if (r->persistent) {
      if (loom::api::isPersistentColl(r))
        r->onComplete = loom::api::freePersistentCollOnComplete;
      else if (r->type)
        r->onComplete = loom::api::releaseTypeOnComplete;
      r->persistent = false;
    }
    r->userFreed = true;
  }
  *request = MPI_REQUEST_NULL;
  if (err != MPI_SUCCESS)
    return raise(nullptr, errorf(err, "the generalized request's free_fn failed"),
                 "MPI_Request_free");
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Request_free)

extern "C" int PMPI_Cancel(MPI_Request* request) {
  if (!requireRunning("MPI_Cancel")) return MPI_ERR_OTHER;
  if (!request) return raise(nullptr, errorf(MPI_ERR_ARG, "request is NULL"), "MPI_Cancel");
  Request* r;
  switch (classify(*request, &r)) {
    case Slot::kInvalid:
    case Slot::kNull:
      return invalidRequest("MPI_Cancel", -1);
    case Slot::kInactive:
      return MPI_SUCCESS;  // nothing in flight to cancel
    case Slot::kActive:
      break;
  }
  if (r->kind == ReqKind::kGeneralized) {
    // The user's cancel_fn decides (and is told whether it completed).
    int err = loom::api::generalizedCancel(r);
    if (err != MPI_SUCCESS)
      return raise(nullptr, errorf(err, "the generalized request's cancel_fn failed"),
                   "MPI_Cancel");
    return MPI_SUCCESS;
  }
  if (r->complete) return MPI_SUCCESS;  // too late: it completes normally
  switch (r->kind) {
    case ReqKind::kRecv:
      // False means it already matched: then it completes normally, and
      // MPI_Test_cancelled says so.
      (void)loom::p2p::cancelRecv(r);
      return MPI_SUCCESS;
    case ReqKind::kSend:
      // The standard lets a cancel fail to take effect: the send completes
      // normally and MPI_Test_cancelled reports false. Loom never cancels
      // sends (the data may already be in the receiver's queue).
      return MPI_SUCCESS;
    case ReqKind::kCompound:
      // MPI_Isendrecv: like a send, the cancel does not take effect.
      return MPI_SUCCESS;
    default:
      return raise(errorComm(r->comm),
                   errorf(MPI_ERR_REQUEST, "only point-to-point receives can be cancelled"),
                   "MPI_Cancel");
  }
}
LOOM_WEAK_ALIAS(MPI_Cancel)

extern "C" int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  if (!requireRunning("MPI_Test_cancelled")) return MPI_ERR_OTHER;
  if (!status || !flag)
    return raise(nullptr, errorf(MPI_ERR_ARG, "status or flag is NULL"), "MPI_Test_cancelled");
  *flag = loom::api::statusCancelled(status) ? 1 : 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Test_cancelled)

// ---- Status queries ----------------------------------------------------------

namespace {

// MPI_Get_elements: the basic elements (leaves of the type map, counted
// through nested and mixed types, a partly received last element included)
// in the received bytes, or MPI_UNDEFINED when they end inside one.
int64_t countElements(int64_t bytes, const loom::Datatype* t) {
  int64_t n = t->basicElementsIn(bytes);
  return n < 0 ? MPI_UNDEFINED : n;
}

int getCount(const MPI_Status* status, MPI_Datatype datatype, int64_t* out, bool elements,
             const char* fn) {
  if (!status) return raise(nullptr, errorf(MPI_ERR_ARG, "status is NULL"), fn);
  loom::Datatype* t = loom::api::toDatatype(datatype);
  if (!t) return raise(nullptr, errorf(MPI_ERR_TYPE, "invalid datatype"), fn);
  int64_t bytes = loom::api::statusBytes(status);
  if (elements) {
    *out = countElements(bytes, t);
  } else if (t->size() == 0) {
    *out = 0;
  } else {
    *out = bytes % t->size() ? MPI_UNDEFINED : bytes / t->size();
  }
  return MPI_SUCCESS;
}

int narrow(int64_t v) {
  return v > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(v);
}

}  // namespace

// MPI_Get_count and MPI_Get_elements, each with its MPI_Count form (api/
// large_count.h); the int forms say MPI_UNDEFINED for a count above INT_MAX,
// as the standard requires.

namespace {

template <class Int>
int countQuery(const MPI_Status* status, MPI_Datatype datatype, Int* count, bool elements,
               const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!count) return raise(nullptr, errorf(MPI_ERR_ARG, "count is NULL"), fn);
  int64_t n = 0;
  if (int rc = getCount(status, datatype, &n, elements, fn)) return rc;
  if constexpr (sizeof(Int) < sizeof(int64_t))
    *count = narrow(n);
  else
    *count = n;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return countQuery(status, datatype, count, false, "MPI_Get_count");
}
LOOM_WEAK_ALIAS(MPI_Get_count)
LOOM_LARGE_COUNT(Get_count, (const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count),
                 countQuery(status, datatype, count, false, "MPI_Get_count_c"))

extern "C" int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return countQuery(status, datatype, count, true, "MPI_Get_elements");
}
LOOM_WEAK_ALIAS(MPI_Get_elements)
LOOM_LARGE_COUNT(Get_elements, (const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count),
                 countQuery(status, datatype, count, true, "MPI_Get_elements_c"))

extern "C" int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype,
                                   MPI_Count* count) {
  return countQuery(status, datatype, count, true, "MPI_Get_elements_x");
}
LOOM_WEAK_ALIAS(MPI_Get_elements_x)
