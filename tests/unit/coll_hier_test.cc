// The hierarchical algorithms (coll/*/*_hierarchical.cc, coll/hierarchy.h)
// through the single-process simulator, with synthetic locality tables
// (core/locality.h) defining the nodes, packages and NUMA nodes of the
// simulated world ranks 0..p-1: even and uneven nodes ({2,2,1}, {4,4},
// {3,3,1}, ...), non-contiguous nodes (node = rank % 3), one rank per
// node, everything on one node, packages interleaved or unknown. For
// p = 1..16, several sizes, roots, ops (commutative and a non-commutative
// user op where supported), MPI_IN_PLACE and a non-contiguous type, each
// result is compared with a reference; the barrier is checked by tracking
// which arrivals every rank has heard of. The topology trees are checked
// to be spanning trees that combine a package (a NUMA node) before
// leaving it, and the rules to pick these algorithms on several nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/comm_info.h"
#include "coll/hierarchy.h"
#include "coll/op.h"
#include "coll/selector.h"
#include "coll_sim.h"
#include "core/locality.h"

namespace {

using loom::Datatype;
using loom::Locality;
using loom::coll::Algorithm;
using loom::coll::CollArgs;
using loom::coll::Collective;
using loom::coll::Op;
using loom::coll::Schedule;
using Bytes = std::vector<std::byte>;

Datatype* dt(MPI_Datatype h) {
  return loom::predefinedDatatype(reinterpret_cast<uintptr_t>(h));
}
Op* predefOp(MPI_Op h) {
  return loom::coll::predefinedOp(reinterpret_cast<uintptr_t>(h));
}

// Two ints with a one-int hole between them: size 8, extent 12.
Datatype* vecType() {
  static Datatype* t = [] {
    Datatype* v = nullptr;
    EXPECT_TRUE(loom::typeVector(2, 1, 2, dt(MPI_INT), &v).isOk());
    v->commit();
    return v;
  }();
  return t;
}

// Sets jobLocality() for one case and restores it afterwards, so the other
// tests of this binary still see one node.
class LocalityScope {
 public:
  explicit LocalityScope(std::vector<Locality> loc) : saved_(loom::jobLocality()) {
    loom::jobLocality() = std::move(loc);
  }
  ~LocalityScope() { loom::jobLocality() = saved_; }

 private:
  std::vector<Locality> saved_;
};

// A machine layout: the locality of rank r of p.
struct Layout {
  const char* name;
  std::function<Locality(int r, int p)> at;
};

// Nodes of `sizes[0]`, `sizes[1]`, ... consecutive ranks, cycling.
int cyclicNode(int r, std::vector<int> sizes) {
  int node = 0, at = 0;
  for (;; ++node) {
    int n = sizes[node % sizes.size()];
    if (r < at + n) return node;
    at += n;
  }
}

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> v = {
      // {2,2,...,1}: 5 ranks are {2,2,1}; packages differ inside a node.
      {"blocks2",
       [](int r, int) {
         return Locality{r / 2, r % 2, r % 2, r};
       }},
      // {3,3,1} at 7 ranks; the node's middle rank on the other package.
      {"blocks3",
       [](int r, int) {
         return Locality{r / 3, r % 3 == 1, r % 3 == 1, r};
       }},
      // {4,4} at 8: two packages of two NUMA nodes... of one rank each.
      {"blocks4",
       [](int r, int) {
         return Locality{r / 4, (r / 2) % 2, r % 4, r};
       }},
      // Uneven: 3, 1, 2, 4, 3, 1, ...; packages interleaved.
      {"uneven",
       [](int r, int) {
         return Locality{cyclicNode(r, {3, 1, 2, 4}), r % 2, r % 2, r};
       }},
      // Non-contiguous nodes; two packages, two NUMA nodes each.
      {"mod3",
       [](int r, int) {
         return Locality{r % 3, (r / 3) % 2, (r / 3) % 4, r};
       }},
      // Node keys descending and scattered.
      {"scrambled",
       [](int r, int p) {
         return Locality{((r * 5 + 3) % p) % 4 + 10, -1, -1, r};
       }},
      {"one_per_node",
       [](int r, int) {
         return Locality{r, 0, 0, r};
       }},
      // One node, four packages with interleaved ranks, NUMA unknown.
      {"one_node",
       [](int r, int) {
         return Locality{0, r % 4, -1, r};
       }},
      // Packages unknown on one rank only: that node skips the level.
      {"partly_unknown",
       [](int r, int) {
         return Locality{r / 5, r == 2 ? -1 : r % 3, r % 3, r};
       }},
  };
  return v;
}

std::vector<Locality> localityOf(const Layout& l, int p) {
  std::vector<Locality> loc(p);
  for (int r = 0; r < p; ++r) loc[r] = l.at(r, p);
  return loc;
}

// Every node's ranks are consecutive (what non-commutative allreduce needs).
bool contiguous(const std::vector<Locality>& loc) {
  std::set<int> closed;
  for (size_t r = 0; r < loc.size(); ++r) {
    if (r > 0 && loc[r].nodeId != loc[r - 1].nodeId) closed.insert(loc[r - 1].nodeId);
    if (closed.count(loc[r].nodeId)) return false;
  }
  return true;
}

const Algorithm& hierarchical(Collective c) {
  for (const Algorithm& a : loom::coll::algorithms())
    if (a.coll == c && std::string(a.name) == "hierarchical") return a;
  ADD_FAILURE() << "no hierarchical " << loom::coll::collectiveName(c);
  static const Algorithm none{};
  return none;
}

// Builds every rank's schedule from args[r] and simulates them.
std::string run(const Algorithm& alg, loom::sim::SimComms& comms, std::vector<CollArgs>& args) {
  std::vector<std::unique_ptr<Schedule>> s;
  for (int r = 0; r < comms.size(); ++r) {
    args[r].coll = alg.coll;
    args[r].comm = comms[r];
    s.push_back(std::make_unique<Schedule>(comms[r], 0));
    loom::Status st = alg.build(*s.back(), args[r]);
    if (!st.isOk()) return "build: " + st.message();
  }
  return loom::sim::simulate(s);
}

// ---- reductions: int64 SUM, or 2x2 matrices mod 2^32 (non-commutative) --

void matmul(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<uint32_t*>(in);
  auto* b = static_cast<uint32_t*>(inout);
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    uint32_t c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    std::memcpy(b, c, sizeof c);
  }
}

struct Values {
  bool matrix;
  Datatype* type;
  Op* op;
  size_t elem() const { return matrix ? 16 : 8; }
  void value(int r, int64_t i, char* out) const {
    if (matrix) {
      uint32_t m[4] = {uint32_t(r + 2), uint32_t(i % 5 + 1), uint32_t(r % 3), 1};
      std::memcpy(out, m, 16);
    } else {
      int64_t v = int64_t(r) * 1000003 + i * 7 + 1;
      std::memcpy(out, &v, 8);
    }
  }
  std::vector<char> fill(int r, int64_t n) const {
    std::vector<char> b(std::max<int64_t>(n, 1) * elem());
    for (int64_t i = 0; i < n; ++i) value(r, i, b.data() + i * elem());
    return b;
  }
  // x(0) op ... op x(p-1) for element i.
  std::vector<char> expect(int p, int64_t i) const {
    std::vector<char> acc(elem()), one(elem());
    value(p - 1, i, acc.data());
    for (int r = p - 2; r >= 0; --r) {
      value(r, i, one.data());
      if (matrix) {
        int len = 1;
        matmul(one.data(), acc.data(), &len, nullptr);
      } else {
        int64_t a, b;
        std::memcpy(&a, acc.data(), 8);
        std::memcpy(&b, one.data(), 8);
        a += b;
        std::memcpy(acc.data(), &a, 8);
      }
    }
    return acc;
  }
};

// Allreduce (root < 0) or reduce to `root`; "" when right.
std::string reductionCase(const Algorithm& alg, const Values& v, int p, int64_t n, int root,
                          bool inPlace) {
  loom::sim::SimComms comms(p);
  std::vector<std::vector<char>> send(p), recv(p);
  std::vector<CollArgs> args(p);
  for (int r = 0; r < p; ++r) {
    send[r] = v.fill(r, n);
    const bool ip = inPlace && (root < 0 || r == root);
    recv[r] = ip ? send[r] : std::vector<char>(send[r].size(), char(0x5a));
    args[r].inPlace = ip;
    args[r].recvbuf = root < 0 || r == root ? recv[r].data() : nullptr;
    args[r].sendbuf = ip ? recv[r].data() : send[r].data();
    args[r].count = n;
    args[r].type = v.type;
    args[r].op = v.op;
    args[r].root = root;
    args[r].bytes = size_t(n) * v.elem();
  }
  std::string err = run(alg, comms, args);
  if (!err.empty()) return err;
  std::vector<std::vector<char>> expect(n);
  for (int64_t i = 0; i < n; ++i) expect[i] = v.expect(p, i);
  for (int r = 0; r < p; ++r) {
    if (root >= 0 && r != root) continue;
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(expect[i].data(), recv[r].data() + i * v.elem(), v.elem()) != 0)
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + " wrong";
  }
  return "";
}

std::string where(const Layout& l, int p, int64_t n, int root, bool inPlace) {
  return std::string(l.name) + " p=" + std::to_string(p) + " n=" + std::to_string(n) +
         " root=" + std::to_string(root) + (inPlace ? " in-place" : "");
}

}  // namespace

TEST(CollHier, AllreduceEveryLayout) {
  const Algorithm& alg = hierarchical(Collective::kAllreduce);
  Values sum{false, dt(MPI_INT64_T), predefOp(MPI_SUM)};
  for (const Layout& l : layouts())
    for (int p = 1; p <= 16; ++p) {
      LocalityScope scope(localityOf(l, p));
      // 8200 int64 (65600 B) is above the leaders' small-vector limit:
      // Rabenseifner or the ring among the leaders.
      for (int64_t n : {0, 1, 7, 1000, 8200})
        for (bool inPlace : {false, true})
          ASSERT_EQ(reductionCase(alg, sum, p, n, -1, inPlace), "") << where(l, p, n, -1, inPlace);
    }
}

TEST(CollHier, AllreduceNonCommutativeKeepsRankOrder) {
  const Algorithm& alg = hierarchical(Collective::kAllreduce);
  Datatype* mat = nullptr;
  ASSERT_TRUE(loom::typeContiguous(4, dt(MPI_UINT32_T), &mat).isOk());
  mat->commit();
  Op* user = Op::create(matmul, nullptr, false);
  Values v{true, mat, user};
  int ran = 0, declined = 0;
  for (const Layout& l : layouts())
    for (int p = 1; p <= 16; ++p) {
      std::vector<Locality> loc = localityOf(l, p);
      LocalityScope scope(loc);
      loom::sim::SimComms comms(p);
      CollArgs a;
      a.coll = Collective::kAllreduce;
      a.comm = comms[0];
      a.op = user;
      const auto& info = loom::coll::commInfo(comms[0]);
      // Declined when some node's ranks are not consecutive (and when no
      // node has two ranks).
      EXPECT_EQ(alg.supports(a), contiguous(loc) && info.maxPerNode >= 2) << l.name << " p=" << p;
      if (!contiguous(loc)) {
        ++declined;
        continue;
      }
      for (int64_t n : {1, 7, 5000})  // 80000 B: above the leaders' small limit
        for (bool inPlace : {false, true}) {
          ASSERT_EQ(reductionCase(alg, v, p, n, -1, inPlace), "") << where(l, p, n, -1, inPlace);
          ++ran;
        }
    }
  EXPECT_GT(ran, 100);
  EXPECT_GT(declined, 10);
  user->release();
  mat->release();
}

// Random doubles, where the order of additions shows in the last bits:
// every rank must end with the same bits.
TEST(CollHier, AllreduceBitwiseIdentical) {
  const Algorithm& alg = hierarchical(Collective::kAllreduce);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  for (const Layout& l : layouts())
    for (int p : {3, 5, 7, 8, 12, 13, 16})
      for (int64_t n : {257, 9000}) {
        LocalityScope scope(localityOf(l, p));
        loom::sim::SimComms comms(p);
        std::vector<std::vector<double>> in(p, std::vector<double>(n)), out = in;
        std::vector<CollArgs> args(p);
        for (int r = 0; r < p; ++r) {
          for (auto& x : in[r]) x = u(rng) * std::pow(10.0, double(rng() % 12) - 6);
          args[r].sendbuf = in[r].data();
          args[r].recvbuf = out[r].data();
          args[r].count = n;
          args[r].type = dt(MPI_DOUBLE);
          args[r].op = predefOp(MPI_SUM);
          args[r].bytes = n * 8;
        }
        ASSERT_EQ(run(alg, comms, args), "") << l.name << " p=" << p;
        for (int r = 1; r < p; ++r)
          ASSERT_EQ(std::memcmp(out[0].data(), out[r].data(), n * sizeof(double)), 0)
              << l.name << " p=" << p << " n=" << n << " rank " << r;
        double e = 0;
        for (int r = 0; r < p; ++r) e += in[r][0];
        EXPECT_NEAR(out[0][0], e, 1e-6 * (std::abs(e) + 1e6)) << l.name << " p=" << p;
      }
}

TEST(CollHier, ReduceEveryLayoutAndRoot) {
  const Algorithm& alg = hierarchical(Collective::kReduce);
  Values sum{false, dt(MPI_INT64_T), predefOp(MPI_SUM)};
  for (const Layout& l : layouts())
    for (int p = 1; p <= 16; ++p) {
      LocalityScope scope(localityOf(l, p));
      std::set<int> roots = {0, p / 2, p - 1, (p * 2) / 3};
      for (int root : roots)
        for (int64_t n : {0, 1, 7, 1000})
          for (bool inPlace : {false, true})
            ASSERT_EQ(reductionCase(alg, sum, p, n, root, inPlace), "")
                << where(l, p, n, root, inPlace);
    }
  // Non-commutative ops are declined.
  Op* user = Op::create(matmul, nullptr, false);
  LocalityScope scope(localityOf(layouts()[0], 4));
  loom::sim::SimComms comms(4);
  CollArgs a;
  a.coll = Collective::kReduce;
  a.comm = comms[0];
  a.op = user;
  EXPECT_FALSE(alg.supports(a));
  a.op = predefOp(MPI_SUM);
  EXPECT_TRUE(alg.supports(a));
  user->release();
}

TEST(CollHier, BcastEveryLayoutAndRoot) {
  const Algorithm& alg = hierarchical(Collective::kBcast);
  for (const Layout& l : layouts())
    for (int p = 1; p <= 16; ++p) {
      LocalityScope scope(localityOf(l, p));
      std::set<int> roots = {0, p / 2, p - 1, (p * 2) / 3};
      for (int root : roots)
        for (int64_t c : {0, 1, 7, 1000})
          for (Datatype* t : {dt(MPI_INT), vecType()}) {
            loom::sim::SimComms comms(p);
            const size_t span = size_t(c) * t->extent();
            std::vector<Bytes> buf(p, Bytes(span, std::byte{0xEE}));
            Bytes expect(span, std::byte{0xEE});
            for (size_t i = 0; i < span; ++i)
              if (t == dt(MPI_INT) || (i / 4) % 3 != 1)
                expect[i] = std::byte((i * 7 + root) & 0xff);
            buf[root] = expect;
            std::vector<CollArgs> args(p);
            for (int r = 0; r < p; ++r) {
              args[r].recvbuf = buf[r].data();
              args[r].count = c;
              args[r].type = t;
              args[r].root = root;
            }
            ASSERT_EQ(run(alg, comms, args), "") << where(l, p, c, root, false);
            for (int r = 0; r < p; ++r)
              ASSERT_TRUE(buf[r] == expect)
                  << where(l, p, c, root, false) << " " << t->name() << " rank " << r;
          }
    }
}

TEST(CollHier, AllgatherEveryLayout) {
  const Algorithm& alg = hierarchical(Collective::kAllgather);
  for (const Layout& l : layouts())
    for (int p = 1; p <= 16; ++p) {
      LocalityScope scope(localityOf(l, p));
      for (int64_t c : {0, 1, 7, 100})
        for (bool vec : {false, true})  // receive as the vector type (holes stay)
          for (bool inPlace : {false, true}) {
            if (vec && inPlace) continue;  // in place: one type on both sides
            loom::sim::SimComms comms(p);
            Datatype* rt = vec ? vecType() : dt(MPI_INT);
            const int64_t rc = vec ? c : 2 * c, sc = 2 * c;  // 2c ints a block
            const size_t blockSpan = size_t(rc) * rt->extent();
            // Rank j's block: ints j*1000 + k.
            auto blockInts = [&](int j) {
              std::vector<int> v(sc);
              for (int64_t k = 0; k < sc; ++k) v[k] = j * 1000 + int(k);
              return v;
            };
            Bytes expect(p * blockSpan, std::byte{0xEE});
            for (int j = 0; j < p; ++j) {
              std::vector<int> v = blockInts(j);
              if (sc) rt->unpack(expect.data() + j * blockSpan, rc, 0, v.data(), sc * 4);
            }
            std::vector<std::vector<int>> send(p);
            std::vector<Bytes> recv(p);
            std::vector<CollArgs> args(p);
            for (int r = 0; r < p; ++r) {
              send[r] = blockInts(r);
              recv[r] = Bytes(p * blockSpan, std::byte{0xEE});
              if (inPlace && blockSpan)
                std::memcpy(recv[r].data() + r * blockSpan, expect.data() + r * blockSpan,
                            blockSpan);
              args[r].inPlace = inPlace;
              args[r].sendbuf = inPlace ? nullptr : send[r].data();
              args[r].count = sc;
              args[r].type = dt(MPI_INT);
              args[r].recvbuf = recv[r].data();
              args[r].recvCount = rc;
              args[r].recvType = rt;
            }
            const std::string w = where(l, p, c, 0, inPlace) + (vec ? " vec" : "");
            ASSERT_EQ(run(alg, comms, args), "") << w;
            for (int r = 0; r < p; ++r) ASSERT_TRUE(recv[r] == expect) << w << " rank " << r;
          }
    }
}

namespace {
// Which arrivals each rank has heard of when its schedule ends: messages
// carry the sender's knowledge at the start of the round that sends them
// (FIFO per pair, as the simulator delivers). A barrier is right when
// every rank has heard of all.
std::string barrierKnowledge(std::vector<std::unique_ptr<Schedule>>& s) {
  using Kind = Schedule::Step::Kind;
  const int p = static_cast<int>(s.size());
  std::vector<std::set<int>> know(p);
  for (int r = 0; r < p; ++r) know[r].insert(r);
  std::map<std::pair<int, int>, std::deque<std::set<int>>> wire;
  std::vector<size_t> round(p, 0);
  std::vector<bool> started(p, false);
  std::vector<std::vector<std::pair<int, bool>>> recvs(p);  // (peer, done)
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const auto& rounds = s[r]->rounds();
      while (round[r] < rounds.size()) {
        if (!started[r]) {
          started[r] = progress = true;
          recvs[r].clear();
          for (const auto& st : rounds[round[r]].steps) {
            if (st.kind == Kind::kSend) wire[{r, st.peer}].push_back(know[r]);
            if (st.kind == Kind::kRecv) recvs[r].push_back({st.peer, false});
          }
        }
        bool complete = true;
        for (auto& [peer, done] : recvs[r]) {
          if (done) continue;
          auto& q = wire[{peer, r}];
          if (q.empty()) {
            complete = false;
            continue;
          }
          know[r].insert(q.front().begin(), q.front().end());
          q.pop_front();
          done = progress = true;
        }
        if (!complete) break;
        ++round[r];
        started[r] = false;
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    if (round[r] < s[r]->rounds().size()) return "rank " + std::to_string(r) + " never ends";
    if (static_cast<int>(know[r].size()) != p)
      return "rank " + std::to_string(r) + " leaves having heard of " +
             std::to_string(know[r].size()) + " of " + std::to_string(p);
  }
  return "";
}
}  // namespace

TEST(CollHier, BarrierEveryoneHearsOfEveryone) {
  const Algorithm& alg = hierarchical(Collective::kBarrier);
  for (const Layout& l : layouts())
    for (int p = 1; p <= 16; ++p) {
      LocalityScope scope(localityOf(l, p));
      loom::sim::SimComms comms(p);
      std::vector<std::unique_ptr<Schedule>> s;
      CollArgs a;
      for (int r = 0; r < p; ++r) {
        s.push_back(std::make_unique<Schedule>(comms[r], 0));
        a.comm = comms[r];
        ASSERT_TRUE(alg.build(*s.back(), a).isOk());
      }
      ASSERT_EQ(barrierKnowledge(s), "") << l.name << " p=" << p;
      ASSERT_EQ(loom::sim::simulate(s), "") << l.name << " p=" << p;
    }
}

// The check is real: a schedule that skips the leaders' step fails it.
TEST(CollHier, BarrierCheckCatchesAMissingStep) {
  LocalityScope scope(localityOf(layouts()[0], 6));
  loom::sim::SimComms comms(6);
  std::vector<std::unique_ptr<Schedule>> s;
  for (int r = 0; r < 6; ++r) {
    s.push_back(std::make_unique<Schedule>(comms[r], 0));
    const auto& info = loom::coll::commInfo(comms[r]);
    auto tr = loom::coll::hier::topoTree(comms[r], info, info.local, info.local[0],
                                         loom::coll::hier::kInNode);
    loom::coll::hier::treeFanIn(*s.back(), tr);
    loom::coll::hier::treeFanOut(*s.back(), tr);
  }
  EXPECT_NE(barrierKnowledge(s), "");
}

// The topology trees: one root, parents and children agree, every rank
// reached; a package (NUMA node, node) is left only by its head, so its
// ranks combine before anything crosses to another one.
TEST(CollHier, TopologyTreesFollowTheMachine) {
  namespace hier = loom::coll::hier;
  for (const Layout& l : layouts())
    for (int p = 1; p <= 16; ++p) {
      std::vector<Locality> loc = localityOf(l, p);
      LocalityScope scope(loc);
      loom::sim::SimComms comms(p);
      for (int root = 0; root < p; ++root) {
        std::vector<int> all(p);
        for (int r = 0; r < p; ++r) all[r] = r;
        std::vector<hier::Tree> t(p);
        for (int r = 0; r < p; ++r)
          t[r] = hier::topoTree(comms[r], loom::coll::commInfo(comms[r]), all, root,
                                hier::kNode | hier::kInNode);
        const std::string w =
            std::string(l.name) + " p=" + std::to_string(p) + " root=" + std::to_string(root);
        ASSERT_EQ(t[root].parent, -1) << w;
        int crossNode = 0;
        for (int r = 0; r < p; ++r) {
          if (r != root) {
            ASSERT_GE(t[r].parent, 0) << w << " rank " << r;
            const auto& sib = t[t[r].parent].children;
            ASSERT_EQ(std::count(sib.begin(), sib.end(), r), 1) << w << " rank " << r;
          }
          for (int c : t[r].children) ASSERT_EQ(t[c].parent, r) << w;
          const int par = t[r].parent;
          if (par < 0) continue;
          if (loc[par].nodeId != loc[r].nodeId) {
            ++crossNode;
            continue;
          }
          // Same node: a rank whose package is shared by a rank of lower
          // rank, or by the root, must have its parent in that package
          // (when every rank of the node knows its package).
          bool known = true;
          for (int q = 0; q < p; ++q)
            if (loc[q].nodeId == loc[r].nodeId && loc[q].package < 0) known = false;
          if (!known) continue;
          bool head = true;
          for (int q = 0; q < p; ++q)
            if (q != r && loc[q].nodeId == loc[r].nodeId && loc[q].package == loc[r].package &&
                (q < r || q == root))
              head = false;
          if (!head) {
            EXPECT_EQ(loc[par].package, loc[r].package) << w << " rank " << r;
          }
        }
        std::set<int> nodes;
        for (const Locality& x : loc) nodes.insert(x.nodeId);
        EXPECT_EQ(crossNode, static_cast<int>(nodes.size()) - 1) << w;
        // Reachability from the root.
        std::vector<int> seen{root};
        for (size_t i = 0; i < seen.size(); ++i)
          for (int c : t[seen[i]].children) seen.push_back(c);
        EXPECT_EQ(static_cast<int>(seen.size()), p) << w;
      }
    }
}

// Rules: several nodes pick the hierarchical algorithms up to their
// limits; one node, one rank per node, or a non-commutative reduce do not.
TEST(CollHier, RulesPickHierarchicalOnSeveralNodes) {
  auto pick = [](const std::vector<Locality>& loc, Collective c, size_t bytes, Op* op) {
    LocalityScope scope(loc);
    loom::sim::SimComms comms(static_cast<int>(loc.size()));
    CollArgs a;
    a.coll = c;
    a.comm = comms[0];
    a.bytes = bytes;
    a.op = op;
    const Algorithm* alg = nullptr;
    EXPECT_TRUE(loom::coll::select(a, &alg).isOk());
    return alg ? std::string(alg->name) : std::string("?");
  };
  Op* sum = predefOp(MPI_SUM);
  Op* user = Op::create(matmul, nullptr, false);
  const auto twoByFour = localityOf(layouts()[2], 8);  // {4,4}
  const auto uneven = localityOf(layouts()[0], 5);     // {2,2,1}
  const auto perRank = localityOf(layouts()[6], 8);    // 1 per node
  const auto oneNode = localityOf(layouts()[7], 8);
  for (const auto& loc : {twoByFour, uneven}) {
    EXPECT_EQ(pick(loc, Collective::kBarrier, 0, nullptr), "hierarchical");
    EXPECT_EQ(pick(loc, Collective::kBcast, 8, nullptr), "hierarchical");
    EXPECT_EQ(pick(loc, Collective::kBcast, 262144, nullptr), "hierarchical");
    EXPECT_NE(pick(loc, Collective::kBcast, 262145, nullptr), "hierarchical");
    EXPECT_EQ(pick(loc, Collective::kReduce, 1 << 20, sum), "hierarchical");
    EXPECT_EQ(pick(loc, Collective::kReduce, 8, user), "linear");
    EXPECT_EQ(pick(loc, Collective::kAllreduce, 8, sum), "hierarchical");
    EXPECT_EQ(pick(loc, Collective::kAllreduce, 65536, sum), "hierarchical");
    EXPECT_NE(pick(loc, Collective::kAllreduce, 65537, sum), "hierarchical");
    EXPECT_EQ(pick(loc, Collective::kAllreduce, 8, user), "hierarchical");  // contiguous nodes
    EXPECT_EQ(pick(loc, Collective::kAllgather, 8192, nullptr), "hierarchical");
    EXPECT_NE(pick(loc, Collective::kAllgather, 8193, nullptr), "hierarchical");
  }
  // Non-contiguous nodes: a non-commutative allreduce keeps rank order flat.
  EXPECT_EQ(pick(localityOf(layouts()[4], 6), Collective::kAllreduce, 8, user),
            "recursive_doubling");
  for (const auto& loc : {perRank, oneNode}) {
    EXPECT_NE(pick(loc, Collective::kBarrier, 0, nullptr), "hierarchical");
    EXPECT_NE(pick(loc, Collective::kBcast, 8, nullptr), "hierarchical");
    EXPECT_NE(pick(loc, Collective::kReduce, 8, sum), "hierarchical");
    EXPECT_NE(pick(loc, Collective::kAllreduce, 8, sum), "hierarchical");
    EXPECT_NE(pick(loc, Collective::kAllgather, 8, nullptr), "hierarchical");
  }
  user->release();
  EXPECT_NE(loom::coll::describeAll().find("hierarchical"), std::string::npos);
}
