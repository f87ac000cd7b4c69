// The host reduction loop compiled for x86-64-v4 (AVX-512); see reduce_host.h.
// Built with -march=x86-64-v4 -ffp-contract=off (coll/CMakeLists.txt) and
// called only where the processor has it (reduce_isa.h).
#define LOOM_KERNELS_NS kernels_x86_v4
#define LOOM_REDUCE_HOST_FN applyPacked_x86_v4
#define LOOM_REDUCE_HOST_FROM_FN applyPackedFrom_x86_v4
#include "coll/reduce_host.h"
