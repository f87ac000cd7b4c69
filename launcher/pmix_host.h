// PmixServer: the OpenPMIx server embedded in loomrun, for one job on one
// host. (The file is pmix_host.h so it cannot shadow PMIx's <pmix_server.h>.)
//
// PMIx runs its own progress thread and calls the module functions (a rank
// connected, finalized, aborted) on it. Those callbacks only record an event
// in a queue and wake the main loop through an eventfd; all process control
// (kill, waitpid, printing) happens on the main thread. Every wait on a PMIx
// callback is bounded by LOOM_PMIX_TIMEOUT.
// See shared/notes/pmix.md for the 4.2.2 quirks this code works around.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace loom::launcher {

struct PmixEvent {
  enum class Kind { kConnected, kFinalized, kAbort };
  Kind kind;
  int rank;
  int status = 0;       // abort code
  std::string message;  // abort message
};

// Events posted by the PMIx thread, drained by the main loop.
class PmixEventQueue {
 public:
  PmixEventQueue();
  ~PmixEventQueue();
  int fd() const { return fd_; }  // readable when events are pending
  void push(PmixEvent ev);
  std::vector<PmixEvent> drain();

 private:
  int fd_ = -1;
  std::mutex mu_;
  std::deque<PmixEvent> events_;
};

class PmixServer {
 public:
  // `timeoutSec` bounds every wait on a PMIx callback.
  PmixServer(PmixEventQueue* events, double timeoutSec);

  // Starts the server with its rendezvous files in `tmpdir` (~12 ms; starts
  // PMIx's thread). Sets PMIX_MCA_gds=hash in our environment first.
  // `hwlocTopology` (may be null) spares PMIx a topology load of its own; it
  // must outlive the server.
  bool init(const std::string& tmpdir, void* hwlocTopology, std::string* error);

  // Registers namespace `nspace`: node k is named nodeNames[k] and runs the
  // job ranks ranksOfNode[k] (one node on a plain run; several simulated
  // nodes, all served from here, with loomrun --nodes).
  bool registerJob(const std::string& nspace, const std::vector<std::vector<int>>& ranksOfNode,
                   const std::vector<std::string>& nodeNames, std::string* error);

  // Registers every rank as a local client, then returns in *env (one
  // vector per rank) the variables PMIx_server_setup_fork adds ("K=V").
  bool registerClients(std::vector<std::vector<std::string>>* env, std::string* error);

  // A rank is gone: frees its PMIx state (does not wait).
  void deregisterClient(int rank);

  // Clean shutdown, only after every rank exited normally: finalize is known
  // to crash after ranks were killed mid-fence (notes/pmix.md).
  void finalize();

  bool initialized() const { return initialized_; }

 private:
  PmixEventQueue* events_;
  double timeoutSec_;
  bool initialized_ = false;
  std::string nspace_;
  int ranks_ = 0;
};

}  // namespace loom::launcher
