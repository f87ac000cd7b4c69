// Call probes: how ranks of a communicator that spans nodes find out that
// they made different collective calls when no message of the call ever
// reaches the rank that waits.
//
// Every collective message carries its call's signature (Schedule::
// setSignature), so a rank that receives a message of another call fails.
// But two ranks can each wait for a message the other will never send
// (roots 0 and 1 of a two-rank reduce: both wait to receive) and nothing
// arrives at all. On one node the ranks' descriptions of their calls sit in
// shared memory (ShmColl::checkCall); across nodes a rank that has waited a
// second in a call asks instead: it sends every other rank of the
// communicator a probe {call tag, its signature} on the communicator's
// control channel. Each rank keeps a standing receive there, and keeps the
// signatures of its calls in flight and of its last 64. A rank whose own
// call of that tag has another signature answers with an empty collective
// message of the call's tag and its own signature: the asking rank's
// receive (or its look at unexpected messages) meets it and fails, and its
// failure reaches every other rank (Schedule::poisonPeers). A probe for a
// call not yet made waits for it (up to 64 are kept).
//
// Costs: nothing on a call that completes within a second; a rank that
// waits longer sends one probe per peer per call.
#pragma once

#include <cstdint>

#include "core/comm.h"

namespace loom::coll {

// A schedule-based call of signature `sig` (collective tag `tag`) starts or
// ends on `comm`. Only for communicators without a shared-memory check.
void callStarted(Comm* comm, int tag, uint16_t sig);
void callEnded(Comm* comm, int tag, uint16_t sig);

// Sends the probes of a call that has waited long enough.
void probeCall(Comm* comm, int tag, uint16_t sig);

// The per-communicator state (kept in CommInfo); frees the standing receive.
struct CallLog;
void freeCallLog(CallLog* log);

}  // namespace loom::coll
