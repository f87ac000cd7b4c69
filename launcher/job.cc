#include "job.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cleanup.h"
#include "core/log.h"
#include "core/params.h"
#include "spawn.h"

namespace loom::launcher {
namespace {

std::string hostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  return buf;
}

// Milliseconds since `t0`, for LOOM_DEBUG=launch timings.
double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string formatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

Job::Job(const Options& opts, std::string programPath, int signalFd)
    : opts_(opts),
      programPath_(std::move(programPath)),
      signalFd_(signalFd),
      pmix_(&events_, static_cast<double>(std::max<int64_t>(1, params::getInt("LOOM_PMIX_TIMEOUT")))) {
  nspace_ = "loom." + std::to_string(::getpid());
  graceMs_ = std::max<int64_t>(0, params::getInt("LOOM_KILL_GRACE_MS"));
}

Job::~Job() = default;

int Job::run() {
  started_ = Clock::now();
  std::string error;
  if (!start(&error)) {
    log::error("%s", error.c_str());
    fail(1, "");
    beginTeardown(SIGTERM);
  }
  loop();
  log::debug("launch", "all ranks gone at %.1f ms", msSince(started_));
  finish();
  log::debug("launch", "cleaned up at %.1f ms", msSince(started_));
  return status_;
}

bool Job::start(std::string* error) {
  // The topology goes to the PMIx server too, which otherwise loads a full
  // one (with I/O devices) of its own during PMIx_server_init.
  host_ = discoverCores();
  log::debug("launch", "topology loaded at %.1f ms (%zu usable cores)", msSince(started_),
             host_.cores.size());
  bool ok = makeJobTmpDir(&tmpDir_, error) && pmix_.init(tmpDir_, host_.topology, error);
  log::debug("launch", "PMIx server up at %.1f ms", msSince(started_));
  // Simulated nodes are named after this host: <host>-n0, <host>-n1, ...
  std::vector<std::vector<int>> placement = placeBlockwise(opts_.ranks, opts_.nodes);
  std::vector<std::string> nodeNames;
  for (int k = 0; k < opts_.nodes; ++k)
    nodeNames.push_back(opts_.nodes == 1 ? hostName() : hostName() + "-n" + std::to_string(k));
  ok = ok && pmix_.registerJob(nspace_, placement, nodeNames, error);
  if (!ok) return false;
  std::vector<std::vector<std::string>> pmixEnv;
  if (!pmix_.registerClients(&pmixEnv, error)) return false;
  log::debug("launch", "job registered at %.1f ms", msSince(started_));
  ok = spawnAll(host_, pmixEnv, error);
  log::debug("launch", "%d ranks started at %.1f ms", opts_.ranks, msSince(started_));
  return ok;
}

bool Job::spawnAll(const HostCores& host, const std::vector<std::vector<std::string>>& pmixEnv,
                   std::string* error) {
  const int n = opts_.ranks;
  const bool over = oversubscribed(host, n);
  std::vector<RankBinding> plan = planBindings(host, n, opts_.bindTo);
  if (opts_.reportBindings) {
    for (int r = 0; r < n; ++r) {
      if (plan[r].bound)
        log::error("rank %d bound to core %d (cpus %s)", r, plan[r].core, plan[r].cpuList.c_str());
      else
        log::error("rank %d not bound", r);
    }
  }

  EnvList base = EnvList::fromEnviron();
  std::vector<std::string> missing;
  std::vector<std::string> exports = resolveExports(opts_.exports, ::getenv, &missing);
  for (const auto& name : missing)
    log::warn("-x %s: %s is not set in loomrun's environment; not exported", name.c_str(),
              name.c_str());

  // Rank 0's stdin: a terminal is copied through a pipe (see StdinForwarder);
  // anything else is inherited. Every other rank reads /dev/null.
  int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int rank0In = STDIN_FILENO;
  if (::isatty(STDIN_FILENO)) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
      stdin_ = std::make_unique<StdinForwarder>(STDIN_FILENO, fds[1]);
      rank0In = fds[0];
    } else {
      rank0In = devNull;
    }
  }

  // LOOM_PREFIX for the ranks: this loomrun's installation, unless set.
  std::optional<std::string> prefix;
  if (!base.get("LOOM_PREFIX")) {
    char exe[PATH_MAX + 1] = {};
    ssize_t len = ::readlink("/proc/self/exe", exe, PATH_MAX);
    if (len > 0) prefix = prefixOfExe(std::string(exe, static_cast<size_t>(len)));
  }

  ranks_.resize(n);
  bool ok = true;
  for (int r = 0; r < n && ok; ++r) {
    SpawnSpec spec;
    spec.path = programPath_;
    spec.argv = opts_.program;
    spec.env = base;
    for (const auto& e : pmixEnv[r]) spec.env.set(e);
    spec.env.set("PMIX_MCA_gds", "hash");
    spec.env.set("LOOM_OVERSUBSCRIBE", over ? "1" : "0");
    spec.env.set("LOOM_LAUNCHER", "loomrun");  // loomrun prints an aborting rank's message
    spec.env.set("LOOM_NP", std::to_string(n));  // MPI_INFO_ENV's maxprocs before MPI_Init
    if (prefix) spec.env.set("LOOM_PREFIX", *prefix);
    for (const auto& e : exports) spec.env.set(e);
    if (over) {
      if (auto t = tunablesWithoutRseq(spec.env.get("GLIBC_TUNABLES")))
        spec.env.set("GLIBC_TUNABLES", *t);
    }
    spec.binding = &plan[r];
    spec.applyBinding = host.thisSystem;

    int outPipe[2], errPipe[2];
    if (!makeOutputPipe(outPipe)) {
      *error = std::string("cannot create a pipe: ") + std::strerror(errno);
      ok = false;
      break;
    }
    if (!makeOutputPipe(errPipe)) {
      *error = std::string("cannot create a pipe: ") + std::strerror(errno);
      ::close(outPipe[0]);
      ::close(outPipe[1]);
      ok = false;
      break;
    }
    spec.stdinFd = r == 0 ? rank0In : devNull;
    spec.stdoutFd = outPipe[1];
    spec.stderrFd = errPipe[1];
    std::string prefix = opts_.tagOutput ? "[" + std::to_string(r) + "] " : "";
    Rank& rank = ranks_[r];
    rank.out = std::make_unique<LineForwarder>(outPipe[0], STDOUT_FILENO, prefix);
    rank.err = std::make_unique<LineForwarder>(errPipe[0], STDERR_FILENO, prefix);
    std::string spawnError;
    rank.pid = spawnRank(spec, &spawnError);
    ::close(outPipe[1]);
    ::close(errPipe[1]);
    if (rank.pid < 0) {
      *error = "cannot start rank " + std::to_string(r) + ": " + spawnError;
      ok = false;
      break;
    }
    rank.alive = true;
  }
  if (rank0In != STDIN_FILENO && rank0In != devNull) ::close(rank0In);
  if (devNull >= 0) ::close(devNull);
  return ok;
}

void Job::loop() {
  const bool hasTimeout = opts_.timeoutSec > 0;
  const auto jobDeadline =
      started_ + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(hasTimeout ? opts_.timeoutSec : 0));
  bool groupsKilled = false;
  Clock::time_point drainDeadline;
  std::vector<struct pollfd> fds;
  std::vector<LineForwarder*> owners;  // fds[i] for i >= kFixed
  constexpr size_t kFixed = 3;         // signalfd, eventfd, stdin forwarder

  while (true) {
    if (aliveCount() == 0) {
      if (!groupsKilled) {
        // Whatever the ranks left behind in their process groups goes now,
        // and then their pipes reach EOF.
        for (const auto& r : ranks_) signalRank(r.pid, SIGKILL);
        groupsKilled = true;
        drainDeadline = Clock::now() + std::chrono::seconds(1);
        if (stdin_) stdin_->close();
      }
      bool anyOpen = false;
      for (const auto& r : ranks_)
        anyOpen = anyOpen || (r.out && r.out->open()) || (r.err && r.err->open());
      if (!anyOpen || Clock::now() >= drainDeadline) break;
    }

    fds.clear();
    owners.clear();
    fds.push_back({signalFd_, POLLIN, 0});
    fds.push_back({events_.fd(), POLLIN, 0});
    struct pollfd in = {-1, 0, 0};
    if (stdin_) stdin_->pollSpec(&in.fd, &in.events);
    fds.push_back(in);
    for (auto& r : ranks_) {
      for (LineForwarder* f : {r.out.get(), r.err.get()}) {
        if (!f || !f->open()) continue;
        fds.push_back({f->fd(), POLLIN, 0});
        owners.push_back(f);
      }
    }

    // The nearest deadline becomes the poll timeout.
    Clock::time_point next = Clock::time_point::max();
    if (hasTimeout && !terminating_) next = std::min(next, jobDeadline);
    if (terminating_ && !killed_) next = std::min(next, killDeadline_);
    if (groupsKilled) next = std::min(next, drainDeadline);
    int timeoutMs = -1;
    if (next != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::microseconds>(next - Clock::now());
      timeoutMs = left.count() <= 0 ? 0 : static_cast<int>((left.count() + 999) / 1000);
    }

    int n = ::poll(fds.data(), fds.size(), timeoutMs);
    if (n < 0 && errno != EINTR) {
      log::error("poll failed: %s", std::strerror(errno));
      fail(1, "");
      beginTeardown(SIGKILL);
      killed_ = true;
    }
    // PMIx events first (reap() drains them again after waitpid): an abort
    // or finalize is queued before the rank can exit.
    onPmixEvents();
    if (n > 0 && (fds[0].revents & POLLIN)) onSignals();
    for (size_t i = kFixed; n > 0 && i < fds.size(); ++i)
      if (fds[i].revents) owners[i - kFixed]->onReadable();
    if (n > 0 && fds[2].fd >= 0 && fds[2].revents) stdin_->onReady();
    checkDeadlines();
  }
  // Anything still open (a grandchild holding a pipe): flush and close.
  for (auto& r : ranks_) {
    if (r.out) r.out->close();
    if (r.err) r.err->close();
  }
}

void Job::onPmixEvents() {
  for (PmixEvent& ev : events_.drain()) {
    if (ev.rank < 0 || ev.rank >= static_cast<int>(ranks_.size())) continue;
    Rank& r = ranks_[ev.rank];
    switch (ev.kind) {
      case PmixEvent::Kind::kConnected:
        r.connected = true;
        log::debug("launch", "rank %d connected at %.1f ms", ev.rank, msSince(started_));
        // A rank already left without MPI_Init: this one's MPI_Init fence
        // needs it and would wait LOOM_PMIX_TIMEOUT for nothing.
        for (size_t i = 0; i < ranks_.size() && !failed_; ++i)
          if (ranks_[i].exitedUnconnected) failNeverInitialized(static_cast<int>(i));
        break;
      case PmixEvent::Kind::kFinalized:
        r.finalized = true;
        log::debug("launch", "rank %d finalized at %.1f ms", ev.rank, msSince(started_));
        break;
      case PmixEvent::Kind::kAbort: {
        if (failed_) break;
        // Its output so far comes before the message about it.
        if (r.out) r.out->drain();
        if (r.err) r.err->drain();
        std::string msg = "rank " + std::to_string(ev.rank) + " (pid " + std::to_string(r.pid) +
                          ") called MPI_Abort with code " + std::to_string(ev.status);
        if (!ev.message.empty()) msg += ": " + ev.message;
        fail(ev.status & 0xff, msg);
        beginTeardown(SIGTERM);
        break;
      }
    }
  }
}

void Job::onSignals() {
  struct signalfd_siginfo si[8];
  ssize_t n;
  bool child = false;
  while ((n = ::read(signalFd_, si, sizeof si)) > 0) {
    for (size_t i = 0; i < static_cast<size_t>(n) / sizeof si[0]; ++i) {
      int sig = static_cast<int>(si[i].ssi_signo);
      if (sig == SIGCHLD) {
        child = true;
      } else if (sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGCONT) {
        for (const auto& r : ranks_)
          if (r.alive) signalRank(r.pid, sig);
      } else if (sig == SIGTSTP) {
        // Ctrl-Z reaches only loomrun's process group: stop the ranks too,
        // then loomrun itself; SIGCONT (fg, bg) resumes them above.
        for (const auto& r : ranks_)
          if (r.alive) signalRank(r.pid, SIGTSTP);
        ::raise(SIGSTOP);
      } else if (!terminating_) {
        int alive = aliveCount();
        fail(128 + sig, "received signal " + std::to_string(sig) + " (" + strsignal(sig) +
                            "); terminating " + std::to_string(alive) +
                            (alive == 1 ? " rank" : " ranks"));
        beginTeardown(sig);  // the same signal goes to every rank
      } else if (!killed_) {
        // A second interrupt while tearing down: no more grace.
        for (const auto& r : ranks_)
          if (r.alive) signalRank(r.pid, SIGKILL);
        killed_ = true;
      }
    }
  }
  if (child) reap();
}

void Job::reap() {
  // Collect every exit that is ready before judging any: "terminating the
  // other K ranks" must not count ranks that are already gone.
  std::vector<std::pair<int, int>> exited;  // (rank, wait status)
  while (true) {
    int ws;
    pid_t pid = ::waitpid(-1, &ws, WNOHANG);
    if (pid <= 0) break;  // 0: none ready; -1: ECHILD
    for (size_t i = 0; i < ranks_.size(); ++i) {
      if (ranks_[i].pid == pid && ranks_[i].alive) {
        ranks_[i].alive = false;
        exited.emplace_back(static_cast<int>(i), ws);
        break;
      }
    }
  }
  // A rank's finalize/abort event is queued before it can exit, but it may
  // have been queued after the last drain: drain again now that the exits
  // are known, so "exited without MPI_Finalize" is never a false alarm.
  onPmixEvents();
  for (const auto& [rank, ws] : exited) onRankExit(rank, ws);
}

void Job::onRankExit(int rank, int ws) {
  Rank& r = ranks_[rank];
  log::debug("launch", "rank %d (pid %d) exited (wait status 0x%x) at %.1f ms", rank, (int)r.pid,
             ws, msSince(started_));
  // Its last output comes out before loomrun's message about it.
  r.out->drain();
  r.err->drain();
  if (!terminating_) pmix_.deregisterClient(rank);
  if (failed_) return;  // dying of the teardown, or after the first failure

  std::string who = "rank " + std::to_string(rank) + " (pid " + std::to_string(r.pid) + ")";
  int status = 0;
  std::string what;
  if (WIFSIGNALED(ws)) {
    int sig = WTERMSIG(ws);
    status = 128 + sig;
    what = who + " was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  } else if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
    status = WEXITSTATUS(ws);
    what = who + " exited with code " + std::to_string(status);
  } else if (r.connected && !r.finalized) {
    status = 1;
    what = who + " exited without calling MPI_Finalize";
  } else if (!r.connected) {
    // Clean, but it never called MPI_Init. Fine for a job that does not use
    // MPI at all (hostname); a failure as soon as any rank is known to use
    // it: MPI_Init's fence needs every rank, so the others would wait for
    // this one until LOOM_PMIX_TIMEOUT. Ranks that connect later are caught
    // when they do (onPmixEvents).
    r.exitedUnconnected = true;
    for (const auto& other : ranks_) {
      if (other.alive && other.connected) {
        failNeverInitialized(rank);
        break;
      }
    }
    return;
  } else {
    return;  // a clean exit
  }
  fail(status, what + othersText(aliveCount()));
  beginTeardown(SIGTERM);
}

void Job::failNeverInitialized(int rank) {
  const Rank& r = ranks_[rank];
  fail(1, "rank " + std::to_string(rank) + " (pid " + std::to_string(r.pid) +
              ") exited without calling MPI_Init while other ranks wait for it in MPI_Init" +
              othersText(aliveCount()));
  beginTeardown(SIGTERM);
}

std::string Job::othersText(int others) const {
  if (others == 0) return "";
  return "; terminating the other " + std::to_string(others) + (others == 1 ? " rank" : " ranks");
}

void Job::checkDeadlines() {
  auto now = Clock::now();
  if (!terminating_ && opts_.timeoutSec > 0 &&
      now - started_ >= std::chrono::duration<double>(opts_.timeoutSec)) {
    std::string running;
    for (size_t i = 0; i < ranks_.size(); ++i)
      if (ranks_[i].alive) running += " " + std::to_string(i);
    fail(124, "timeout after " + formatSeconds(opts_.timeoutSec) + " s; ranks still running:" +
                  running);
    beginTeardown(SIGTERM);
  }
  if (terminating_ && !killed_ && now >= killDeadline_) {
    for (const auto& r : ranks_)
      if (r.alive) signalRank(r.pid, SIGKILL);
    killed_ = true;
  }
}

void Job::fail(int status, const std::string& message) {
  if (failed_) return;
  failed_ = true;
  status_ = status;
  if (!message.empty()) log::error("%s", message.c_str());
}

void Job::beginTeardown(int sig) {
  if (terminating_) return;
  terminating_ = true;
  killDeadline_ = Clock::now() + std::chrono::milliseconds(graceMs_);
  for (const auto& r : ranks_)
    if (r.alive) signalRank(r.pid, sig);
  if (stdin_) stdin_->close();
}

int Job::aliveCount() const {
  int n = 0;
  for (const auto& r : ranks_) n += r.alive ? 1 : 0;
  return n;
}

void Job::finish() {
  // Only a job that ended cleanly shuts PMIx down: after ranks were killed
  // mid-fence PMIx_server_finalize may crash (notes/pmix.md); the caller then
  // leaves with _exit and the kernel reclaims the rest.
  if (!failed_ && pmix_.initialized()) pmix_.finalize();
  if (!pmix_.initialized()) freeTopology(&host_);  // else PMIx may still use it
  removeTree(tmpDir_);
  unlinkJobSegments(nspace_);
}

}  // namespace loom::launcher
