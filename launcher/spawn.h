// Spawn: starting one rank (fork + execve) and signalling it.
//
// loomrun already runs PMIx's threads when it forks, so the child does only
// async-signal-safe work: everything (argv, envp, cpu mask, error text) is
// prepared before fork(). Each rank leads its own process group, so
//  - a terminal's Ctrl-C reaches only loomrun, which forwards it once to every
//    rank (no rank is signalled twice or before loomrun knows);
//  - a signal to the group also reaches what the rank started itself
//    (`loomrun -n 2 sh -c './app'`), so teardown leaves nothing behind.
// PR_SET_PDEATHSIG makes the kernel kill the ranks if loomrun itself dies.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "binding.h"

namespace loom::launcher {

// Environment as an ordered list of "NAME=value", later set() calls
// replacing earlier values in place.
class EnvList {
 public:
  static EnvList fromEnviron();
  void set(const std::string& entry);  // "NAME=value"
  void set(const std::string& name, const std::string& value) { set(name + "=" + value); }
  const char* get(const std::string& name) const;  // the value, nullptr when unset
  const std::vector<std::string>& entries() const { return entries_; }

 private:
  std::vector<std::string> entries_;
};

struct SpawnSpec {
  std::string path;               // resolved program path
  std::vector<std::string> argv;  // argv[0] is the program as the user typed it
  EnvList env;
  const RankBinding* binding = nullptr;  // nullptr or !bound: inherit affinity
  bool applyBinding = false;  // false under a fake (hwloc synthetic) topology
  int stdinFd = -1;  // become the child's 0, 1, 2
  int stdoutFd = -1;
  int stderrFd = -1;
};

// Forks and execs; returns the child's pid, or -1 with *error set.
pid_t spawnRank(const SpawnSpec& spec, std::string* error);

// Sends sig to the rank's process group (falls back to the pid alone).
void signalRank(pid_t pid, int sig);

// Pipe with both ends close-on-exec; the read end non-blocking.
bool makeOutputPipe(int fds[2]);

}  // namespace loom::launcher
