// The ABI queries (MPI 5.0 chapter "Application Binary Interface"),
// MPI_Get_hw_resource_info and MPI_Pcontrol.
//
// Every call here may be made at any time, before MPI_Init and without it,
// so none requires the runtime. Loom has no Fortran bindings: the Fortran
// ABI details are "not set" until a Fortran layer (or the application)
// supplies them with MPI_Abi_set_fortran_info / _booleans, which may each
// happen once, as the standard asks.
#include <cstdarg>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/info_internal.h"
#include "api/runtime.h"
#include "core/topology.h"

using loom::errorf;
using loom::Info;
using loom::InfoEntries;
using loom::api::raiseNoObject;
using loom::api::rt;

namespace {

// What MPI_Abi_set_fortran_info / _booleans stored.
struct FortranAbi {
  bool infoSet = false;
  InfoEntries info;
  // Fortran LOGICAL literals by size (1, 2, 4, 8, 16 bytes).
  struct Booleans {
    int size;
    std::vector<unsigned char> yes, no;
  };
  std::vector<Booleans> booleans;
};
FortranAbi& fortran() {
  static FortranAbi f;
  return f;
}

bool validLogicalSize(int size) { return size == 1 || size == 2 || size == 4 || size == 8 || size == 16; }

}  // namespace

extern "C" int PMPI_Abi_get_version(int* abi_major, int* abi_minor) {
  if (!abi_major || !abi_minor)
    return raiseNoObject(errorf(MPI_ERR_ARG, "abi_major or abi_minor is NULL"),
                         "MPI_Abi_get_version");
  *abi_major = MPI_ABI_VERSION;
  *abi_minor = MPI_ABI_SUBVERSION;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Abi_get_version)

// The sizes of the integer types whose width the ABI leaves to the platform
// (MPI 5.0 §20.3), in bytes.
extern "C" int PMPI_Abi_get_info(MPI_Info* info) {
  if (!info) return raiseNoObject(errorf(MPI_ERR_ARG, "info is NULL"), "MPI_Abi_get_info");
  *info = loom::api::newInfo({
      {"mpi_aint_size", std::to_string(sizeof(MPI_Aint))},
      {"mpi_count_size", std::to_string(sizeof(MPI_Count))},
      {"mpi_offset_size", std::to_string(sizeof(MPI_Offset))},
  });
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Abi_get_info)

// MPI_INFO_NULL until MPI_Abi_set_fortran_info stored something: Loom has no
// Fortran bindings, so it knows nothing of the Fortran compiler.
extern "C" int PMPI_Abi_get_fortran_info(MPI_Info* info) {
  if (!info)
    return raiseNoObject(errorf(MPI_ERR_ARG, "info is NULL"), "MPI_Abi_get_fortran_info");
  *info = fortran().infoSet ? loom::api::newInfo(fortran().info) : MPI_INFO_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Abi_get_fortran_info)

extern "C" int PMPI_Abi_set_fortran_info(MPI_Info info) {
  static const char* fn = "MPI_Abi_set_fortran_info";
  Info* i = loom::api::toInfo(info);
  if (!i) return raiseNoObject(errorf(MPI_ERR_INFO, "invalid info object"), fn);
  if (fortran().infoSet)
    return raiseNoObject(errorf(MPI_ERR_ABI, "the Fortran ABI information was already set"), fn);
  fortran().info = i->entries();
  fortran().infoSet = true;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Abi_set_fortran_info)

extern "C" int PMPI_Abi_get_fortran_booleans(int logical_size, void* logical_true,
                                             void* logical_false, int* is_set) {
  static const char* fn = "MPI_Abi_get_fortran_booleans";
  if (!validLogicalSize(logical_size))
    return raiseNoObject(
        errorf(MPI_ERR_ARG, "logical_size = %d is not 1, 2, 4, 8 or 16", logical_size), fn);
  if (!is_set) return raiseNoObject(errorf(MPI_ERR_ARG, "is_set is NULL"), fn);
  *is_set = 0;
  for (auto& b : fortran().booleans) {
    if (b.size != logical_size) continue;
    if (!logical_true || !logical_false)
      return raiseNoObject(errorf(MPI_ERR_ARG, "logical_true or logical_false is NULL"), fn);
    std::memcpy(logical_true, b.yes.data(), b.yes.size());
    std::memcpy(logical_false, b.no.data(), b.no.size());
    *is_set = 1;
  }
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Abi_get_fortran_booleans)

extern "C" int PMPI_Abi_set_fortran_booleans(int logical_size, void* logical_true,
                                             void* logical_false) {
  static const char* fn = "MPI_Abi_set_fortran_booleans";
  if (!validLogicalSize(logical_size))
    return raiseNoObject(
        errorf(MPI_ERR_ARG, "logical_size = %d is not 1, 2, 4, 8 or 16", logical_size), fn);
  if (!logical_true || !logical_false)
    return raiseNoObject(errorf(MPI_ERR_ARG, "logical_true or logical_false is NULL"), fn);
  for (auto& b : fortran().booleans)
    if (b.size == logical_size)
      return raiseNoObject(
          errorf(MPI_ERR_ABI, "the Fortran booleans of size %d were already set", logical_size),
          fn);
  auto* t = static_cast<unsigned char*>(logical_true);
  auto* f = static_cast<unsigned char*>(logical_false);
  fortran().booleans.push_back(
      {logical_size, std::vector<unsigned char>(t, t + logical_size),
       std::vector<unsigned char>(f, f + logical_size)});
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Abi_set_fortran_booleans)

// What hwloc told Loom about the machine this process runs on, at the
// moment of the call. The standard leaves the keys to the implementation;
// Loom names resource types the way hwloc does ("hwloc://Core"), which is
// also how MPI_COMM_TYPE_HW_GUIDED names them, and gives their counts.
extern "C" int PMPI_Get_hw_resource_info(MPI_Info* hw_info) {
  static const char* fn = "MPI_Get_hw_resource_info";
  if (!hw_info) return raiseNoObject(errorf(MPI_ERR_ARG, "hw_info is NULL"), fn);
  loom::Topology fresh;
  const loom::Topology* t = &rt().topo;
  if (rt().phase != loom::api::Phase::kRunning) {
    loom::Status st = loom::loadTopology(&fresh);
    if (!st.isOk()) return raiseNoObject(st, fn);
    t = &fresh;
  }
  InfoEntries e = {
      {"mpi_hw_resource_type",
       "mpi_shared_memory,hwloc://Package,hwloc://NUMANode,hwloc://Core,hwloc://PU"},
      {"hwloc://Package", std::to_string(t->packages)},
      {"hwloc://NUMANode", std::to_string(t->numaNodes)},
      {"hwloc://Core", std::to_string(t->cores)},
      {"hwloc://PU", std::to_string(t->pus)},
      {"loom_usable_cores", std::to_string(t->usableCores)},
      {"loom_binding", t->binding},
      {"loom_hwloc_version", loom::hwlocVersion()},
  };
  *hw_info = loom::api::newInfo(std::move(e));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Get_hw_resource_info)

// Profiling control: for tools that interpose MPI_Pcontrol. Loom itself
// has no profiling levels, so it does nothing, at any time.
extern "C" int PMPI_Pcontrol(const int level, ...) {
  (void)level;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Pcontrol)
