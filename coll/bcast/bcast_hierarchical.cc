// Broadcast along the machine's hierarchy: first across nodes, then within
// each node (coll/hierarchy.h).
//
// Steps: one topology tree over the whole communicator. Its top level is a
// binomial tree over one representative per node, the root's node first
// and represented by the root itself (the other nodes by their leaders,
// their lowest ranks); below each representative hangs its node's tree
// (NUMA nodes, then packages, from core/locality.h). A rank receives the
// buffer once from its parent and then sends it to all its children at
// once, other nodes first: a representative starts its node's broadcast
// in the same round as its network sends, without waiting for them. The
// user's buffer is sent as (buf, count, type): no scratch.
//
// Cost: ceil(log2 N)*(alpha_n + n*beta_n) + ceil(log2 m)*(alpha_l +
// n*beta_l) for N nodes of up to m ranks: each byte crosses the network
// once per node and tree level, and a node's m ranks are served by local
// copies. The flat binomial tree needs as many levels but, with ranks not
// placed in node blocks, most of them cross the network; scatter_allgather
// moves ~2n but with (p - 1) network latencies. With alpha_n ~5 us, beta
// ~0.1 ns/B, m = 8, the hierarchical tree stays ahead of scatter_allgather
// up to ~440 KB at N = 2 and ~820 KB at N = 8; the rule stops at 256 KiB.
//
// Restrictions: some node must hold two ranks (hierarchicalSupports). Any
// root, any node sizes and rank placement: a tree level over parts of
// different sizes is simply a truncated binomial tree.
#include "coll/algorithms.h"
#include "coll/hierarchy.h"

namespace loom::coll {

Status bcastHierarchical(Schedule& s, const CollArgs& a) {
  Comm* c = s.comm();
  std::vector<int> all(c->size());
  for (int r = 0; r < c->size(); ++r) all[r] = r;
  const hier::Tree tr = hier::topoTree(c, commInfo(c), all, a.root, hier::kNode | hier::kInNode);
  hier::treeBcast(s, tr, a.recvbuf, a.count, a.type);
  return Status::ok();
}

}  // namespace loom::coll
