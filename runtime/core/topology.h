// Topology: a summary of the machine from hwloc, loaded once per rank.
//
// Only what Loom decides with is kept: counts of packages, NUMA nodes, cores
// and PUs, how many cores this job may use, and where this process is bound.
// Loading skips I/O devices, caches and everything else hwloc can discover,
// which keeps it to a few milliseconds. Fake machines for tests come from
// HWLOC_SYNTHETIC or HWLOC_XMLFILE. This is the only file pair of the runtime
// that includes hwloc.
#pragma once

#include <string>

#include "core/status.h"

namespace loom {

struct Topology {
  int packages = 1;
  int numaNodes = 1;
  int cores = 1;
  int pus = 1;
  int usableCores = 1;  // cores with at least one PU in the allowed cpuset
  // Where this process is bound: logical indexes, -1 when not inside one.
  int package = -1;
  int numaNode = -1;
  int core = -1;
  std::string binding;  // "core 1 (cpus 1)" or "not bound"
  double loadMillis = 0;
};

// Loads the topology (real, or fake through HWLOC_* variables).
Status loadTopology(Topology* out);

// Version of the hwloc library in use ("2.9.0").
std::string hwlocVersion();

// One-line summary: "1 package, 1 NUMA node, 2 cores, 2 PUs (2 usable)".
std::string describe(const Topology& t);

}  // namespace loom
