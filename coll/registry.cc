// The registry of every collective algorithm. Add a line when you add an
// algorithm file; the selector's rules (selector.cc) refer to these names.
#include "coll/algorithms.h"
#include "coll/selector.h"

namespace loom::coll {

namespace {
constexpr Algorithm kAlgorithms[] = {
    // ---- begin barrier ----
    {Collective::kBarrier, "dissemination",
     "ceil(log2 p) rounds of empty messages to rank+2^k; any p", nullptr, barrierDissemination},
    // ---- end barrier ----
    // ---- begin data movement (bcast, gather, scatter, allgather, alltoall) ----
    // ---- end data movement ----
    // ---- begin reductions (reduce, allreduce, reduce_scatter, scan, exscan) ----
    // ---- end reductions ----
};
}  // namespace

std::span<const Algorithm> algorithms() { return kAlgorithms; }

}  // namespace loom::coll
