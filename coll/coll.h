// Collective operations, as the API layer calls them: fill CollArgs and call
// coll::run (selector.h), which picks the algorithm, builds its schedule and
// starts it; the request completes when the collective has.
#pragma once

#include "coll/selector.h"
