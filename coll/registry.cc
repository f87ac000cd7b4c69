// The registry of every collective algorithm. Add a line when you add an
// algorithm file; the selector's rules (selector.cc) refer to these names.
#include "coll/algorithms.h"
#include "coll/device_pipe.h"
#include "coll/hierarchy.h"
#include "coll/selector.h"

namespace loom::coll {

namespace {
constexpr Algorithm kAlgorithms[] = {
    // ---- begin barrier ----
    {Collective::kBarrier, "dissemination",
     "ceil(log2 p) rounds of empty messages to rank+2^k; any p", nullptr, barrierDissemination},
    {Collective::kBarrier, "shm",
     "one node: each rank publishes a flag in the segment and waits for all", shmSupports,
     nullptr, barrierShm},
    // ---- end barrier ----
    // ---- begin shared memory (one node; coll/shm/shm_coll.h) ----
    {Collective::kBcast, "shm", "one node: root stages pieces in its slot, all copy them out",
     shmRootedSupports, nullptr, bcastShm},
    {Collective::kReduce, "shm", "one node: all stage, the root folds every slot in rank order",
     shmReductionSupports, nullptr, reduceShm},
    {Collective::kAllreduce, "shm", "one node: all stage, every rank folds every slot in rank order",
     shmReductionSupports, nullptr, allreduceShm},
    {Collective::kAllgather, "shm", "one node: all stage their block, all copy every block",
     shmSupports, nullptr, allgatherShm},
    {Collective::kGather, "shm", "one node: all stage their block, the root copies every block",
     shmSupports, nullptr, gatherShm},
    {Collective::kScatter, "shm", "one node: the root stages all blocks, each rank copies its own",
     shmRootedSupports, nullptr, scatterShm},
    {Collective::kAlltoall, "shm",
     "one node: all stage all their blocks, each rank copies its block from every slot",
     alltoallShmSupports, nullptr, alltoallShm},
    {Collective::kAllreduce, "cma",
     "one node: rank i reduces chunk i reading peers' buffers directly, all read all chunks",
     allreduceCmaSupports, nullptr, allreduceCma},
    // ---- end shared memory ----
    // ---- begin data movement (bcast, gather, scatter, allgather, alltoall) ----
    {Collective::kBcast, "binomial", "binomial tree, whole message per level; small messages",
     nullptr, bcastBinomial},
    {Collective::kBcast, "scatter_allgather",
     "binomial scatter + ring allgather (van de Geijn); large messages", nullptr,
     bcastScatterAllgather},
    {Collective::kBcast, "linear", "root sends to every rank at once; tiny communicators", nullptr,
     bcastLinear},
    {Collective::kGather, "binomial", "binomial tree through packed scratch; small blocks",
     nullptr, gatherBinomial},
    {Collective::kGather, "linear", "root receives from every rank at once; large blocks",
     nullptr, gatherLinear},
    {Collective::kGatherv, "linear", "root receives from every rank at once", nullptr,
     gatherLinear},
    {Collective::kScatter, "binomial", "binomial tree through packed scratch; small blocks",
     nullptr, scatterBinomial},
    {Collective::kScatter, "linear", "root sends to every rank at once; large blocks", nullptr,
     scatterLinear},
    {Collective::kScatterv, "linear", "root sends to every rank at once", nullptr, scatterLinear},
    {Collective::kAllgather, "recursive_doubling",
     "log2 p exchanges with r^2^k, in place; power-of-two p", allgatherRecursiveDoublingSupports,
     allgatherRecursiveDoubling},
    {Collective::kAllgather, "bruck", "ceil(log2 p) steps through packed scratch; small, any p",
     nullptr, allgatherBruck},
    {Collective::kAllgather, "ring", "p-1 neighbour steps, in place; large blocks", nullptr,
     allgatherRing},
    {Collective::kAllgatherv, "ring", "p-1 neighbour steps, in place; large or many blocks",
     nullptr, allgatherRing},
    {Collective::kAllgatherv, "linear", "every rank sends to every rank at once; small blocks",
     nullptr, allgathervLinear},
    {Collective::kAlltoall, "bruck", "ceil(log2 p) steps, packed; small blocks, many ranks",
     nullptr, alltoallBruck},
    {Collective::kAlltoall, "linear", "all sends and receives posted at once; medium blocks",
     nullptr, alltoallLinear},
    {Collective::kAlltoall, "pairwise", "p-1 rounds, one peer each; large blocks", nullptr,
     alltoallPairwise},
    {Collective::kAlltoallv, "linear", "all sends and receives posted at once", nullptr,
     alltoallLinear},
    {Collective::kAlltoallv, "pairwise", "p-1 rounds, one peer each; large blocks", nullptr,
     alltoallPairwise},
    {Collective::kAlltoallw, "linear", "all sends and receives posted at once", nullptr,
     alltoallLinear},
    {Collective::kAlltoallw, "pairwise", "p-1 rounds, one peer each; large blocks", nullptr,
     alltoallPairwise},
    // ---- end data movement ----
    // ---- begin reductions (reduce, allreduce, reduce_scatter, scan, exscan) ----
    {Collective::kReduce, "binomial",
     "binomial tree rotated to the root, log p rounds; commutative ops", reductionCommutative,
     reduceBinomial},
    {Collective::kReduce, "linear", "chain p-1 -> ... -> 0 -> root in rank order; any op",
     nullptr, reduceLinear},
    {Collective::kAllreduce, "recursive_doubling",
     "log p full-vector exchanges (+fold for non-pow2); any op, small vectors", nullptr,
     allreduceRecursiveDoubling},
    {Collective::kAllreduce, "ring",
     "ring reduce-scatter + allgather, 2(p-1) rounds; commutative, large vectors; device buffers",
     commutativeDeviceSupports, allreduceRing, nullptr, true},
    {Collective::kAllreduce, "rabenseifner",
     "recursive-halving reduce-scatter + doubling allgather; commutative, large vectors; device "
     "buffers",
     commutativeDeviceSupports, allreduceRabenseifner, nullptr, true},
    {Collective::kAllreduce, "reduce_bcast",
     "rank-order chain reduce to 0 + binomial bcast; any op, reference", nullptr,
     allreduceReduceBcast},
    {Collective::kReduceScatter, "ring",
     "ring, p-1 rounds of one block; commutative; device buffers", commutativeDeviceSupports,
     reduceScatterRing, nullptr, true},
    {Collective::kReduceScatter, "reduce_scatterv",
     "reduce to 0 (tree or chain) + linear scatter; any op", nullptr,
     reduceScatterReduceScatterv},
    {Collective::kReduceScatterBlock, "ring",
     "ring, p-1 rounds of one block; commutative; device buffers", commutativeDeviceSupports,
     reduceScatterRing, nullptr, true},
    {Collective::kReduceScatterBlock, "reduce_scatterv",
     "reduce to 0 (tree or chain) + linear scatter; any op", nullptr,
     reduceScatterReduceScatterv},
    {Collective::kScan, "recursive_doubling", "log p exchanges of prefixes; any op", nullptr,
     scanRecursiveDoubling},
    {Collective::kScan, "linear", "chain 0 -> 1 -> ... -> p-1; any op", nullptr, scanLinear},
    {Collective::kExscan, "recursive_doubling", "log p exchanges of prefixes; any op", nullptr,
     scanRecursiveDoubling},
    {Collective::kExscan, "linear", "chain 0 -> 1 -> ... -> p-1; any op", nullptr, scanLinear},
    // ---- end reductions ----
    // ---- begin hierarchical (several nodes; coll/hierarchy.h) ----
    {Collective::kBarrier, "hierarchical",
     "node fan-in to leaders, dissemination among leaders, node release", hier::hierarchicalSupports,
     barrierHierarchical},
    {Collective::kBcast, "hierarchical",
     "binomial over nodes (root's node led by the root), then down each node's tree",
     hier::hierarchicalSupports, bcastHierarchical},
    {Collective::kReduce, "hierarchical",
     "reduce within nodes, then across nodes to the root; commutative ops",
     reduceHierarchicalSupports, reduceHierarchical},
    {Collective::kAllreduce, "hierarchical",
     "reduce within nodes, allreduce among leaders, bcast within nodes",
     allreduceHierarchicalSupports, allreduceHierarchical},
    {Collective::kAllgather, "hierarchical",
     "gather on node leaders, Bruck among leaders by node, bcast within nodes",
     hier::hierarchicalSupports, allgatherHierarchical},
    // ---- end hierarchical ----
};
}  // namespace

std::span<const Algorithm> algorithms() { return kAlgorithms; }

}  // namespace loom::coll
