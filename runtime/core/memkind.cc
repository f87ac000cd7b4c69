// Host-only build of memkind: no CUDA, every buffer is host memory.
#include "core/memkind.h"

namespace loom::memkind {
bool cudaBuilt() { return false; }
int cudaDevices() { return 0; }
Kind kindOf(const void*) { return Kind::kHost; }
std::string describe() { return "not built"; }
}  // namespace loom::memkind
