// Options: loomrun's command line, parsed without side effects.
//
// `loomrun [options] program [args...]`. Parsing stops at the first word that
// is not an option (or after `--`): everything from there on is the program
// and its arguments, passed through untouched. Long options take one or two
// dashes (`-tag-output` as Open MPI's mpirun accepts) and `--opt=value` or
// `--opt value`. This file knows nothing of PMIx or processes, so the unit
// test can drive it with plain argument vectors.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loom::launcher {

enum class BindTo {
  kAuto,  // core while ranks <= usable cores, none when oversubscribed
  kCore,  // rank i on usable core (i mod cores), even when oversubscribed
  kNone,
};

struct ExportVar {
  std::string name;
  std::optional<std::string> value;  // nullopt: take loomrun's own value
};

struct Options {
  int ranks = 1;
  bool ranksGiven = false;
  int nodes = 1;  // --nodes: simulated nodes the ranks are placed on, blockwise
  std::vector<ExportVar> exports;  // -x, in command-line order
  bool tagOutput = false;
  double timeoutSec = 0;  // 0: no timeout
  BindTo bindTo = BindTo::kAuto;
  bool reportBindings = false;
  bool oversubscribe = false;  // accepted for mpirun compatibility; no effect
  std::vector<std::string> program;  // program and its arguments
};

enum class ParseResult {
  kRun,      // options valid, program given
  kHelp,     // --help: print usage to stdout, exit 0
  kVersion,  // --version: print the version, exit 0
  kError,    // bad input: print *error and the usage to stderr, exit 2
};

// Parses argv[1..argc-1]. On kError, *error says what was wrong (one line,
// without the program-name prefix).
// Job ranks on each of `nodes` simulated nodes, blockwise: the first
// (ranks % nodes) nodes get one rank more than the others.
std::vector<std::vector<int>> placeBlockwise(int ranks, int nodes);

ParseResult parseOptions(int argc, const char* const* argv, Options* out, std::string* error);

// The usage text (several lines, ends with a newline).
std::string usageText();

// "VAR=value" for each -x, in order. A bare -x VAR takes getenv(VAR); when
// that is unset, the variable is skipped and its name appended to *missing.
std::vector<std::string> resolveExports(
    const std::vector<ExportVar>& exports,
    const std::function<const char*(const char*)>& getenvFn, std::vector<std::string>* missing);

// GLIBC_TUNABLES for the ranks of an oversubscribed job: `current` (the
// value they would get, nullptr when unset) with glibc.pthread.rseq=0 added,
// so glibc does not register restartable sequences in them. The kernel
// updates a registered area each time a rank gets its core back, and there
// ranks hand the core over once per collective call or more (4 ranks on 2
// cores, 8 B allreduce: 2.53 us against 2.69, eight interleaved runs). A
// value that already names glibc.pthread.rseq is the user's choice: nullopt,
// left as it is.
std::optional<std::string> tunablesWithoutRseq(const char* current);

// The Loom installation (or build tree) this loomrun belongs to: the parent
// of the directory of `exe` (loomrun's own path, symlinks resolved), when
// that directory is named bin; nullopt otherwise. loomrun gives it to the
// ranks as LOOM_PREFIX when their environment has none, so tools the ranks
// load (the torch backend) find Loom without it being on PATH.
std::optional<std::string> prefixOfExe(const std::string& exe);

// Finds `program` the way execvp would: a name containing '/' is used as is,
// otherwise each directory of `pathEnv` (":"-separated; empty entries mean
// ".") is tried in order. Returns 0 and sets *resolved to a path that exists
// and is executable, else returns the errno to report (ENOENT when found
// nowhere, EACCES when found but not executable, ...).
int findExecutable(const std::string& program, const char* pathEnv, std::string* resolved);

}  // namespace loom::launcher
