// What the collectives know about a communicator beyond its group: which of
// its ranks share a node (for node-aware and shared-memory algorithms), and
// the communicator's shared-memory collective context once it has one.
//
// Built on first use from the locality every rank published at MPI_Init
// (core/locality.h), cached on the Comm and freed with it. With
// LOOM_COLL_VIRTUAL_NODE_SIZE=k the collectives see each block of k
// consecutive job ranks as one node instead (point-to-point is unaffected),
// so the hierarchical algorithms can be tested on one machine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/comm.h"

namespace loom::coll {

class ShmColl;  // coll/shm/shm_coll.h
struct Algorithm;  // coll/selector.h
struct CallLog;  // coll/call_probe.h

struct CommInfo {
  int nodes = 1;           // distinct nodes among the communicator's ranks
  bool oneRealNode = true; // all on one machine (LOOM_COLL_VIRTUAL_NODE_SIZE ignored)
  int minPerNode = 1;      // fewest and most ranks on one node
  int maxPerNode = 1;
  std::vector<int> nodeOf;   // comm rank -> node index (numbered by first appearance)
  std::vector<int> leaders;  // node index -> lowest comm rank on that node
  std::vector<int> local;    // comm ranks on the caller's node, ascending
  int myNode = 0;            // the caller's node index
  int localRank = 0;         // the caller's index in `local`

  // The shared-memory context (coll/shm/): created on first use when every
  // rank is on one node (for the shared-memory algorithms, or, on one real
  // node split into virtual ones, only for the message-based calls'
  // signatures). shmAlgorithms: -1 not known yet, else whether the
  // shared-memory algorithms may run (ShmColl::eligible).
  std::unique_ptr<ShmColl> shm;
  int8_t shmAlgorithms = -1;

  // Where the ranks' call descriptions cannot be compared in shared memory
  // (several nodes): the signatures of this rank's calls and the control
  // channel's standing receive (coll/call_probe.h). Null until needed.
  CallLog* calls = nullptr;

  // The host rules' latest answer per collective (coll/selector.cc,
  // select()): on this communicator, with the node's CMA window as it was
  // then, the first rule that matches a call of `bytes` names `alg`, and alg
  // accepted that call. A call of the same bytes that alg accepts is alg's
  // without the rules being walked again (what else the rules key on is the
  // communicator's and the process's, fixed).
  struct Pick {
    size_t bytes = SIZE_MAX;
    size_t cmaLo = 0, cmaHi = 0;
    const Algorithm* alg = nullptr;
  };
  static constexpr size_t kCollectives = 17;  // Collective::kCount (checked in selector.cc)
  std::array<Pick, kCollectives> picks{};

  ~CommInfo();
};

CommInfo& commInfo(Comm* c);

}  // namespace loom::coll
