// loom-info: what this Loom is, what it was built with, what machine it sees
// and every LOOM_* parameter with its default and current value.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <mpi.h>

#include "api/unsupported.h"
#include "coll/op.h"
#include "coll/selector.h"
#include "core/device.h"
#include "core/params.h"
#include "core/topology.h"
#include "core/tune.h"
#include "p2p/p2p.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "Usage: loom-info [--all | --version | --features | --topology | --tuning | --params |\n"
               "                 --coll | --unsupported | --tune]\n"
               "Prints Loom's version, build features, the topology hwloc reports and the\n"
               "LOOM_* parameters (default and value in effect), (--coll) the collective\n"
               "algorithms with the selector's rules and (--unsupported) the MPI functions\n"
               "that exist but return MPI_ERR_UNSUPPORTED_OPERATION. --tuning: the measured\n"
               "thresholds in use and where each came from (measured, cached, default,\n"
               "environment); --tune measures them again on this host (a 2-rank job through\n"
               "loomrun, ~20 ms) and rewrites the cache. Default: --all.\n");
}

void printVersion() { std::printf("Loom %s (MPI 5.0 standard ABI)\n", LOOM_VERSION); }

void printFeatures() {
  std::printf("Build features:\n");
  loom::device::init();
  std::printf("  CUDA:        %s\n", loom::device::summary().c_str());
  for (int d = 0; d < loom::device::count(); ++d)
    std::printf("    device %s\n", loom::device::describe(d).c_str());
  std::printf("%s", loom::p2p::describeNetwork().c_str());
  std::printf("  reductions:  host loop built for %s (LOOM_REDUCE_ISA)\n", loom::coll::reduceIsa());
  std::printf("  PMIx:        client and embedded server (loomrun)\n");
  std::printf("  hwloc:       %s\n", loom::hwlocVersion().c_str());
}

void printTopology() {
  loom::Topology t;
  loom::Status st = loom::loadTopology(&t);
  std::printf("Topology:\n");
  if (!st.isOk()) {
    std::printf("  unavailable: %s\n", st.message().c_str());
    return;
  }
  std::printf("  %s\n", loom::describe(t).c_str());
  std::printf("  this process: %s\n", t.binding.c_str());
  const char* fake = std::getenv("HWLOC_SYNTHETIC");
  if (!fake) fake = std::getenv("HWLOC_XMLFILE");
  if (fake) std::printf("  (fake topology from %s)\n", fake);
}

void printParams() {
  std::printf("Parameters (environment variables):\n");
  for (const auto& p : loom::params::all()) {
    const char* env = std::getenv(p.name);
    std::printf("  %-24s default: %-8s%s%s\n", p.name, *p.defaultValue ? p.defaultValue : "\"\"",
                env ? "  set: " : "", env ? env : "");
    std::printf("      %s\n", p.doc);
  }
}

void printTuning() {
  loom::tune::Resolved r = loom::tune::resolve(false);
  std::printf("Tuning (thresholds measured on this host; LOOM_TUNE, man loom):\n%s",
              loom::tune::describe(r).c_str());
  loom::tune::Record rec;
  std::string why;
  if (!r.path.empty() && loom::tune::load(r.path, loom::tune::hostKey(), &rec, &why) ==
                             loom::tune::Load::kOk) {
    std::printf("  measured    %s, in %.0f us\n", rec.when.c_str(), rec.costUs);
    const auto eagerMax = static_cast<size_t>(loom::params::getInt("LOOM_SHM_EAGER_MAX"));
    for (const auto& s : rec.samples)
      std::printf("    %8s  CMA read %8.2f us   %s %8.2f us%s\n",
                  loom::tune::sizeText(s.bytes).c_str(), s.getUs,
                  s.bytes <= eagerMax ? "eager   " : "pipeline", s.otherUs,
                  s.getUs < loom::tune::kMargin * s.otherUs ? "   CMA" : "");
  }
  std::printf("  (jobs with more ranks than cores use the defaults)\n");
}

// Measures again: a 2-rank job of this program (--tune-job) with
// LOOM_TUNE=refresh; the calibration runs in its MPI_Finalize.
int runTune() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    std::fprintf(stderr, "loom-info: cannot find its own executable\n");
    return 1;
  }
  exe[n] = 0;
  std::string dir(exe);
  dir = dir.substr(0, dir.rfind('/'));
  std::string loomrun = dir + "/loomrun";
  if (loom::tune::cachePath().empty()) {
    std::fprintf(stderr, "loom-info: no cache place (LOOM_TUNE=0, or neither HOME nor "
                         "XDG_CACHE_HOME nor LOOM_TUNE_CACHE is set)\n");
    return 1;
  }
  setenv("LOOM_TUNE", "refresh", 1);
  std::fflush(stdout);
  execl(loomrun.c_str(), loomrun.c_str(), "-n", "2", exe, "--tune-job",
        static_cast<char*>(nullptr));
  std::fprintf(stderr, "loom-info: cannot run %s: %s\n", loomrun.c_str(), std::strerror(errno));
  return 1;
}

int tuneJob() {
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Finalize();
  if (rank != 0) return 0;
  loom::tune::Record rec;
  std::string why;
  const std::string path = loom::tune::cachePath();
  if (loom::tune::load(path, loom::tune::hostKey(), &rec, &why) != loom::tune::Load::kOk) {
    std::fprintf(stderr, "loom-info: the calibration wrote no cache: %s\n", why.c_str());
    return 1;
  }
  unsetenv("LOOM_TUNE");
  printTuning();
  return 0;
}

// The functions mpi.h declares that Loom does not implement yet, by area.
void printUnsupported() {
  std::map<std::string, std::vector<const char*>> byArea;
  int missing = 0;
  for (const auto* f = loom::api::kUnsupportedFunctions; f->name; ++f, ++missing)
    byArea[f->area].push_back(f->name);
  std::printf("MPI functions: %d of %d implemented; these return MPI_ERR_UNSUPPORTED_OPERATION:\n",
              loom::api::kImplementedFunctions, loom::api::kImplementedFunctions + missing);
  for (const auto& [area, names] : byArea) {
    std::printf("  %s (%zu):\n", area.c_str(), names.size());
    for (const char* n : names) std::printf("    %s\n", n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool all = argc == 1;
  bool features = false, topology = false, params = false, version = false, coll = false,
       unsupported = false, tuning = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--all") all = true;
    else if (a == "--version") version = true;
    else if (a == "--features") features = true;
    else if (a == "--topology") topology = true;
    else if (a == "--params") params = true;
    else if (a == "--coll") coll = true;
    else if (a == "--unsupported") unsupported = true;
    else if (a == "--tuning") tuning = true;
    else if (a == "--tune") return runTune();
    else if (a == "--tune-job") return tuneJob();
    else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "loom-info: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (all || version) printVersion();
  if (all || features) printFeatures();
  if (all || topology) printTopology();
  if (all || tuning) printTuning();
  if (all || params) printParams();
  if (all || coll) std::printf("%s", loom::coll::describeAll().c_str());
  if (unsupported) printUnsupported();
  return 0;
}
