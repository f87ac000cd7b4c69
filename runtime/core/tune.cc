#include "core/tune.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "core/log.h"
#include "core/params.h"

namespace loom::tune {

const char* sourceName(Source s) {
  switch (s) {
    case Source::kDefault: return "default";
    case Source::kCached: return "cached";
    case Source::kMeasured: return "measured";
    case Source::kEnv: return "environment";
  }
  return "?";
}

const char* loadName(Load l) {
  switch (l) {
    case Load::kOk: return "valid";
    case Load::kMissing: return "missing";
    case Load::kStale: return "stale";
    case Load::kCorrupt: return "corrupt";
  }
  return "?";
}

Values defaults(bool oversubscribed) {
  Values v;
  if (oversubscribed) v.cmaMin = size_t{32} << 10;
  return v;
}

Values decide(std::span<const Sample> samples, size_t openAbove) {
  Values v = defaults(false);
  size_t i = 0;
  auto wins = [](const Sample& s) {
    return s.getUs > 0 && s.otherUs > 0 && s.getUs < kMargin * s.otherUs;
  };
  while (i < samples.size() && !wins(samples[i])) ++i;
  if (i == samples.size()) return v;  // CMA never won: the pipeline's defaults
  v.cmaMin = samples[i].bytes;
  size_t j = i;
  while (j + 1 < samples.size() && wins(samples[j + 1])) ++j;
  const bool last = j + 1 == samples.size();
  v.cmaMax = samples[j].bytes;
  if (last && samples[j].bytes >= openAbove) v.cmaMax = kNoMax;
  // The largest sample won by 2x or more: one step of 4x above it still
  // goes to CMA (the quick calibration stops at 256 KiB; on the Intel Xeon
  // that won by 2.2x at 256 KiB, CMA led to 1 MiB and lost from 2-4 MiB).
  else if (last && samples[j].getUs <= kClearWin * samples[j].otherUs) v.cmaMax *= 4;
  return v;
}

namespace {

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  // x86 names the model; arm64 gives the implementer and part numbers.
  std::string implementer, part;
  while (std::getline(in, line)) {
    size_t c = line.find(':');
    if (c == std::string::npos) continue;
    std::string k = trim(std::string_view(line).substr(0, c));
    std::string v = trim(std::string_view(line).substr(c + 1));
    if (k == "model name") return v;
    if (k == "CPU implementer" && implementer.empty()) implementer = v;
    if (k == "CPU part" && part.empty()) part = v;
  }
  if (!implementer.empty()) return "implementer " + implementer + " part " + part;
  return "unknown";
}

bool parseSize(const std::string& v, size_t* out) {
  if (v == "none") {
    *out = kNoMax;
    return true;
  }
  int64_t n = 0;
  if (!params::parseInt(v, &n) || n < 0) return false;
  *out = static_cast<size_t>(n);
  return true;
}

bool parseDouble(const std::string& v, double* out) {
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || errno || !(d >= 0)) return false;
  *out = d;
  return true;
}

std::string dirOf(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? "." : (s == 0 ? "/" : path.substr(0, s));
}

// mkdir -p, mode 0755.
bool makeDirs(const std::string& dir, std::string* why) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    cur = dir.substr(0, pos);
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      *why = "cannot create " + cur + ": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *why = dir + " is not a directory";
    return false;
  }
  return true;
}

}  // namespace

Key hostKey() {
  Key k;
  k.cpu = cpuModel();
  k.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  struct utsname u{};
  k.kernel = uname(&u) == 0 ? u.release : "unknown";
  k.version = LOOM_VERSION;
  return k;
}

std::string sizeText(size_t b) {
  if (b == kNoMax) return "none";
  char buf[32];
  if (b && b % (size_t{1} << 30) == 0) std::snprintf(buf, sizeof buf, "%zuG", b >> 30);
  else if (b && b % (size_t{1} << 20) == 0) std::snprintf(buf, sizeof buf, "%zuM", b >> 20);
  else if (b && b % 1024 == 0) std::snprintf(buf, sizeof buf, "%zuK", b >> 10);
  else std::snprintf(buf, sizeof buf, "%zu", b);
  return buf;
}

std::string format(const Record& r) {
  std::ostringstream o;
  o << "# Loom's measured protocol thresholds for this host (see loom-info, man loom).\n"
       "# Delete this file to measure again at the next job; LOOM_TUNE=0 ignores it.\n"
       "cpu = " << r.key.cpu << "\ncpus = " << r.key.cpus << "\nkernel = " << r.key.kernel
    << "\nversion = " << r.key.version << "\nwhen = " << r.when << "\ncost_us = "
    << static_cast<long>(r.costUs) << "\nshm_cma_min = " << sizeText(r.values.cmaMin)
    << "\nshm_cma_max = " << sizeText(r.values.cmaMax) << "\nrtt_us = " << r.values.rttUs
    << "\n# sample = bytes, CMA read us, eager (up to the eager limit) or pipeline us\n";
  for (const Sample& s : r.samples)
    o << "sample = " << s.bytes << " " << s.getUs << " " << s.otherUs << "\n";
  return o.str();
}

bool parse(std::string_view text, Record* out, std::string* why) {
  Record r;
  bool have[6] = {};  // cpu cpus kernel version min max
  std::istringstream in{std::string(text)};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string::npos) {
      *why = "line " + std::to_string(n) + " has no '='";
      return false;
    }
    std::string k = trim(std::string_view(t).substr(0, eq));
    std::string v = trim(std::string_view(t).substr(eq + 1));
    bool ok = true;
    if (k == "cpu") r.key.cpu = v, have[0] = true;
    else if (k == "cpus") {
      int64_t c = 0;
      ok = params::parseInt(v, &c) && c > 0 && c < (1 << 24);
      r.key.cpus = static_cast<int>(c);
      have[1] = true;
    } else if (k == "kernel") r.key.kernel = v, have[2] = true;
    else if (k == "version") r.key.version = v, have[3] = true;
    else if (k == "when") r.when = v;
    else if (k == "cost_us") ok = parseDouble(v, &r.costUs);
    else if (k == "shm_cma_min") ok = parseSize(v, &r.values.cmaMin), have[4] = true;
    else if (k == "shm_cma_max") ok = parseSize(v, &r.values.cmaMax), have[5] = true;
    else if (k == "rtt_us") ok = parseDouble(v, &r.values.rttUs);
    else if (k == "sample") {
      std::istringstream f(v);
      Sample s;
      ok = static_cast<bool>(f >> s.bytes >> s.getUs >> s.otherUs);
      r.samples.push_back(s);
    }
    // Unknown keys are left alone (a later Loom may add some).
    if (!ok) {
      *why = "line " + std::to_string(n) + ": bad value for " + k;
      return false;
    }
  }
  static const char* kNames[] = {"cpu", "cpus", "kernel", "version", "shm_cma_min",
                                 "shm_cma_max"};
  for (int i = 0; i < 6; ++i)
    if (!have[i]) {
      *why = std::string("no ") + kNames[i];
      return false;
    }
  if (r.values.cmaMax < r.values.cmaMin) {
    *why = "shm_cma_max is below shm_cma_min";
    return false;
  }
  *out = std::move(r);
  return true;
}

Load load(const std::string& path, const Key& key, Record* out, std::string* why) {
  std::ifstream in(path);
  if (!in) {
    *why = "no file " + path;
    return Load::kMissing;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > (1 << 16)) {
    *why = path + " is too large to be Loom's";
    return Load::kCorrupt;
  }
  if (!parse(text, out, why)) {
    *why = path + ": " + *why;
    return Load::kCorrupt;
  }
  if (!(out->key == key)) {
    *why = path + " was measured for another machine, kernel or Loom (" + out->key.cpu + ", " +
           std::to_string(out->key.cpus) + " CPUs, " + out->key.kernel + ", Loom " +
           out->key.version + ")";
    return Load::kStale;
  }
  return Load::kOk;
}

bool writable(const std::string& path, std::string* why) {
  std::string dir = dirOf(path);
  if (!makeDirs(dir, why)) return false;
  if (access(dir.c_str(), W_OK) != 0) {
    *why = dir + " is not writable: " + std::strerror(errno);
    return false;
  }
  return true;
}

bool store(const std::string& path, const Record& r, std::string* why) {
  if (!writable(path, why)) return false;
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *why = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  std::string text = format(r);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      *why = "cannot write " + tmp + ": " + std::strerror(w < 0 ? errno : ENOSPC);
      close(fd);
      unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(w);
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    *why = "cannot write " + path + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

Mode mode() {
  std::string v = params::getString("LOOM_TUNE");
  if (v == "auto") return Mode::kAuto;
  if (v == "refresh") return Mode::kRefresh;
  bool b = false;
  if (params::parseBool(v, &b)) return b ? Mode::kAuto : Mode::kOff;
  log::warn("LOOM_TUNE=%s is not auto, refresh or 0; using auto", v.c_str());
  return Mode::kAuto;
}

std::string cachePath() {
  if (mode() == Mode::kOff) return "";
  std::string dir = params::getString("LOOM_TUNE_CACHE");
  if (dir == "auto") {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (xdg && *xdg == '/') dir = std::string(xdg) + "/loom";
    else if (home && *home == '/') dir = std::string(home) + "/.cache/loom";
    else return "";
  }
  if (dir.empty()) return "";
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || !host[0]) std::strcpy(host, "localhost");
  for (char* c = host; *c; ++c)
    if (*c == '/') *c = '_';
  return dir + "/tune-" + host + ".conf";
}

Resolved resolve(bool oversubscribed, Mode m, const std::string& path, std::string_view envMin,
                 std::string_view envMax) {
  Resolved r;
  r.oversubscribed = oversubscribed;
  r.values = defaults(oversubscribed);
  r.path = path;
  // Measurements hold for ranks with a core each; oversubscribed, the
  // defaults know better.
  if (m != Mode::kOff && !path.empty()) {
    Record rec;
    r.state = load(path, hostKey(), &rec, &r.why);
    if (r.state == Load::kOk && !oversubscribed) {
      r.values = rec.values;
      r.cmaMin = r.cmaMax = Source::kCached;
      if (rec.values.rttUs > 0) r.rtt = Source::kCached;
    }
  } else {
    r.why = m == Mode::kOff ? "LOOM_TUNE=0" : "no cache place (no HOME or XDG_CACHE_HOME)";
  }
  auto env = [](std::string_view v, size_t* out) {
    if (v.empty() || v == "auto") return false;
    int64_t n = 0;
    if (v == "none") {
      *out = kNoMax;
      return true;
    }
    if (!params::parseInt(v, &n)) return false;  // params warned already
    *out = static_cast<size_t>(std::max<int64_t>(0, n));
    return true;
  };
  if (env(envMin, &r.values.cmaMin)) r.cmaMin = Source::kEnv;
  if (env(envMax, &r.values.cmaMax)) r.cmaMax = Source::kEnv;
  // A minimum set alone opens the window upwards, as LOOM_SHM_CMA_MIN always did.
  if (r.cmaMin == Source::kEnv && r.cmaMax != Source::kEnv) {
    r.values.cmaMax = kNoMax;
    r.cmaMax = Source::kEnv;
  }
  return r;
}

Resolved resolve(bool oversubscribed) {
  return resolve(oversubscribed, mode(), cachePath(), params::getString("LOOM_SHM_CMA_MIN"),
                 params::getString("LOOM_SHM_CMA_MAX"));
}

bool shouldCalibrate(const Resolved& r, Mode m, bool writablePlace) {
  if (m == Mode::kOff || r.path.empty() || r.oversubscribed || !writablePlace) return false;
  // Both set by the environment: nothing the measurement would change.
  if (r.cmaMin == Source::kEnv && r.cmaMax == Source::kEnv && m != Mode::kRefresh) return false;
  return m == Mode::kRefresh || r.state != Load::kOk;
}

void adopt(Resolved* r, const Values& measured) {
  if (r->cmaMin != Source::kEnv) {
    r->values.cmaMin = measured.cmaMin;
    r->cmaMin = Source::kMeasured;
  }
  if (r->cmaMax != Source::kEnv) {
    r->values.cmaMax = measured.cmaMax;
    r->cmaMax = Source::kMeasured;
  }
  if (measured.rttUs > 0) {
    r->values.rttUs = measured.rttUs;
    r->rtt = Source::kMeasured;
  }
}

std::string describe(const Resolved& r) {
  std::ostringstream o;
  o << "  shm_cma_min " << sizeText(r.values.cmaMin) << " (" << sourceName(r.cmaMin) << ")\n"
    << "  shm_cma_max " << sizeText(r.values.cmaMax) << " (" << sourceName(r.cmaMax) << ")\n";
  if (r.values.rttUs > 0) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", r.values.rttUs);
    o << "  rtt_us      " << b << " (" << sourceName(r.rtt) << ")\n";
  }
  else
    o << "  rtt_us      not measured\n";
  o << "  cache       " << (r.path.empty() ? "none" : r.path);
  if (!r.path.empty()) o << " (" << loadName(r.state) << ")";
  if (r.oversubscribed) o << ", oversubscribed: the defaults hold";
  if (!r.why.empty() && r.state != Load::kOk) o << "\n  why         " << r.why;
  o << "\n";
  return o.str();
}

}  // namespace loom::tune
