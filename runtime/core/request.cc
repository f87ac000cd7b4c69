#include "core/request.h"

#include "core/comm.h"
#include "core/datatype.h"

#include <new>
#include <vector>

namespace loom {
namespace {
// Requests are never returned to the system while the process runs: a stale
// user handle then points at recycled memory whose magic tells the truth.
std::vector<Request*>& freeList() {
  static std::vector<Request*> list;
  return list;
}
}  // namespace

Request* Request::alloc(ReqKind kind) {
  auto& fl = freeList();
  Request* r;
  if (!fl.empty()) {
    r = fl.back();
    fl.pop_back();
    new (r) Request();
  } else {
    r = new Request();
  }
  r->kind = kind;
  return r;
}

void Request::release(Request* r) {
  r->magic = 0;
  r->kind = ReqKind::kDone;
  freeList().push_back(r);
}

void Request::finish() {
  complete = true;
  // A communicator or datatype freed by the user while this request was
  // pending lives until here.
  if (holdsRefs) {
    holdsRefs = false;
    if (comm) Comm::release(comm);
    if (type) type->release();
  }
  if (onComplete) onComplete(this);
  if (userFreed && !persistent) release(this);
}

}  // namespace loom
