// Every collective algorithm: one function per file under coll/<collective>/,
// each filling a Schedule. The selector (coll.cc) picks which one runs.
#pragma once

#include "coll/schedule.h"

namespace loom::coll {

Status barrierDissemination(Schedule& s);

}  // namespace loom::coll
