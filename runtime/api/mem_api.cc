// MPI_Alloc_mem / MPI_Free_mem (MPI 5.0 §9.2).
//
// Plain aligned host memory: Loom's transports need nothing special
// (shared-memory single copy reads any address with CMA; libfabric registers
// buffers itself). The alignment is 64 bytes (a cache line), or the info key
// "mpi_minimum_memory_alignment" (MPI 4.1) when it asks for more. Live
// allocations are remembered so MPI_Free_mem rejects a pointer it never
// handed out instead of corrupting the heap.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "api/info_internal.h"
#include "api/runtime.h"

using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;

namespace {

constexpr size_t kDefaultAlignment = 64;

struct Allocations {
  std::mutex mu;
  std::unordered_set<void*> live;
};
Allocations& allocations() {
  static auto* a = new Allocations();  // outlives every static destructor
  return *a;
}

// The alignment the info asks for: a power of two, or 0 for a bad value.
size_t alignmentFrom(loom::Info* info) {
  const std::string* v = info ? info->get("mpi_minimum_memory_alignment") : nullptr;
  if (!v) return kDefaultAlignment;
  char* end = nullptr;
  unsigned long long a = std::strtoull(v->c_str(), &end, 10);
  // An unusable hint is ignored, as the standard lets hints be.
  if (end == v->c_str() || *end != '\0' || a == 0 || (a & (a - 1)) != 0 || a > (1ull << 30))
    return kDefaultAlignment;
  return a < kDefaultAlignment ? kDefaultAlignment : static_cast<size_t>(a);
}

}  // namespace

// `baseptr` is declared void* for C's convenience but is really a void**:
// the address of the caller's pointer.
extern "C" int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  static const char* fn = "MPI_Alloc_mem";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (size < 0)
    return raise(nullptr, errorf(MPI_ERR_ARG, "size = %ld is negative", static_cast<long>(size)),
                 fn);
  if (!baseptr) return raise(nullptr, errorf(MPI_ERR_ARG, "baseptr is NULL"), fn);
  loom::Info* i = nullptr;
  if (info != MPI_INFO_NULL) {
    i = loom::api::toInfo(info);
    if (!i) return raise(nullptr, errorf(MPI_ERR_INFO, "invalid info object"), fn);
  }
  size_t align = alignmentFrom(i);
  // aligned_alloc wants a multiple of the alignment; a zero-byte request
  // still gets a distinct pointer that MPI_Free_mem accepts.
  size_t bytes = static_cast<size_t>(size);
  size_t rounded = bytes == 0 ? align : (bytes + align - 1) / align * align;
  if (rounded < bytes) rounded = 0;  // overflow
  void* p = rounded ? std::aligned_alloc(align, rounded) : nullptr;
  if (!p)
    return raise(nullptr, errorf(MPI_ERR_NO_MEM, "cannot allocate %zu bytes", bytes), fn);
  {
    std::lock_guard<std::mutex> lock(allocations().mu);
    allocations().live.insert(p);
  }
  std::memcpy(baseptr, &p, sizeof p);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Alloc_mem)

// NULL is accepted and ignored (as free(NULL) and MPICH do).
extern "C" int PMPI_Free_mem(void* base) {
  static const char* fn = "MPI_Free_mem";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!base) return MPI_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(allocations().mu);
    if (allocations().live.erase(base) == 0)
      return raise(nullptr,
                   errorf(MPI_ERR_ARG, "%p was not allocated by MPI_Alloc_mem (or already freed)",
                          base),
                   fn);
  }
  std::free(base);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Free_mem)
