// Bootstrap: who am I, who are my peers, and a key-value exchange to meet them.
//
// Under loomrun, srun --mpi=pmix or any PMIx server the rank is a PMIx
// client; started without a launcher it is a singleton (size 1) and PMIx is
// never touched. Transports publish their address blobs with put() before the
// one fence of MPI_Init and read peers' blobs with get() after it. This is
// the only file pair (with launcher/) that includes PMIx headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom {

struct ProcInfo {
  bool singleton = true;
  std::string nspace;    // PMIx namespace ("loom.1234"), "singleton.<pid>" alone
  int rank = 0;          // in the job (MPI_COMM_WORLD)
  int size = 1;          // job size
  int localRank = 0;     // among the ranks on this node
  int localSize = 1;
  int nodeId = 0;        // this node's id in the job, 0..numNodes-1
  int numNodes = 1;
  int universeSize = 1;
  int appNum = 0;
  std::string hostname;  // node name (LOOM_NODE_NAME, PMIx's, else gethostname)
  std::vector<int> localPeers;  // job ranks on this node, ascending
  std::vector<int> nodeOfRank;  // job rank -> node id (the same on every rank)
  std::vector<std::string> nodeNames;  // node id -> name
};

class Bootstrap {
 public:
  // Connects to the PMIx server if there is one; fills info.
  Status init(ProcInfo* info);

  // Publishes a blob under `key` for every peer; visible after fence().
  Status put(std::string_view key, std::span<const std::byte> blob);
  // Commits what was put and waits for every rank of the job to do the same
  // (collecting everyone's data).
  Status fence();
  // Synchronises all ranks without exchanging data (MPI_Finalize).
  Status barrier();
  // Reads the blob `rank` put under `key`.
  Status get(int rank, std::string_view key, std::vector<std::byte>* blob);

  // Asks the launcher to end the whole job, then exits with `code`. The
  // message goes to stderr first, naming this rank and its node (PMIx_Abort
  // hands it only to the launcher: srun never shows it), unless `printed`
  // says the caller already did, or loomrun, which prints it, started us.
  [[noreturn]] void abort(int code, const std::string& message, bool printed = false);

  Status finalize();

  bool active() const { return active_; }

 private:
  bool active_ = false;  // PMIx_Init succeeded and not yet finalized
  ProcInfo* info_ = nullptr;
  std::vector<std::pair<std::string, std::vector<std::byte>>> local_;  // singleton store
};

}  // namespace loom
