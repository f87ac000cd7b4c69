#include "options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace loom::launcher {
namespace {

// Upper bound on -n: far beyond what one host can run, low enough that the
// per-rank tables stay small and an accidental `-n 1e9`-style typo fails.
constexpr long kMaxRanks = 100000;

enum class Opt { kRanks, kNodes, kExport, kTagOutput, kTimeout, kBindTo, kReportBindings,
                 kOversubscribe, kHelp, kVersion };

struct OptSpec {
  const char* name;  // without dashes
  Opt opt;
  bool takesValue;
};

constexpr OptSpec kOpts[] = {
    {"n", Opt::kRanks, true},
    {"np", Opt::kRanks, true},
    {"nodes", Opt::kNodes, true},
    {"x", Opt::kExport, true},
    {"tag-output", Opt::kTagOutput, false},
    {"timeout", Opt::kTimeout, true},
    {"bind-to", Opt::kBindTo, true},
    {"report-bindings", Opt::kReportBindings, false},
    {"oversubscribe", Opt::kOversubscribe, false},
    {"h", Opt::kHelp, false},
    {"help", Opt::kHelp, false},
    {"V", Opt::kVersion, false},
    {"version", Opt::kVersion, false},
};

const OptSpec* findOpt(std::string_view name) {
  for (const auto& s : kOpts)
    if (name == s.name) return &s;
  return nullptr;
}

bool validEnvName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool parseRanks(const std::string& text, int* out) {
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;  // rejects "-1", "+2", "3x", " 4"
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > kMaxRanks) return false;
  *out = static_cast<int>(v);
  return true;
}

bool parseSeconds(const std::string& text, double* out) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

bool applyOption(const OptSpec& spec, const std::string& shown, const std::string& value,
                 Options* o, std::string* error) {
  switch (spec.opt) {
    case Opt::kRanks:
      if (!parseRanks(value, &o->ranks)) {
        *error = "option '" + shown + "' needs a rank count between 1 and " +
                 std::to_string(kMaxRanks) + ", got '" + value + "'";
        return false;
      }
      o->ranksGiven = true;
      return true;
    case Opt::kNodes:
      if (!parseRanks(value, &o->nodes)) {
        *error = "option '" + shown + "' needs a node count between 1 and " +
                 std::to_string(kMaxRanks) + ", got '" + value + "'";
        return false;
      }
      return true;
    case Opt::kExport: {
      size_t eq = value.find('=');
      std::string name = value.substr(0, eq);
      if (!validEnvName(name)) {
        *error = "option '" + shown + "' needs VAR or VAR=value, got '" + value + "'";
        return false;
      }
      ExportVar e{name, std::nullopt};
      if (eq != std::string::npos) e.value = value.substr(eq + 1);
      o->exports.push_back(std::move(e));
      return true;
    }
    case Opt::kTimeout:
      if (!parseSeconds(value, &o->timeoutSec)) {
        *error = "option '" + shown + "' needs a number of seconds, got '" + value + "'";
        return false;
      }
      return true;
    case Opt::kBindTo:
      if (value == "core") {
        o->bindTo = BindTo::kCore;
      } else if (value == "none") {
        o->bindTo = BindTo::kNone;
      } else {
        *error = "option '" + shown + "' takes 'core' or 'none', got '" + value + "'";
        return false;
      }
      return true;
    case Opt::kTagOutput: o->tagOutput = true; return true;
    case Opt::kReportBindings: o->reportBindings = true; return true;
    case Opt::kOversubscribe: o->oversubscribe = true; return true;
    case Opt::kHelp:
    case Opt::kVersion: return true;  // handled by the caller
  }
  return true;
}

}  // namespace

ParseResult parseOptions(int argc, const char* const* argv, Options* out, std::string* error) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the program ("-" alone too)
    size_t dashes = arg[1] == '-' ? 2 : 1;
    std::string body = arg.substr(dashes);
    size_t eq = body.find('=');
    std::string name = body.substr(0, eq);
    const OptSpec* spec = findOpt(name);
    if (!spec || name.empty()) {
      *error = "unknown option '" + arg + "'";
      return ParseResult::kError;
    }
    std::string shown = arg.substr(0, dashes + name.size());
    std::string value;
    if (spec->takesValue) {
      if (eq != std::string::npos) {
        value = body.substr(eq + 1);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        *error = "option '" + shown + "' needs a value";
        return ParseResult::kError;
      }
    } else if (eq != std::string::npos) {
      *error = "option '" + shown + "' takes no value";
      return ParseResult::kError;
    }
    if (spec->opt == Opt::kHelp) return ParseResult::kHelp;
    if (spec->opt == Opt::kVersion) return ParseResult::kVersion;
    if (!applyOption(*spec, shown, value, &o, error)) return ParseResult::kError;
  }
  for (; i < argc; ++i) o.program.emplace_back(argv[i]);
  if (o.program.empty()) {
    *error = "no program given";
    return ParseResult::kError;
  }
  if (o.nodes > o.ranks) {
    *error = "--nodes " + std::to_string(o.nodes) + " is more than the " +
             std::to_string(o.ranks) + (o.ranks == 1 ? " rank" : " ranks") +
             " to place on them";
    return ParseResult::kError;
  }
  *out = std::move(o);
  return ParseResult::kRun;
}

std::vector<std::vector<int>> placeBlockwise(int ranks, int nodes) {
  std::vector<std::vector<int>> out(nodes);
  int rank = 0;
  for (int k = 0; k < nodes; ++k) {
    int count = ranks / nodes + (k < ranks % nodes ? 1 : 0);
    for (int i = 0; i < count; ++i) out[k].push_back(rank++);
  }
  return out;
}

std::string usageText() {
  return "usage: loomrun [options] program [args...]\n"
         "Starts N ranks of an MPI program on this host and waits for them.\n"
         "\n"
         "options:\n"
         "  -n, -np N            number of ranks (default 1)\n"
         "  --nodes N            place the ranks blockwise on N simulated nodes of\n"
         "                       this host, which talk only over the network\n"
         "                       transport (for testing multi-node jobs)\n"
         "  -x VAR[=value]       export VAR to the ranks (its value here, or the\n"
         "                       value given); may be repeated\n"
         "  --tag-output         prefix every output line with [rank]\n"
         "  --timeout SEC        kill the job after SEC seconds (exit status 124)\n"
         "  --bind-to core|none  bind each rank to one core (default: core unless\n"
         "                       ranks outnumber the usable cores)\n"
         "  --report-bindings    print each rank's binding on stderr\n"
         "  --oversubscribe      accepted for mpirun compatibility (no effect)\n"
         "  -h, --help           print this help\n"
         "  -V, --version        print the version\n"
         "\n"
         "Options end at the first word that is not an option, or at '--'.\n"
         "See loomrun(1).\n";
}

std::optional<std::string> tunablesWithoutRseq(const char* current) {
  const std::string cur = current ? current : "";
  if (cur.find("glibc.pthread.rseq") != std::string::npos) return std::nullopt;
  return cur.empty() ? std::string("glibc.pthread.rseq=0") : cur + ":glibc.pthread.rseq=0";
}

std::optional<std::string> prefixOfExe(const std::string& exe) {
  const size_t slash = exe.rfind('/');
  if (slash == std::string::npos || slash == 0) return std::nullopt;
  const std::string dir = exe.substr(0, slash);
  const size_t up = dir.rfind('/');
  if (up == std::string::npos || dir.substr(up + 1) != "bin") return std::nullopt;
  return up == 0 ? std::string("/") : dir.substr(0, up);
}

std::vector<std::string> resolveExports(
    const std::vector<ExportVar>& exports,
    const std::function<const char*(const char*)>& getenvFn, std::vector<std::string>* missing) {
  std::vector<std::string> out;
  for (const auto& e : exports) {
    if (e.value) {
      out.push_back(e.name + "=" + *e.value);
      continue;
    }
    const char* v = getenvFn(e.name.c_str());
    if (v) {
      out.push_back(e.name + "=" + v);
    } else if (missing) {
      missing->push_back(e.name);
    }
  }
  return out;
}

namespace {

// 0 if `path` is a regular file we may execute, else the errno to report.
int checkExecutable(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EACCES;  // what execve says for a directory
  if (::access(path.c_str(), X_OK) != 0) return errno;
  return 0;
}

}  // namespace

int findExecutable(const std::string& program, const char* pathEnv, std::string* resolved) {
  if (program.empty()) return ENOENT;
  if (program.find('/') != std::string::npos) {
    int err = checkExecutable(program);
    if (err == 0) *resolved = program;
    return err;
  }
  // Like execvp: remember EACCES from a match that is not executable, but
  // keep looking; report it only if no directory has a usable one.
  std::string_view path = pathEnv ? pathEnv : "/usr/local/bin:/usr/bin:/bin";
  int firstErr = ENOENT;
  size_t start = 0;
  while (true) {
    size_t colon = path.find(':', start);
    std::string_view dir =
        path.substr(start, colon == std::string_view::npos ? std::string_view::npos
                                                           : colon - start);
    std::string candidate = dir.empty() ? program : std::string(dir) + "/" + program;
    int err = checkExecutable(candidate);
    if (err == 0) {
      *resolved = dir.empty() ? "./" + program : candidate;
      return 0;
    }
    if (err == EACCES) firstErr = EACCES;
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return firstErr;
}

}  // namespace loom::launcher
