#include "api/persistent_coll.h"

#include "api/runtime.h"

namespace loom::api {

namespace {

// The user's request takes the activation's result and completes.
void finishUser(Request* inner, Request* user) {
  user->statusError = inner->statusError;
  user->error = inner->error;
  user->statusSource = MPI_ANY_SOURCE;
  user->statusTag = MPI_ANY_TAG;
  user->bytes = 0;
  auto* plan = static_cast<PersistentColl*>(user->owner);
  if (plan && plan->envelope(&user->statusSource, &user->statusTag)) user->bytes = inner->bytes;
  user->finish();
}

void forward(Request* inner) {
  auto* user = static_cast<Request*>(inner->owner);
  inner->owner = nullptr;
  finishUser(inner, user);
  // `inner` is recycled by its own finish() (userFreed), right after this.
}

}  // namespace

Request* newPersistentColl(Comm* comm, PersistentColl* plan) {
  Request* r = Request::alloc(ReqKind::kColl);
  r->persistent = true;
  r->active = false;
  r->comm = comm;
  r->owner = plan;
  return r;
}

void completeFrom(Request* inner, Request* user) {
  if (inner->complete) {
    finishUser(inner, user);
    Request::release(inner);
    return;
  }
  // No progress thread: it cannot complete between the test above and here.
  inner->owner = user;
  inner->onComplete = forward;
  inner->userFreed = true;
}

int startPersistentColl(Request* r, const char* fn) {
  auto* plan = static_cast<PersistentColl*>(r->owner);
  r->active = true;
  r->complete = false;
  r->cancelled = false;
  r->statusError = MPI_SUCCESS;
  r->error = Status::ok();
  Status st = plan->start(r);
  if (!st.isOk()) {
    r->active = false;
    return raise(r->comm, st, fn);
  }
  return MPI_SUCCESS;
}

void freePersistentColl(Request* r) {
  delete static_cast<PersistentColl*>(r->owner);
  r->owner = nullptr;
  Request::release(r);
}

void freePersistentCollOnComplete(Request* r) {
  delete static_cast<PersistentColl*>(r->owner);
  r->owner = nullptr;
  r->onComplete = nullptr;
}

}  // namespace loom::api
