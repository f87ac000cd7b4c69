// Context-id agreement as a nonblocking operation (ctx_agree.cc).
//
// A new communicator needs an id free on every one of its processes. The
// processes AND their masks of free ids (a binomial reduce to member 0,
// then a broadcast: messages on the collective channel) and take the lowest
// id set in the result. Agreements may now be in flight side by side
// (MPI_Comm_idup returns before its agreement ends, and the program may
// create other communicators, blocking or not, meanwhile), so between a
// process's snapshot of its mask and the end of the agreement another
// agreement may have taken the chosen id there. Hence a second round when
// that can happen: every process takes the chosen id if it is still free
// and says whether it could; when one could not, those that took it give
// it back and the agreement starts again from fresh snapshots, choosing,
// from then on, among the first free ids by a hash of the communicator, tag
// and attempt (so that two agreements that collided part ways).
//
// The second round is skipped by a blocking agreement when no process had
// another agreement in flight at its snapshot: then nothing can take an id
// on any of them before the agreement ends (the caller is blocked, and only
// an agreement in flight takes ids during progress).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/comm.h"
#include "core/status.h"

namespace loom::api {

// Tags of agreements on Channel::kColl: kTagAgreeBase + a collective tag the
// members drew in the same call (below kCollTagSpan), so agreements on one
// communicator in flight together never share messages.
inline constexpr int kTagAgreeBase = 0x800000;
// An intercommunicator's idup: kTagAgreeInterBase + a tag of the
// intercommunicator's collective sequence. Its messages to the own side
// travel on the hidden local communicator, whose own agreements (blocking
// dup, split of the intercommunicator) draw tags from the local
// communicator's sequence: a separate range keeps the two apart.
inline constexpr int kTagAgreeInterBase = 0xC00000;

// Where member i is reached: a rank of a communicator (an intercommunicator
// reaches the other side's processes).
struct AgreePeer {
  Comm* comm;
  int rank;
};

struct AgreeSpec {
  Comm* comm = nullptr;     // where the messages travel (retained while running)
  std::vector<int> ranks;   // member i's rank in `comm`; empty: member i is rank i
  std::vector<AgreePeer> peers;  // when set: member i is peers[i] (`comm` still retained)
  int me = 0;               // the calling process's member index
  int size = 0;             // members
  int tag = 0;              // kTagAgreeBase + a collective tag
  int ids = 1;              // how many ids (1 or 2: the lowest two free everywhere)
  bool blocking = false;
};

// Called once when the agreement ends: the id(s), taken on this process
// (`second` only when spec.ids is 2), or the error every member got (no id
// free on all of them, or a failed message). Runs inside progress for a
// nonblocking agreement.
using AgreeDone = std::function<void(Status, uint32_t first, uint32_t second)>;

// Starts an agreement; `done` runs when it ends (perhaps before this
// returns).
void startAgreement(AgreeSpec spec, AgreeDone done);

// Runs an agreement to its end; the id is taken on this process.
Status agreeBlocking(AgreeSpec spec, uint32_t* id);

// Agreements of this process in flight.
int agreementsInFlight();

// While one lives, no agreement in flight takes an id on this process (its
// check round fails here and it starts again): for an agreement of the old
// kind, a snapshot, an AND and a take after it returns (the intercommunicator
// constructors' joinSides), which must not see an id taken under it.
class HoldAgreements {
 public:
  HoldAgreements();
  ~HoldAgreements();
  HoldAgreements(const HoldAgreements&) = delete;
  HoldAgreements& operator=(const HoldAgreements&) = delete;
};

}  // namespace loom::api
