#include "coll/hierarchy.h"

#include <utility>

#include "coll/move_util.h"
#include "coll/op.h"
#include "core/locality.h"

namespace loom::coll::hier {

namespace {

// The part key of comm rank r at `level` (0 node, 1 package, 2 NUMA
// node); -1 when unknown.
int keyOf(Comm* c, const CommInfo& info, int r, int level) {
  if (level == 0) return info.nodeOf[r];
  const auto& loc = jobLocality();
  const int w = c->worldRank(r);
  if (w < 0 || w >= static_cast<int>(loc.size())) return -1;
  return level == 1 ? loc[w].package : loc[w].numaNode;
}

// My edges in the topology tree over `members` (members[0] heads them),
// from `level` down. Descends only into my own part, so building costs
// O(members) at the top level and O(my part) below.
void place(Comm* c, const CommInfo& info, const std::vector<int>& members, int me, unsigned levels,
           int level, Tree& t) {
  for (; level < 3; ++level) {
    if (!(levels & (1u << level))) continue;
    std::vector<int> keys(members.size());
    int maxKey = -1;
    bool known = true;
    for (size_t i = 0; i < members.size() && known; ++i) {
      keys[i] = keyOf(c, info, members[i], level);
      known = keys[i] >= 0;
      if (keys[i] > maxKey) maxKey = keys[i];
    }
    if (!known) continue;
    // Parts in order of first appearance (members[0]'s part first), each
    // headed by its first member.
    std::vector<int> partOf(maxKey + 1, -1), heads;
    int myKey = -1;
    for (size_t i = 0; i < members.size(); ++i) {
      if (partOf[keys[i]] < 0) {
        partOf[keys[i]] = static_cast<int>(heads.size());
        heads.push_back(members[i]);
      }
      if (members[i] == me) myKey = keys[i];
    }
    if (heads.size() == 1) continue;
    std::vector<int> mine;
    for (size_t i = 0; i < members.size(); ++i)
      if (keys[i] == myKey) mine.push_back(members[i]);
    place(c, info, mine, me, levels, level + 1, t);  // in-part edges first
    if (mine[0] == me) {                             // I head my part
      Tree up = binomialTree(heads, partOf[myKey]);
      t.parent = up.parent;
      t.children.insert(t.children.end(), up.children.begin(), up.children.end());
    }
    return;
  }
  int pos = 0;
  while (members[pos] != me) ++pos;
  t = binomialTree(members, pos);
}

}  // namespace

Tree binomialTree(const std::vector<int>& group, int me) {
  Tree t;
  const int m = static_cast<int>(group.size());
  int mask = 1;
  for (; mask < m && !(me & mask); mask <<= 1)
    if (me + mask < m) t.children.push_back(group[me + mask]);
  if (me != 0) t.parent = group[me - mask];  // mask is me's lowest set bit
  return t;
}

Tree topoTree(Comm* c, const CommInfo& info, const std::vector<int>& members, int root,
              unsigned levels) {
  std::vector<int> list;
  list.reserve(members.size());
  list.push_back(root);
  for (int r : members)
    if (r != root) list.push_back(r);
  Tree t;
  place(c, info, list, c->rank(), levels, 0, t);
  return t;
}

char* treeReduce(Schedule& s, const Tree& tr, const void* in, void* work, int64_t n, Datatype* t,
                 Op* op, bool ordered) {
  char* src = const_cast<char*>(static_cast<const char*>(in));
  char* w = static_cast<char*>(work);
  const bool root = tr.parent < 0;
  if (tr.children.empty()) {
    if (!root) {
      s.send(src, n, t, tr.parent);
      s.endRound();
      return nullptr;
    }
    if (!w || w == src) return w ? w : src;
    s.local([=] { copyLike(src, w, n, t); });
    return w;
  }
  char* acc = w ? w : scratchLike(s, n, t);
  if (acc != src) s.local([=] { copyLike(src, acc, n, t); });
  char* cur = acc;                     // the partial so far
  char* other = scratchLike(s, n, t);  // the next child's partial
  for (int child : tr.children) {
    s.recv(other, n, t, child);
    s.endRound();
    if (ordered) {
      // other = cur op other: the child's ranks follow mine.
      s.local([=] { (void)reduceLocal(cur, other, n, t, op); });
      std::swap(cur, other);
    } else {
      s.local([=] { (void)reduceLocal(other, cur, n, t, op); });
    }
  }
  if (!root) {
    s.send(cur, n, t, tr.parent);
    s.endRound();
    return nullptr;
  }
  if (cur != acc) s.local([=] { copyLike(cur, acc, n, t); });
  return acc;
}

void treeBcast(Schedule& s, const Tree& tr, void* buf, int64_t n, Datatype* t) {
  if (tr.parent >= 0) {
    s.recv(buf, n, t, tr.parent);
    s.endRound();
  }
  for (auto it = tr.children.rbegin(); it != tr.children.rend(); ++it) s.send(buf, n, t, *it);
  s.endRound();
}

void treeFanIn(Schedule& s, const Tree& tr) {
  for (int child : tr.children) s.recv(nullptr, 0, move::byteType(), child);
  s.endRound();
  if (tr.parent >= 0) {
    s.send(nullptr, 0, move::byteType(), tr.parent);
    s.endRound();
  }
}

void treeFanOut(Schedule& s, const Tree& tr) {
  if (tr.parent >= 0) {
    s.recv(nullptr, 0, move::byteType(), tr.parent);
    s.endRound();
  }
  for (auto it = tr.children.rbegin(); it != tr.children.rend(); ++it)
    s.send(nullptr, 0, move::byteType(), *it);
  s.endRound();
}

// As coll/allreduce/allreduce_recursive_doubling.cc, on group positions.
void groupAllreduceRecursiveDoubling(Schedule& s, const std::vector<int>& group, int me, char* acc,
                                     int64_t n, Datatype* t, Op* op) {
  const int p = static_cast<int>(group.size()), r = me;
  if (p == 1) return;
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  char* cur = acc;
  char* tmp = scratchLike(s, n, t);
  int v;  // number among the survivors, -1 if folded in
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      s.send(cur, n, t, group[r + 1]);
      s.endRound();
      v = -1;
    } else {
      s.recv(tmp, n, t, group[r - 1]);
      s.endRound();
      s.local([=] { (void)reduceLocal(tmp, cur, n, t, op); });  // x(r-1) op x(r)
      v = r / 2;
    }
  } else {
    v = r - rem;
  }
  if (v >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int pv = v ^ mask;
      const int peer = group[pv < rem ? pv * 2 + 1 : pv + rem];
      s.send(cur, n, t, peer);
      s.recv(tmp, n, t, peer);
      s.endRound();
      if (pv < v) {
        s.local([=] { (void)reduceLocal(tmp, cur, n, t, op); });  // cur = peer op cur
      } else {
        s.local([=] { (void)reduceLocal(cur, tmp, n, t, op); });  // tmp = cur op peer
        std::swap(cur, tmp);
      }
    }
    if (cur != acc) s.local([=] { copyLike(cur, acc, n, t); });
  }
  if (r < 2 * rem) {
    if (r % 2 == 1)
      s.send(acc, n, t, group[r - 1]);
    else
      s.recv(acc, n, t, group[r + 1]);
    s.endRound();
  }
}

// As coll/allreduce/allreduce_ring.cc, on group positions.
void groupAllreduceRing(Schedule& s, const std::vector<int>& group, int me, char* acc, int64_t n,
                        Datatype* t, Op* op) {
  const int p = static_cast<int>(group.size()), r = me;
  if (p == 1) return;
  const int right = group[(r + 1) % p], left = group[(r - 1 + p) % p];
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  char* tmp = scratchLike(s, blockSize(n, p, 0), t);  // block 0 is the largest
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r - k), rb = mod(r - k - 1);
    s.send(elemAt(acc, blockOffset(n, p, sb), t), blockSize(n, p, sb), t, right);
    s.recv(tmp, blockSize(n, p, rb), t, left);
    s.endRound();
    char* dst = elemAt(acc, blockOffset(n, p, rb), t);
    const int64_t cnt = blockSize(n, p, rb);
    s.local([=] { (void)reduceLocal(tmp, dst, cnt, t, op); });
  }
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r + 1 - k), rb = mod(r - k);
    s.send(elemAt(acc, blockOffset(n, p, sb), t), blockSize(n, p, sb), t, right);
    s.recv(elemAt(acc, blockOffset(n, p, rb), t), blockSize(n, p, rb), t, left);
    s.endRound();
  }
}

// As coll/allreduce/allreduce_rabenseifner.cc, on group positions.
void groupAllreduceRabenseifner(Schedule& s, const std::vector<int>& group, int me, char* acc,
                                int64_t n, Datatype* t, Op* op) {
  const int p = static_cast<int>(group.size()), r = me;
  if (p == 1) return;
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  char* tmp = scratchLike(s, n, t);
  int v;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      s.send(acc, n, t, group[r + 1]);
      s.endRound();
      v = -1;
    } else {
      s.recv(tmp, n, t, group[r - 1]);
      s.endRound();
      s.local([=] { (void)reduceLocal(tmp, acc, n, t, op); });
      v = r / 2;
    }
  } else {
    v = r - rem;
  }
  if (v >= 0) {
    auto peerOf = [&group, rem](int pv) { return group[pv < rem ? pv * 2 + 1 : pv + rem]; };
    auto off = [n, pof2](int b) { return blockOffset(n, pof2, b); };
    struct Step {
      int peer, keepLo, keepHi, giveLo, giveHi;
    };
    std::vector<Step> steps;
    int lo = 0, hi = pof2;
    for (int mask = pof2 / 2; mask >= 1; mask /= 2) {
      const int mid = (lo + hi) / 2;
      Step st{peerOf(v ^ mask), lo, mid, mid, hi};
      if (v & mask) st = Step{st.peer, mid, hi, lo, mid};
      s.send(elemAt(acc, off(st.giveLo), t), off(st.giveHi) - off(st.giveLo), t, st.peer);
      char* in = elemAt(tmp, off(st.keepLo), t);
      char* io = elemAt(acc, off(st.keepLo), t);
      const int64_t cnt = off(st.keepHi) - off(st.keepLo);
      s.recv(in, cnt, t, st.peer);
      s.endRound();
      s.local([=] { (void)reduceLocal(in, io, cnt, t, op); });
      steps.push_back(st);
      lo = st.keepLo;
      hi = st.keepHi;
    }
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      s.send(elemAt(acc, off(it->keepLo), t), off(it->keepHi) - off(it->keepLo), t, it->peer);
      s.recv(elemAt(acc, off(it->giveLo), t), off(it->giveHi) - off(it->giveLo), t, it->peer);
      s.endRound();
    }
  }
  if (r < 2 * rem) {
    if (r % 2 == 1)
      s.send(acc, n, t, group[r - 1]);
    else
      s.recv(acc, n, t, group[r + 1]);
    s.endRound();
  }
}

void groupDissemination(Schedule& s, const std::vector<int>& group, int me) {
  const int p = static_cast<int>(group.size());
  for (int dist = 1; dist < p; dist *= 2) {
    s.send(nullptr, 0, move::byteType(), group[(me + dist) % p]);
    s.recv(nullptr, 0, move::byteType(), group[(me - dist + p) % p]);
    s.endRound();
  }
}

bool hierarchicalSupports(const CollArgs& a) {
  return commInfo(a.comm).maxPerNode >= 2;
}

bool nodesContiguous(const CommInfo& info) {
  for (size_t r = 1; r < info.nodeOf.size(); ++r) {
    const int d = info.nodeOf[r] - info.nodeOf[r - 1];
    if (d != 0 && d != 1) return false;
  }
  return true;
}

}  // namespace loom::coll::hier
