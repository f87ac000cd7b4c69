// The engine's routing, for the parts of p2p beside it (onesided.cc): which
// transport reaches a job rank. Not for other layers, which never name a
// transport.
#pragma once

#include "p2p/transport.h"

namespace loom::p2p::detail {

// The transport that reaches job rank `job`; nullptr for this rank itself,
// an invalid rank, or outside setup..finalize.
const Transport* routeTo(int job);
// The transport between nodes; nullptr when the job is on one node (or
// outside setup..finalize).
const Transport* network();

}  // namespace loom::p2p::detail
