// loomrun: starts the ranks of an MPI job on this host (see loomrun(1)).
//
// main() does what must happen before any thread exists: make sure fds 0-2
// are open, parse the command line, find the program, block the signals the
// job loop takes through a signalfd (threads inherit the mask, so PMIx's
// thread never receives them). Then the Job runs.
#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/log.h"
#include "iofwd.h"
#include "job.h"
#include "options.h"

#ifndef LOOM_VERSION
#define LOOM_VERSION "unknown"
#endif

namespace {

// A closed 0, 1 or 2 would be reused by the next open() (the signalfd, a
// pipe) and then handed to a rank as its stdio: park /dev/null there first.
void ensureStdFds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    int nfd = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (nfd >= 0 && nfd != fd) {
      ::dup2(nfd, fd);
      ::close(nfd);
    }
  }
}

void printOut(int fd, const std::string& text) {
  loom::launcher::writeAll(fd, text.data(), text.size());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace loom::launcher;
  loom::log::setProgram("loomrun");
  ensureStdFds();

  Options opts;
  std::string error;
  switch (parseOptions(argc, argv, &opts, &error)) {
    case ParseResult::kHelp:
      printOut(STDOUT_FILENO, usageText());
      return 0;
    case ParseResult::kVersion:
      printOut(STDOUT_FILENO, "loomrun (Loom) " LOOM_VERSION "\n");
      return 0;
    case ParseResult::kError:
      loom::log::error("%s", error.c_str());
      printOut(STDERR_FILENO, usageText());
      return 2;
    case ParseResult::kRun:
      break;
  }

  std::string path;
  if (int err = findExecutable(opts.program[0], std::getenv("PATH"), &path)) {
    loom::log::error("cannot execute '%s': %s", opts.program[0].c_str(), std::strerror(err));
    return 127;
  }

  // SIGPIPE: a closed stdout must not kill loomrun (output is then dropped).
  // SIGTTIN/SIGTTOU: in the background, reading the terminal yields EIO
  // instead of stopping the whole job. Both are reset in the ranks.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGTTIN, SIG_IGN);
  ::signal(SIGTTOU, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT})
    sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  int sfd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    loom::log::error("signalfd failed: %s", std::strerror(errno));
    return 1;
  }

  int status;
  bool finalized;
  {
    Job job(opts, path, sfd);
    status = job.run();
    finalized = job.finalized();
  }
  if (!finalized) {
    // PMIx's threads still run (finalize skipped on the failure path):
    // static destructors must not race them.
    ::_exit(status);
  }
  return status;
}
