// Job: one run of loomrun, from the PMIx server's start to the last rank's
// exit, and the exit status that sums it up.
//
// The main thread runs a poll() loop over: a signalfd (SIGCHLD, and the
// INT/TERM/HUP/USR1/USR2/TSTP/CONT that loomrun forwards), the eventfd of PMIx
// callbacks, every rank's stdout/stderr pipe, and the terminal stdin copied to
// rank 0. Deadlines (--timeout, the SIGTERM->SIGKILL grace) are poll timeouts;
// nothing sleeps.
//
// The first failure decides the exit status and the one message about it;
// everything after (ranks dying of loomrun's own SIGTERM) is expected and
// silent. Failures, in the order they can happen:
//   a rank exits non-zero            -> its code
//   a rank is killed by a signal     -> 128 + signal
//   a rank exits 0 after PMIx_Init without PMIx_Finalize -> 1
//   a rank exits 0 without PMIx_Init while another rank is connected
//     (waits for it in MPI_Init's fence), in either order -> 1
//   a rank calls PMIx_Abort(code)    -> code & 0xff (as Open MPI's mpirun)
//   --timeout expires                -> 124
//   loomrun gets SIGINT/TERM/HUP     -> 128 + signal
//   loomrun cannot start the job     -> 1
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "binding.h"
#include "iofwd.h"
#include "options.h"
#include "pmix_host.h"

namespace loom::launcher {

class Job {
 public:
  // `signalFd` is a signalfd for the signals main() blocked.
  Job(const Options& opts, std::string programPath, int signalFd);
  ~Job();

  // Runs the job to its end and cleans up (tmp dir, segments, leftovers).
  // Returns loomrun's exit status.
  int run();

  // False when PMIx's threads are still running after run() (failure path:
  // PMIx_server_finalize was skipped), so the caller must leave with _exit.
  bool finalized() const { return !pmix_.initialized(); }

 private:
  using Clock = std::chrono::steady_clock;

  struct Rank {
    pid_t pid = -1;
    bool alive = false;
    bool connected = false;  // PMIx_Init reached the server
    bool finalized = false;  // PMIx_Finalize reached the server
    bool exitedUnconnected = false;  // exited 0 without ever calling PMIx_Init
    std::unique_ptr<LineForwarder> out, err;
  };

  bool start(std::string* error);
  bool spawnAll(const HostCores& host, const std::vector<std::vector<std::string>>& pmixEnv,
                std::string* error);
  void loop();
  void onPmixEvents();
  void onSignals();
  void reap();
  void onRankExit(int rank, int waitStatus);
  void failNeverInitialized(int rank);
  void checkDeadlines();
  void fail(int status, const std::string& message);
  void beginTeardown(int sig);
  void finish();
  int aliveCount() const;
  std::string othersText(int others) const;

  Options opts_;
  std::string programPath_;
  int signalFd_;
  std::string nspace_;
  std::string tmpDir_;
  PmixEventQueue events_;
  PmixServer pmix_;
  HostCores host_;
  std::vector<Rank> ranks_;
  std::unique_ptr<StdinForwarder> stdin_;

  bool failed_ = false;     // the first failure was recorded
  int status_ = 0;
  bool terminating_ = false;
  bool killed_ = false;     // SIGKILL already sent
  Clock::time_point started_;
  Clock::time_point killDeadline_;
  long graceMs_ = 1000;
};

}  // namespace loom::launcher
