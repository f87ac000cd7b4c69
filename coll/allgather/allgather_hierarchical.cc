// Allgather along the machine's hierarchy: gather each node's blocks on its
// leader, exchange whole nodes among the leaders, broadcast the result
// within each node (coll/hierarchy.h).
//
// Terms: b is one block's packed size. Each leader keeps the node-ordered
// buffer G of p*b packed bytes: node 0's blocks, then node 1's, ...; within
// a node, its ranks in ascending comm rank. Node j's segment thus starts at
// b times the number of ranks on nodes before j, and a node's ranks need
// not be consecutive comm ranks (their blocks are placed by rank at the
// end).
// Steps:
//  1. Every rank sends its block to its node's leader (the lowest rank),
//     which receives them straight into G, all at once.
//  2. The leaders exchange node segments Bruck-style: in round k (d = 2^k
//     < N) leader i sends the segments of nodes i .. i+c-1 (mod N) to
//     leader i-d and receives those of nodes i+d .. i+d+c-1 from leader
//     i+d, c = min(d, N-d); each wrapping range is at most two contiguous
//     pieces of G, sent in place, so no rotation is needed at the end.
//  3. The leader unpacks G into the receive buffer, block by comm rank, and
//     broadcasts the whole buffer (p*recvcount elements) down its node's
//     topology tree (NUMA nodes, then packages: core/locality.h).
//
// Cost for N nodes of up to m ranks: alpha_l + (m-1)*b*beta_l (gather),
// ceil(log2 N)*alpha_n + (p-m)*b*beta_n (leaders), p*b to unpack, and
// ceil(log2 m)*(alpha_l + p*b*beta_l) for the broadcast. The flat ring
// needs p-1 steps each bound by a network link; Bruck and recursive
// doubling log2 p steps with m flows per node crossing the network. With
// alpha_n ~5 us, beta ~0.1 ns/B, N = 2 and m = 8 the hierarchy beats the
// ring up to ~10 KB blocks (its local broadcast copies the whole result
// log2 m times): the rule stops at 8 KiB blocks.
//
// Restrictions: allgather only (equal blocks); some node must hold two
// ranks (hierarchicalSupports). Any N, uneven nodes, any placement.
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/hierarchy.h"
#include "coll/move_util.h"

namespace loom::coll {

Status allgatherHierarchical(Schedule& s, const CollArgs& a) {
  Comm* c = s.comm();
  const CommInfo& info = commInfo(c);
  const int p = c->size(), me = c->rank(), leader = info.local[0];
  const move::Block mine =
      a.inPlace ? move::equalBlock(a.recvbuf, a.recvCount, a.recvType, me)
                : move::Block{static_cast<char*>(const_cast<void*>(a.sendbuf)), a.count, a.type};
  const hier::Tree tr = hier::topoTree(c, info, info.local, leader, hier::kInNode);
  const int64_t total = int64_t(p) * a.recvCount;

  if (me != leader) {
    move::sendBlock(s, mine, leader);
    s.endRound();
    hier::treeBcast(s, tr, a.recvbuf, total, a.recvType);
    return Status::ok();
  }

  // G's layout: nodeStart[j] blocks precede node j; rank r's block is
  // block slot[r].
  const int nodes = info.nodes;
  const size_t b = a.recvType->packedSize(a.recvCount);
  std::vector<int64_t> nodeStart(nodes + 1, 0), slot(p);
  for (int r = 0; r < p; ++r) ++nodeStart[info.nodeOf[r] + 1];
  for (int j = 0; j < nodes; ++j) nodeStart[j + 1] += nodeStart[j];
  {
    std::vector<int64_t> next(nodeStart.begin(), nodeStart.end() - 1);
    for (int r = 0; r < p; ++r) slot[r] = next[info.nodeOf[r]]++;
  }
  char* g = static_cast<char*>(s.scratch(size_t(p) * b));

  // 1. Gather the node's blocks.
  char* myPlace = g + slot[me] * b;
  s.local([mine, myPlace] { move::packBlock(mine, myPlace); });
  for (int r : info.local)
    if (r != me) move::recvBytes(s, g + slot[r] * b, b, r);
  s.endRound();

  // 2. Bruck among the leaders, on node segments.
  const int i = info.myNode;
  // Calls fn(offset, bytes) for the non-empty pieces of nodes from ..
  // from+cnt-1 (mod N) in G.
  auto pieces = [&](int from, int cnt, auto&& fn) {
    const int end = from + cnt;
    const int64_t lo = nodeStart[from], hi = nodeStart[std::min(end, nodes)];
    if (hi > lo) fn(lo * b, (hi - lo) * b);
    if (end > nodes && nodeStart[end - nodes] > 0) fn(0, nodeStart[end - nodes] * b);
  };
  for (int d = 1; d < nodes; d *= 2) {
    const int cnt = std::min(d, nodes - d);
    const int to = info.leaders[(i - d + nodes) % nodes], from = info.leaders[(i + d) % nodes];
    pieces(i, cnt, [&](size_t off, size_t n) { move::sendBytes(s, g + off, n, to); });
    pieces((i + d) % nodes, cnt,
           [&](size_t off, size_t n) { move::recvBytes(s, g + off, n, from); });
    s.endRound();
  }

  // 3. Blocks into place by comm rank, then down the node's tree.
  void* rb = a.recvbuf;
  const int64_t rc = a.recvCount;
  Datatype* rt = a.recvType;
  s.local([=] {
    for (int r = 0; r < p; ++r) move::unpackBlock(move::equalBlock(rb, rc, rt, r), g + slot[r] * b);
  });
  hier::treeBcast(s, tr, a.recvbuf, total, a.recvType);
  return Status::ok();
}

}  // namespace loom::coll
