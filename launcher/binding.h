// Binding: which cores this host offers and which one each rank gets.
//
// A usable core is a hwloc core with at least one PU in the allowed cpuset
// (cgroups) that loomrun itself may run on (taskset/affinity); its PUs are
// the intersection. Rank i goes to usable core (i mod cores). The binding is
// applied in the child between fork and execve with sched_setaffinity, so
// cpu_set_t masks are prepared here, before fork.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

#include "options.h"

namespace loom::launcher {

struct HostCores {
  std::vector<std::vector<int>> cores;  // OS indices of each usable core's PUs
  bool thisSystem = true;  // false under HWLOC_SYNTHETIC/XMLFILE: report, do not bind
  void* topology = nullptr;  // the loaded hwloc_topology_t, handed to PMIx
};

// Loads the topology (cores and PUs only: ~3-8 ms). Never fails: without
// hwloc every allowed CPU is a core (and `topology` stays null). The
// topology is kept for the PMIx server, which would otherwise load a full
// one of its own; freeTopology() releases it.
HostCores discoverCores();
void freeTopology(HostCores* host);

struct RankBinding {
  bool bound = false;
  int core = -1;         // index among the usable cores
  std::string cpuList;   // "0", "2-3" for the report
  cpu_set_t mask;        // for sched_setaffinity in the child
};

// Whether ranks outnumber usable cores (LOOM_OVERSUBSCRIBE for the ranks).
bool oversubscribed(const HostCores& host, int ranks);

// The binding of every rank, after resolving BindTo::kAuto (bound when
// the ranks fit on the usable cores or are a whole multiple of them).
std::vector<RankBinding> planBindings(const HostCores& host, int ranks, BindTo bindTo);

// "0-3,8" for sorted OS indices.
std::string formatCpuList(const std::vector<int>& cpus);

}  // namespace loom::launcher
