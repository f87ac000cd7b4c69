// What the hierarchical algorithms (coll/*/*_hierarchical.cc) share: trees
// that follow the machine (nodes, then packages, then NUMA nodes), and
// building blocks that run over a list of comm ranks rather than over the
// whole communicator (the node leaders' step).
//
// Terms. A *group* is a list of comm ranks taking part in one step (the
// node leaders, say); positions in the list, not comm ranks, define the
// step's pattern. A *tree* is one rank's view of a spanning tree: its
// parent and its children, children listed in the order a reduction folds
// them (closest and smallest subtree first; a broadcast sends in reverse).
//
// The topology tree (topoTree) over a set of ranks: split them by node,
// and each node by package, and each package by NUMA node; at every level
// the part holding the root is led by the root and every other part by
// its lowest rank; a binomial tree joins the heads of one level, and a
// part's own tree hangs below its head. So a reduction combines the ranks
// of one NUMA node first, then of one package, then of one node, and only
// then crosses the network, which sends one message per node and level.
// Package and NUMA indexes come from core/locality.h (published by every
// rank at MPI_Init); a level whose index is unknown (-1) for a member is
// skipped.
#pragma once

#include <cstdint>
#include <vector>

#include "coll/comm_info.h"
#include "coll/schedule.h"
#include "coll/selector.h"

namespace loom::coll {
class Op;
}

namespace loom::coll::hier {

// Which levels of the machine a topology tree follows.
enum Levels : unsigned { kNode = 1, kPackage = 2, kNuma = 4, kInNode = kPackage | kNuma };

struct Tree {
  int parent = -1;            // comm rank; -1 at the root
  std::vector<int> children;  // comm ranks, reduction order
};

// My place in a binomial tree over `group` rooted at group[0]: position v
// has children v + 2^k for 2^k below v's lowest set bit, so the subtree of
// v covers positions [v, v + lowbit(v)) and a fold in children order keeps
// position order. `me` is my position.
Tree binomialTree(const std::vector<int>& group, int me);

// My place in the topology tree over `members` (ascending comm ranks,
// `root` among them), following `levels`. With no levels (or none known)
// it is the binomial tree over [root, the others ascending], which keeps
// rank order when root is the lowest member (non-commutative reductions).
Tree topoTree(Comm* c, const CommInfo& info, const std::vector<int>& members, int root,
              unsigned levels);

// Reduction along a tree of `n` elements of `t`. `in` is this rank's
// contribution; `work` a buffer laid out like it that this rank may
// overwrite (nullptr: scratch when needed). A leaf sends `in` as it is; an
// inner rank folds its children in order and sends the partial to its
// parent. At the tree's root the result ends in `work` (or, with no
// `work`, in a buffer returned, possibly `in` itself when it has no
// children); elsewhere nullptr is returned. `ordered`: fold as
// partial = partial op child (rank order, for non-commutative ops along
// a binomialTree); otherwise child op partial.
char* treeReduce(Schedule& s, const Tree& tr, const void* in, void* work, int64_t n, Datatype* t,
                 Op* op, bool ordered);

// Broadcast along a tree: receive `buf` from the parent, then send it to
// every child at once (farthest first).
void treeBcast(Schedule& s, const Tree& tr, void* buf, int64_t n, Datatype* t);

// Empty messages up the tree (a rank reports when its whole subtree has
// arrived) and down it (release).
void treeFanIn(Schedule& s, const Tree& tr);
void treeFanOut(Schedule& s, const Tree& tr);

// Allreduce of `acc` (n elements of t, in place) among `group`, `me` my
// position; results bitwise identical on every member.
//  * recursive doubling (any op, keeps group order): ceil-log steps of the
//    whole vector, fold in/out when the size is not a power of two;
//  * ring reduce-scatter + allgather (commutative): 2(N-1) steps of n/N;
//  * Rabenseifner, halving reduce-scatter + doubling allgather
//    (commutative): 2 log N steps, fold in/out when not a power of two.
// The same algorithms as coll/allreduce/allreduce_{recursive_doubling,
// ring,rabenseifner}.cc, on positions in a list instead of comm ranks.
void groupAllreduceRecursiveDoubling(Schedule& s, const std::vector<int>& group, int me, char* acc,
                                     int64_t n, Datatype* t, Op* op);
void groupAllreduceRing(Schedule& s, const std::vector<int>& group, int me, char* acc, int64_t n,
                        Datatype* t, Op* op);
void groupAllreduceRabenseifner(Schedule& s, const std::vector<int>& group, int me, char* acc,
                                int64_t n, Datatype* t, Op* op);

// Dissemination barrier among `group` (ceil(log2 N) rounds).
void groupDissemination(Schedule& s, const std::vector<int>& group, int me);

// Used by supports(): some node holds at least two of the communicator's
// ranks (with one rank per node there is no node-local step, and the flat
// algorithms move the same messages with their own size-tuned choices).
bool hierarchicalSupports(const CollArgs& a);
// Every node's ranks form one block of consecutive comm ranks, so node
// partials combined in node order keep rank order.
bool nodesContiguous(const CommInfo& info);

}  // namespace loom::coll::hier
