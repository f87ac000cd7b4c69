// Barrier along the machine's hierarchy: node-local fan-in to the leader,
// dissemination among the node leaders, node-local release
// (coll/hierarchy.h).
//
// Steps:
//  1. Fan-in along the node's topology tree (NUMA nodes, then packages,
//     from core/locality.h): a rank waits for an empty message from each
//     child, then sends one to its parent. The leader (the node's lowest
//     rank) then knows its whole node has arrived.
//  2. The leaders run a dissemination barrier among themselves
//     (ceil(log2 N) rounds, coll/barrier/barrier_dissemination.cc).
//  3. Fan-out: each leader releases its node down the same tree.
//
// Cost: 2*depth*alpha_l + ceil(log2 N)*alpha_n, depth ~ceil(log2 m) for m
// ranks a node. Flat dissemination takes ceil(log2 p) rounds and nearly
// every one crosses the network somewhere, so it costs ~log2(N*m)*alpha_n:
// the hierarchy wins as soon as alpha_n > 2*alpha_l, i.e. always across
// real nodes; the rule applies whenever there are two nodes or more.
//
// Restrictions: some node must hold two ranks (hierarchicalSupports). Any
// N and node sizes: the trees and dissemination take any size.
#include "coll/algorithms.h"
#include "coll/hierarchy.h"

namespace loom::coll {

Status barrierHierarchical(Schedule& s, const CollArgs&) {
  Comm* c = s.comm();
  const CommInfo& info = commInfo(c);
  const hier::Tree tr = hier::topoTree(c, info, info.local, info.local[0], hier::kInNode);
  hier::treeFanIn(s, tr);
  if (c->rank() == info.local[0]) hier::groupDissemination(s, info.leaders, info.myNode);
  hier::treeFanOut(s, tr);
  return Status::ok();
}

}  // namespace loom::coll
