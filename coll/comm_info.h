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

#include <memory>
#include <vector>

#include "core/comm.h"

namespace loom::coll {

class ShmColl;  // coll/shm/shm_coll.h

struct CommInfo {
  int nodes = 1;           // distinct nodes among the communicator's ranks
  int minPerNode = 1;      // fewest and most ranks on one node
  int maxPerNode = 1;
  std::vector<int> nodeOf;   // comm rank -> node index (numbered by first appearance)
  std::vector<int> leaders;  // node index -> lowest comm rank on that node
  std::vector<int> local;    // comm ranks on the caller's node, ascending
  int myNode = 0;            // the caller's node index
  int localRank = 0;         // the caller's index in `local`

  // Shared-memory collectives (coll/shm/): created on first use when every
  // rank is on one node; `shmDeclined` once that is found impossible.
  std::unique_ptr<ShmColl> shm;
  bool shmDeclined = false;

  ~CommInfo();
};

CommInfo& commInfo(Comm* c);

}  // namespace loom::coll
