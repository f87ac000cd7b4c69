// Environment queries: time, names, versions.
#include <time.h>

#include <cstdio>
#include <cstring>

#include "api/runtime.h"
#include "core/device.h"

namespace {
// Copies `s` into `out` (capacity `cap` including the NUL), truncating.
void copyOut(const std::string& s, char* out, int cap, int* len) {
  size_t n = std::min(s.size(), static_cast<size_t>(cap - 1));
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
  *len = static_cast<int>(n);
}

std::string libraryVersion() {
  std::string s = "Loom " LOOM_VERSION " (MPI 5.0 ABI; CUDA: ";
  s += loom::device::cudaBuilt() ? "yes" : "no";
#ifdef LOOM_HAVE_OFI
  s += "; libfabric: yes)";
#else
  s += "; libfabric: no)";
#endif
  return s;
}
}  // namespace

// MPI_Wtime: CLOCK_MONOTONIC, so it never jumps; not synchronised across
// nodes (MPI_WTIME_IS_GLOBAL is false). Callable at any time.
extern "C" double PMPI_Wtime(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
LOOM_WEAK_ALIAS(MPI_Wtime)

extern "C" double PMPI_Wtick(void) {
  timespec res;
  if (clock_getres(CLOCK_MONOTONIC, &res) != 0) return 1e-9;
  return static_cast<double>(res.tv_sec) + 1e-9 * static_cast<double>(res.tv_nsec);
}
LOOM_WEAK_ALIAS(MPI_Wtick)

extern "C" int PMPI_Get_processor_name(char* name, int* resultlen) {
  if (!loom::api::requireRunning("MPI_Get_processor_name")) return MPI_ERR_OTHER;
  if (!name || !resultlen)
    return loom::api::raise(nullptr, loom::errorf(MPI_ERR_ARG, "name or resultlen is NULL"),
                            "MPI_Get_processor_name");
  copyOut(loom::api::rt().proc.hostname, name, MPI_MAX_PROCESSOR_NAME, resultlen);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Get_processor_name)

extern "C" int PMPI_Get_version(int* version, int* subversion) {
  if (!version || !subversion) return MPI_ERR_ARG;
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Get_version)

extern "C" int PMPI_Get_library_version(char* version, int* resultlen) {
  if (!version || !resultlen) return MPI_ERR_ARG;
  copyOut(libraryVersion(), version, MPI_MAX_LIBRARY_VERSION_STRING, resultlen);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Get_library_version)

// MPI_Error_string and MPI_Error_class: error_codes.cc.
