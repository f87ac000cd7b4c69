#include "binding.h"

#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace loom::launcher {
namespace {

HostCores fromAffinity() {
  HostCores host;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) host.cores.push_back({c});
  }
  if (host.cores.empty()) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < std::max(1L, n); ++c) host.cores.push_back({static_cast<int>(c)});
  }
  return host;
}

}  // namespace

HostCores discoverCores() {
  // hwloc dlopens its plugins on the first init: the PCI, OpenCL, GL (X11)
  // and libxml2 ones cost ~5 ms of loomrun's ~20 ms and are never needed
  // here (XML topologies still load through hwloc's built-in parser). Unless
  // the user chose a blacklist, skip them for this process only; this runs
  // before any thread exists, so touching the environment is safe.
  const bool ownBlacklist = std::getenv("HWLOC_PLUGINS_BLACKLIST") == nullptr;
  if (ownBlacklist)
    ::setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml", 1);
  hwloc_topology_t topo;
  int rc = hwloc_topology_init(&topo);
  if (ownBlacklist) ::unsetenv("HWLOC_PLUGINS_BLACKLIST");
  if (rc != 0) return fromAffinity();
  // Only cores and PUs matter here: skipping caches, NUMA details and I/O
  // keeps the load short (it is on loomrun's startup path).
  hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return fromAffinity();
  }
  HostCores host;
  host.thisSystem = hwloc_topology_is_thissystem(topo) != 0;
  hwloc_bitmap_t allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo));
  if (host.thisSystem) {
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0 &&
        hwloc_bitmap_intersects(mine, allowed))
      hwloc_bitmap_and(allowed, allowed, mine);
    hwloc_bitmap_free(mine);
  }
  int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_bitmap_t usable = hwloc_bitmap_alloc();
  for (int i = 0; i < ncores; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
    hwloc_bitmap_and(usable, core->cpuset, allowed);
    if (hwloc_bitmap_iszero(usable)) continue;
    std::vector<int> cpus;
    for (int pu = hwloc_bitmap_first(usable); pu != -1; pu = hwloc_bitmap_next(usable, pu))
      cpus.push_back(pu);
    host.cores.push_back(std::move(cpus));
  }
  if (host.cores.empty()) {  // no core objects (some VMs): one core per PU
    for (int pu = hwloc_bitmap_first(allowed); pu != -1; pu = hwloc_bitmap_next(allowed, pu))
      host.cores.push_back({pu});
  }
  hwloc_bitmap_free(usable);
  hwloc_bitmap_free(allowed);
  if (host.cores.empty()) {
    hwloc_topology_destroy(topo);
    return fromAffinity();
  }
  host.topology = topo;
  return host;
}

void freeTopology(HostCores* host) {
  if (host->topology) hwloc_topology_destroy(static_cast<hwloc_topology_t>(host->topology));
  host->topology = nullptr;
}

bool oversubscribed(const HostCores& host, int ranks) {
  return static_cast<size_t>(ranks) > host.cores.size();
}

std::string formatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<RankBinding> planBindings(const HostCores& host, int ranks, BindTo bindTo) {
  // Auto binds whenever every core gets the same number of ranks: when
  // they fit, and when oversubscribed by a whole multiple (4 or 8 ranks on
  // 2 cores). Measured on 2 cores, bound oversubscribed ranks wait and
  // yield to their core's other rank steadily, where unbound ones are at
  // times stacked three on a core by the scheduler (allreduce of 8 B at 4
  // ranks 3.1 us every run against 3.1-6.1 us; poll_ring at 8 ranks
  // 1055 us against 1130-1300). An uneven count stays unbound: bound, the
  // two ranks sharing a core would each get half of it while the lone
  // rank had a whole one, and a balanced program runs at its slowest rank.
  const size_t cores = host.cores.size();
  bool bind = bindTo == BindTo::kCore ||
              (bindTo == BindTo::kAuto &&
               (!oversubscribed(host, ranks) || (cores > 0 && ranks % cores == 0)));
  std::vector<RankBinding> plan(ranks);
  if (!bind || host.cores.empty()) return plan;
  for (int r = 0; r < ranks; ++r) {
    RankBinding& b = plan[r];
    b.bound = true;
    b.core = r % static_cast<int>(host.cores.size());
    const auto& cpus = host.cores[b.core];
    b.cpuList = formatCpuList(cpus);
    CPU_ZERO(&b.mask);
    for (int c : cpus)
      if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &b.mask);
  }
  return plan;
}

}  // namespace loom::launcher
