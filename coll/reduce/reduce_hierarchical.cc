// Reduce along the machine's hierarchy (commutative ops): within each node
// first, then across nodes to the root (coll/hierarchy.h).
//
// Steps: one topology tree over the whole communicator, rooted at the
// root. Inside a node, the ranks of one NUMA node fold first, then those
// of one package, then the packages, into the node's representative: the
// root on its own node, the lowest rank elsewhere. The representatives
// then reduce along a binomial tree over the nodes, the root's node at its
// top. Each rank folds its children in that order (one receive per round,
// folded at the start of the next) and sends its partial to its parent; a
// leaf sends its input as it is.
//
// Cost: ceil(log2 m)*(alpha_l + n*beta_l + n*gamma) inside a node of m
// ranks, plus ceil(log2 N)*(alpha_n + n*beta_n + n*gamma) across N nodes:
// each node sends one vector per tree level over the network, where a flat
// binomial tree over ranks not placed in node blocks sends from most
// ranks. As the flat table has only the binomial tree and the chain, the
// rule applies at any size (a reduce-scatter + gather variant would halve
// the bandwidth term for large vectors: not written yet).
//
// Restrictions: commutative ops (node partials are combined in tree order,
// not rank order); some node must hold two ranks (hierarchicalSupports).
// Any root, any node sizes and placement.
#include "coll/algorithms.h"
#include "coll/hierarchy.h"
#include "coll/op.h"

namespace loom::coll {

bool reduceHierarchicalSupports(const CollArgs& a) {
  return a.op->commutative() && hier::hierarchicalSupports(a);
}

Status reduceHierarchical(Schedule& s, const CollArgs& a) {
  Comm* c = s.comm();
  std::vector<int> all(c->size());
  for (int r = 0; r < c->size(); ++r) all[r] = r;
  const hier::Tree tr = hier::topoTree(c, commInfo(c), all, a.root, hier::kNode | hier::kInNode);
  const bool isRoot = c->rank() == a.root;
  const void* in = isRoot && a.inPlace ? a.recvbuf : a.sendbuf;
  (void)hier::treeReduce(s, tr, in, isRoot ? a.recvbuf : nullptr, a.count, a.type, a.op, false);
  return Status::ok();
}

}  // namespace loom::coll
