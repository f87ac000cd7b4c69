#include "spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace loom::launcher {

EnvList EnvList::fromEnviron() {
  EnvList env;
  for (char** e = environ; e && *e; ++e) env.entries_.emplace_back(*e);
  return env;
}

void EnvList::set(const std::string& entry) {
  size_t eq = entry.find('=');
  std::string_view name(entry.data(), eq == std::string::npos ? entry.size() : eq + 1);
  for (auto& e : entries_) {
    if (std::string_view(e).substr(0, name.size()) == name) {
      e = entry;
      return;
    }
  }
  entries_.push_back(entry);
}

const char* EnvList::get(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.size() > name.size() && e[name.size()] == '=' && e.compare(0, name.size(), name) == 0)
      return e.c_str() + name.size() + 1;
  return nullptr;
}

bool makeOutputPipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return true;
}

namespace {

std::vector<char*> cStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Moves fd to target in the child, even when fd already is target (then only
// the close-on-exec flag must go).
void childMoveFd(int fd, int target) {
  if (fd == target) {
    ::fcntl(fd, F_SETFD, 0);
  } else {
    ::dup2(fd, target);
  }
}

[[noreturn]] void childFail(const std::string& msg) {
  ssize_t rc = ::write(STDERR_FILENO, msg.data(), msg.size());
  (void)rc;
  ::_exit(127);
}

}  // namespace

pid_t spawnRank(const SpawnSpec& spec, std::string* error) {
  std::vector<char*> argv = cStrings(spec.argv);
  std::vector<char*> envp = cStrings(spec.env.entries());
  const std::string execFailed = "loomrun: cannot execute '" + spec.argv[0] + "'\n";
  const bool bind = spec.applyBinding && spec.binding && spec.binding->bound;
  const pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork failed: ") + std::strerror(errno);
    return -1;
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // loomrun died before prctl
    // stdin/stdout/stderr may sit on 0..2 already in any order: lift them
    // above 2 first so one dup2 cannot clobber another.
    int in = ::fcntl(spec.stdinFd, F_DUPFD, 3);
    int out = ::fcntl(spec.stdoutFd, F_DUPFD, 3);
    int err = ::fcntl(spec.stderrFd, F_DUPFD, 3);
    if (in < 0 || out < 0 || err < 0) childFail(execFailed);
    childMoveFd(in, STDIN_FILENO);
    childMoveFd(out, STDOUT_FILENO);
    childMoveFd(err, STDERR_FILENO);
    // Nothing else of loomrun's (other ranks' pipes, PMIx sockets) may leak
    // into the rank: a stray pipe end would hide EOF from loomrun.
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    // Undo loomrun's signal setup: blocked signals and ignored dispositions
    // survive execve.
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGTTIN, SIGTTOU, SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1,
                    SIGUSR2, SIGTSTP, SIGCONT})
      ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (bind) ::sched_setaffinity(0, sizeof spec.binding->mask, &spec.binding->mask);
    ::execve(spec.path.c_str(), argv.data(), envp.data());
    childFail(execFailed);
  }
  // Parent: also set the group, so a signal sent right after fork() returns
  // cannot miss a child that has not run setpgid yet.
  ::setpgid(pid, pid);
  return pid;
}

void signalRank(pid_t pid, int sig) {
  if (pid <= 0) return;
  if (::kill(-pid, sig) != 0 && errno == ESRCH) ::kill(pid, sig);
}

}  // namespace loom::launcher
