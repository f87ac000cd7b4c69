// The host reduction loop compiled for x86-64-v3 (AVX2); see reduce_host.h.
// Built with -march=x86-64-v3 -ffp-contract=off (coll/CMakeLists.txt) and
// called only where the processor has it (reduce_isa.h).
#define LOOM_KERNELS_NS kernels_x86_v3
#define LOOM_REDUCE_HOST_FN applyPacked_x86_v3
#define LOOM_REDUCE_HOST_FROM_FN applyPackedFrom_x86_v3
#include "coll/reduce_host.h"
