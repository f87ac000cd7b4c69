// Every collective algorithm: one function per file under coll/<collective>/,
// each filling a Schedule. The selector (coll.cc) picks which one runs.
#pragma once

#include "coll/schedule.h"
#include "coll/selector.h"

namespace loom::coll {

// ---- begin barrier ----
Status barrierDissemination(Schedule& s, const CollArgs& a);
// ---- end barrier ----
// ---- begin shared memory ----
// One node, through the communicator's segment (coll/shm/shm_coll.h): these
// start the call themselves (Algorithm::start) instead of building a
// schedule. shmSupports / shmReductionSupports say when they can run.
Status barrierShm(const CollArgs& a, Request** out);
Status bcastShm(const CollArgs& a, Request** out);
Status reduceShm(const CollArgs& a, Request** out);
Status allreduceShm(const CollArgs& a, Request** out);
Status reduceScatterBlockShm(const CollArgs& a, Request** out);
Status allgatherShm(const CollArgs& a, Request** out);
Status gatherShm(const CollArgs& a, Request** out);
Status scatterShm(const CollArgs& a, Request** out);
Status alltoallShm(const CollArgs& a, Request** out);
bool alltoallShmSupports(const CollArgs& a);
Status allreduceCma(const CollArgs& a, Request** out);  // reads peers' buffers (core/cma.h)
Status reduceCma(const CollArgs& a, Request** out);     // reads and writes them
// Both: one node, cross-memory access allowed, a contiguous type.
bool cmaReductionSupports(const CollArgs& a);
bool shmSupports(const CollArgs& a);
bool shmReductionSupports(const CollArgs& a);
bool shmRootedSupports(const CollArgs& a);
// ---- end shared memory ----
// ---- begin data movement ----
// Buffers as the API fills CollArgs: bcast moves recvbuf (count, type);
// gather/scatter/allgather/alltoall send (sendbuf, count, type) and
// receive (recvbuf, recvCount, recvType), per rank block; the v variants
// use sendCounts/sendDispls or recvCounts/recvDispls (in extents), the w
// variant byte displacements and per-rank types. Helpers: coll/move_util.h.
Status bcastBinomial(Schedule& s, const CollArgs& a);
Status bcastScatterAllgather(Schedule& s, const CollArgs& a);
Status bcastLinear(Schedule& s, const CollArgs& a);
Status gatherBinomial(Schedule& s, const CollArgs& a);
Status gatherLinear(Schedule& s, const CollArgs& a);  // gather and gatherv
Status scatterBinomial(Schedule& s, const CollArgs& a);
Status scatterLinear(Schedule& s, const CollArgs& a);  // scatter and scatterv
bool allgatherRecursiveDoublingSupports(const CollArgs& a);
Status allgatherRecursiveDoubling(Schedule& s, const CollArgs& a);
Status allgatherBruck(Schedule& s, const CollArgs& a);
Status allgatherRing(Schedule& s, const CollArgs& a);  // allgather and allgatherv
Status allgathervLinear(Schedule& s, const CollArgs& a);
Status alltoallBruck(Schedule& s, const CollArgs& a);
Status alltoallPairwise(Schedule& s, const CollArgs& a);  // alltoall, alltoallv, alltoallw
Status alltoallLinear(Schedule& s, const CollArgs& a);    // alltoall, alltoallv, alltoallw
// ---- end data movement ----
// ---- begin reductions ----
Status reduceBinomial(Schedule& s, const CollArgs& a);
Status reduceLinear(Schedule& s, const CollArgs& a);
Status allreduceRecursiveDoubling(Schedule& s, const CollArgs& a);
Status allreduceRing(Schedule& s, const CollArgs& a);
Status allreduceRabenseifner(Schedule& s, const CollArgs& a);
Status allreduceReduceBcast(Schedule& s, const CollArgs& a);
// reduce_scatter and reduce_scatter_block share these two.
Status reduceScatterRing(Schedule& s, const CollArgs& a);
Status reduceScatterReduceScatterv(Schedule& s, const CollArgs& a);
// scan and exscan share these two (CollArgs::coll says which).
Status scanRecursiveDoubling(Schedule& s, const CollArgs& a);
Status scanLinear(Schedule& s, const CollArgs& a);
// supports(): the call's op is commutative (coll/op.cc).
bool reductionCommutative(const CollArgs& a);
// ---- end reductions ----
// ---- begin hierarchical ----
// Several nodes: node-local step, leaders' step, node-local step
// (coll/hierarchy.h). Their supports() decline communicators with one rank
// per node; reduce needs a commutative op, allreduce a commutative op or
// nodes of consecutive ranks.
Status barrierHierarchical(Schedule& s, const CollArgs& a);
Status bcastHierarchical(Schedule& s, const CollArgs& a);
bool reduceHierarchicalSupports(const CollArgs& a);
Status reduceHierarchical(Schedule& s, const CollArgs& a);
bool allreduceHierarchicalSupports(const CollArgs& a);
Status allreduceHierarchical(Schedule& s, const CollArgs& a);
Status allgatherHierarchical(Schedule& s, const CollArgs& a);
// ---- end hierarchical ----

}  // namespace loom::coll
