// Where each job rank sits (node, package, NUMA node, core), as every rank
// published it at MPI_Init, and the job's name. Filled once by the API layer after the fence of
// MPI_Init; read by the collectives to pick node-aware algorithms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

struct Locality {
  int32_t nodeId = 0;
  int32_t package = -1;
  int32_t numaNode = -1;
  int32_t core = -1;
};

// Indexed by job rank; empty before MPI_Init (a singleton has one entry).
std::vector<Locality>& jobLocality();

// The job's PMIx namespace ("loom.1234", "singleton.<pid>"): names this
// job's shared-memory segments (/dev/shm/loom-<nspace>-*, which the launcher
// removes at teardown whatever happened).
std::string& jobNamespace();

}  // namespace loom
