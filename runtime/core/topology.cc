#include "core/topology.h"

#include <hwloc.h>

#include <chrono>
#include <cstdio>

#include "core/log.h"

namespace loom {
namespace {

int countType(hwloc_topology_t topo, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(topo, type);
  return n > 0 ? n : 1;
}

// Logical index of the object of `type` that contains `set`, or -1.
int containerIndex(hwloc_topology_t topo, hwloc_const_cpuset_t set, hwloc_obj_type_t type) {
  hwloc_obj_t obj = hwloc_get_obj_covering_cpuset(topo, set);
  while (obj && obj->type != type) obj = obj->parent;
  return obj ? static_cast<int>(obj->logical_index) : -1;
}

// NUMA nodes hang off the tree as memory children: look for the one whose
// cpuset contains `set`.
int numaIndex(hwloc_topology_t topo, hwloc_const_cpuset_t set) {
  hwloc_obj_t node = nullptr;
  while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)))
    if (node->cpuset && hwloc_bitmap_isincluded(set, node->cpuset))
      return static_cast<int>(node->logical_index);
  return -1;
}

}  // namespace

Status loadTopology(Topology* t) {
  auto start = std::chrono::steady_clock::now();
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return errorf(MPI_ERR_INTERN, "hwloc_topology_init failed");
  // Keep packages, cores, PUs and NUMA nodes only: no caches, no I/O, no
  // groups. This is what makes the load cheap.
  hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PACKAGE, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PU, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return errorf(MPI_ERR_INTERN, "hwloc_topology_load failed");
  }

  t->packages = countType(topo, HWLOC_OBJ_PACKAGE);
  t->numaNodes = countType(topo, HWLOC_OBJ_NUMANODE);
  t->cores = countType(topo, HWLOC_OBJ_CORE);
  t->pus = countType(topo, HWLOC_OBJ_PU);

  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
  int usable = 0;
  hwloc_obj_t core = nullptr;
  while ((core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core)))
    if (hwloc_bitmap_intersects(core->cpuset, allowed)) ++usable;
  t->usableCores = usable > 0 ? usable : 1;

  t->binding = "not bound";
  t->package = t->numaNode = t->core = -1;
  hwloc_bitmap_t bound = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bound) &&
      !hwloc_bitmap_isincluded(allowed, bound)) {
    t->package = containerIndex(topo, bound, HWLOC_OBJ_PACKAGE);
    t->core = containerIndex(topo, bound, HWLOC_OBJ_CORE);
    t->numaNode = numaIndex(topo, bound);
    char* cpus = nullptr;
    hwloc_bitmap_list_asprintf(&cpus, bound);
    char buf[128];
    if (t->core >= 0)
      std::snprintf(buf, sizeof buf, "core %d (cpus %s)", t->core, cpus ? cpus : "?");
    else
      std::snprintf(buf, sizeof buf, "cpus %s", cpus ? cpus : "?");
    t->binding = buf;
    free(cpus);
  }
  hwloc_bitmap_free(bound);
  hwloc_topology_destroy(topo);
  t->loadMillis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            start).count();
  log::debug("topo", "%s; bound to %s; loaded in %.1f ms", describe(*t).c_str(),
             t->binding.c_str(), t->loadMillis);
  return Status::ok();
}

std::string hwlocVersion() {
  // The API version of the library loaded at run time (hwloc 2.9 says 2.8:
  // its API did not change).
  unsigned v = hwloc_get_api_version();
  return "API " + std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff);
}

std::string describe(const Topology& t) {
  char buf[160];
  auto plural = [](int n) { return n == 1 ? "" : "s"; };
  std::snprintf(buf, sizeof buf, "%d package%s, %d NUMA node%s, %d core%s, %d PU%s (%d usable)",
                t.packages, plural(t.packages), t.numaNodes, plural(t.numaNodes), t.cores,
                plural(t.cores), t.pus, plural(t.pus), t.usableCores);
  return buf;
}

}  // namespace loom
