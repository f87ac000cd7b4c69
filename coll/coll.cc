#include "coll/coll.h"

#include "coll/algorithms.h"
#include "core/log.h"

namespace loom::coll {

Status ibarrier(Comm* comm, Request** out) {
  auto s = std::make_unique<Schedule>(comm, comm->nextCollectiveTag());
  LOOM_TRY(barrierDissemination(*s));
  log::debug("coll", "%s: barrier, %d ranks: dissemination, %zu rounds", comm->name().c_str(),
             comm->size(), s->roundCount());
  return Schedule::start(std::move(s), out);
}

}  // namespace loom::coll
