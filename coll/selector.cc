#include "coll/selector.h"

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/log.h"
#include "core/params.h"

namespace loom::coll {
namespace {

constexpr size_t kAny = SIZE_MAX;
constexpr int kAnyRanks = 1 << 30;

// The rules, first match wins. `bytes` is, per collective: bcast, reduce,
// allreduce, scan, exscan: the whole buffer (count * type size); gather,
// scatter, allgather, alltoall: one rank's block; the v/w variants: the
// largest block; reduce_scatter: the whole input; barrier: 0.
// Every threshold here was measured; see docs/benchmarks.md.
constexpr Rule kRules[] = {
    // ---- begin barrier ----
    {Collective::kBarrier, kAny, 1, kAnyRanks, false, "dissemination"},
    // ---- end barrier ----
    // ---- begin data movement ----
    // ---- end data movement ----
    // ---- begin reductions ----
    // ---- end reductions ----
};

const char* kNames[] = {"barrier",   "bcast",          "reduce",
                        "allreduce", "gather",         "gatherv",
                        "scatter",   "scatterv",       "allgather",
                        "allgatherv", "reduce_scatter", "reduce_scatter_block",
                        "alltoall",  "alltoallv",      "alltoallw",
                        "scan",      "exscan"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(Collective::kCount));

bool isPow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

const Algorithm* findAlgorithm(Collective c, const std::string& name) {
  for (const Algorithm& a : algorithms())
    if (a.coll == c && name == a.name) return &a;
  return nullptr;
}

std::string choices(Collective c) {
  std::string s;
  for (const Algorithm& a : algorithms())
    if (a.coll == c) s += std::string(s.empty() ? "" : ", ") + a.name;
  return s;
}

std::string overrideParam(Collective c) {
  std::string p = "LOOM_COLL_";
  for (const char* n = collectiveName(c); *n; ++n)
    p += static_cast<char>(*n >= 'a' && *n <= 'z' ? *n - 'a' + 'A' : *n);
  return p;
}

}  // namespace

const char* collectiveName(Collective c) { return kNames[static_cast<int>(c)]; }

std::span<const Rule> rules() { return kRules; }

Status select(const CollArgs& args, const Algorithm** out) {
  const std::string param = overrideParam(args.coll);
  const std::string forced = params::find(param) ? params::getString(param) : std::string();
  if (!forced.empty() && forced != "auto") {
    const Algorithm* a = findAlgorithm(args.coll, forced);
    if (!a)
      return errorf(MPI_ERR_ARG, "%s=%s names no %s algorithm (choices: %s)", param.c_str(),
                    forced.c_str(), collectiveName(args.coll), choices(args.coll).c_str());
    if (!a->supports || a->supports(args)) {
      *out = a;
      return Status::ok();
    }
    log::debug("coll", "%s=%s cannot run this call; using the rules", param.c_str(),
               forced.c_str());
  }
  const int p = args.comm->size();
  for (const Rule& r : kRules) {
    if (r.coll != args.coll || args.bytes > r.maxBytes || p < r.minRanks || p > r.maxRanks ||
        (r.pow2Only && !isPow2(p)))
      continue;
    const Algorithm* a = findAlgorithm(args.coll, r.algorithm);
    if (a && (!a->supports || a->supports(args))) {
      *out = a;
      return Status::ok();
    }
  }
  // Always reachable only through a bug in the tables: say which.
  return errorf(MPI_ERR_INTERN, "no %s algorithm supports %zu bytes on %d ranks",
                collectiveName(args.coll), args.bytes, p);
}

Status run(const CollArgs& args, Request** out) {
  const Algorithm* a = nullptr;
  LOOM_TRY(select(args, &a));
  auto s = std::make_unique<Schedule>(args.comm, args.comm->nextCollectiveTag());
  LOOM_TRY(a->build(*s, args));
  if (args.comm->rank() == 0 && log::enabled("coll"))
    log::debug("coll", "%s: %s, %zu bytes, %d ranks: %s (%zu rounds)",
               args.comm->name().empty() ? "communicator" : args.comm->name().c_str(),
               collectiveName(args.coll), args.bytes, args.comm->size(), a->name,
               s->roundCount());
  return Schedule::start(std::move(s), out);
}

std::string describeAll() {
  std::string out = "Collective algorithms:\n";
  char line[256];
  for (const Algorithm& a : algorithms()) {
    std::snprintf(line, sizeof line, "  %-22s %-18s %s\n", collectiveName(a.coll), a.name, a.desc);
    out += line;
  }
  out += "Selection rules (first match wins; override with LOOM_COLL_<COLLECTIVE>=<name>):\n";
  for (const Rule& r : kRules) {
    char bytes[32], ranks[32];
    if (r.maxBytes == kAny)
      std::snprintf(bytes, sizeof bytes, "any size");
    else
      std::snprintf(bytes, sizeof bytes, "<= %zu B", r.maxBytes);
    if (r.maxRanks == kAnyRanks)
      std::snprintf(ranks, sizeof ranks, ">= %d ranks", r.minRanks);
    else
      std::snprintf(ranks, sizeof ranks, "%d..%d ranks", r.minRanks, r.maxRanks);
    std::snprintf(line, sizeof line, "  %-22s %-12s %-16s %-6s -> %s\n", collectiveName(r.coll),
                  bytes, ranks, r.pow2Only ? "pow2" : "", r.algorithm);
    out += line;
  }
  return out;
}

}  // namespace loom::coll
