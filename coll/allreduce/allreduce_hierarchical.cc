// Allreduce in three steps for communicators spanning several nodes:
// reduce within each node to its leader, allreduce among the leaders,
// broadcast within each node from its leader (coll/hierarchy.h).
//
// Steps, with m ranks on a node, N nodes and the node's lowest rank as its
// leader:
//  1. Node-local reduce to the leader along the node's topology tree: the
//     ranks of one NUMA node combine first, then those of one package,
//     then the packages (core/locality.h). For a non-commutative op the
//     tree is the binomial tree over the node's ranks in rank order and
//     every fold keeps the lower ranks on the left, so the leader holds
//     x(first) op ... op x(last) of its node.
//  2. The leaders allreduce their node partials, in node order:
//     recursive doubling up to kLeadersSmall bytes or for a non-commutative
//     op (log N whole-vector steps, order kept); above, Rabenseifner when
//     N is a power of two or above 8, else the ring (the flat table's
//     reasoning, coll/selector.cc).
//  3. Each leader broadcasts the result down its node's tree. Every rank
//     thus gets the bits step 2 produced, which are the same on every
//     leader: results are bitwise identical everywhere.
//
// Cost, with alpha_l/beta_l inside a node, alpha_n/beta_n between nodes:
// 2*ceil(log2 m)*(alpha_l + n*beta_l) + ceil(log2 m)*n*gamma for steps 1
// and 3, plus step 2 on N ranks: small vectors log2 N*(alpha_n + n*beta_n
// + n*gamma). Against flat recursive doubling over all p = N*m ranks it
// adds log2 m cheap local latencies and saves the m concurrent messages
// per node and network step (m*n*beta_n through one NIC), so it wins for
// small and medium vectors. For large ones the two tree steps move the
// whole vector 2*log2 m times inside the node, where the flat ring or
// Rabenseifner move ~2n: the rule stops at 64 KiB (coll/selector.cc).
//
// Restrictions: some node must hold two ranks (else there is nothing to do
// locally: hierarchicalSupports). Non-commutative ops only when every node
// is one block of consecutive ranks (then node order is rank order); else
// declined, and the rules pick an order-keeping flat algorithm. Any N, any
// m, uneven nodes: the trees and the leaders' step handle any size.
#include "coll/algorithms.h"
#include "coll/hierarchy.h"
#include "coll/op.h"

namespace loom::coll {

namespace {
// Leaders' step: recursive doubling up to here. With alpha_n ~5 us,
// beta_n ~0.1 ns/B and gamma ~0.1 ns/B, its log N*(alpha_n + n*beta_n +
// n*gamma) meets Rabenseifner's 2 log N*alpha_n + 2n*beta_n + n*gamma
// near 100 KB at N = 2, 57 KB at N = 4 and 44 KB at N = 8.
constexpr size_t kLeadersSmall = 65536;
}  // namespace

bool allreduceHierarchicalSupports(const CollArgs& a) {
  if (!hier::hierarchicalSupports(a)) return false;
  return a.op->commutative() || hier::nodesContiguous(commInfo(a.comm));
}

Status allreduceHierarchical(Schedule& s, const CollArgs& a) {
  Comm* c = s.comm();
  const CommInfo& info = commInfo(c);
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  const bool commutative = op->commutative();
  char* const result = static_cast<char*>(a.recvbuf);
  const int leader = info.local[0];
  const void* in = a.inPlace ? a.recvbuf : a.sendbuf;

  // 1. Node-local reduce into the leader's result buffer.
  const hier::Tree down = hier::topoTree(c, info, info.local, leader, hier::kInNode);
  const hier::Tree up = commutative ? down : hier::topoTree(c, info, info.local, leader, 0);
  (void)hier::treeReduce(s, up, in, result, n, t, op, !commutative);

  // 2. The leaders.
  const int nodes = static_cast<int>(info.leaders.size());
  if (c->rank() == leader && nodes > 1) {
    const int me = info.myNode;
    if (!commutative || a.bytes <= kLeadersSmall)
      hier::groupAllreduceRecursiveDoubling(s, info.leaders, me, result, n, t, op);
    else if ((nodes & (nodes - 1)) == 0 || nodes > 8)
      hier::groupAllreduceRabenseifner(s, info.leaders, me, result, n, t, op);
    else
      hier::groupAllreduceRing(s, info.leaders, me, result, n, t, op);
  }

  // 3. Node-local broadcast of the leaders' result.
  hier::treeBcast(s, down, result, n, t);
  return Status::ok();
}

}  // namespace loom::coll
