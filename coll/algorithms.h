// Every collective algorithm: one function per file under coll/<collective>/,
// each filling a Schedule. The selector (coll.cc) picks which one runs.
#pragma once

#include "coll/schedule.h"
#include "coll/selector.h"

namespace loom::coll {

// ---- begin barrier ----
Status barrierDissemination(Schedule& s, const CollArgs& a);
// ---- end barrier ----
// ---- begin data movement ----
// ---- end data movement ----
// ---- begin reductions ----
// ---- end reductions ----

}  // namespace loom::coll
