// Every data-movement algorithm (bcast, gather(v), scatter(v), allgather(v),
// alltoall(v,w)) through the single-process simulator, for p = 1..17, 32
// and 64, several counts, roots, MPI_IN_PLACE, and a non-contiguous vector
// type on either side, compared with a reference computed directly from
// the packed data. Holes of the non-contiguous type must stay untouched.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/selector.h"
#include "coll/shm/shm_coll.h"
#include "coll_sim.h"

namespace {

using loom::Datatype;
using loom::coll::Algorithm;
using loom::coll::CollArgs;
using loom::coll::Collective;
using loom::coll::Schedule;
using Bytes = std::vector<std::byte>;

Datatype* intType() { return loom::predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_INT)); }

// Two ints with a one-int hole between them: size 8, extent 12.
Datatype* vecType() {
  static Datatype* t = [] {
    Datatype* v = nullptr;
    EXPECT_TRUE(loom::typeVector(2, 1, 2, intType(), &v).isOk());
    v->commit();
    return v;
  }();
  return t;
}

// A send/receive type pair with the same signature: `mul` elements of the
// type carry 2 ints.
struct TypeCase {
  Datatype* st;
  int sMul;
  Datatype* rt;
  int rMul;
  const char* name;
};
const TypeCase kTypes[] = {
    {nullptr, 2, nullptr, 2, "int/int"},
    {nullptr, 1, nullptr, 2, "vec/int"},
    {nullptr, 2, nullptr, 1, "int/vec"},
};
TypeCase typeCase(int i) {
  TypeCase t = kTypes[i];
  t.st = t.sMul == 1 ? vecType() : intType();
  t.rt = t.rMul == 1 ? vecType() : intType();
  return t;
}

Bytes pattern(size_t n, int seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte((seed * 131 + i * 7 + 1) & 0xff);
  return b;
}
Bytes sentinel(size_t n) { return Bytes(n, std::byte{0xEE}); }
size_t span(int64_t count, Datatype* t) { return static_cast<size_t>(count * t->extent()); }
Bytes packOf(const std::byte* buf, int64_t count, Datatype* t) {
  Bytes out(t->packedSize(count));
  if (!out.empty()) t->pack(buf, count, 0, out.data(), out.size());
  return out;
}
void unpackInto(std::byte* buf, int64_t count, Datatype* t, const Bytes& in) {
  if (!in.empty()) t->unpack(buf, count, 0, in.data(), in.size());
}

std::vector<const Algorithm*> algorithmsOf(Collective c) {
  std::vector<const Algorithm*> v;
  for (const Algorithm& a : loom::coll::algorithms())
    if (a.coll == c && a.build) v.push_back(&a);  // schedule-based ones: the simulator runs those
  return v;
}

std::vector<int> rankCounts() {
  std::vector<int> v;
  for (int p = 1; p <= 17; ++p) v.push_back(p);
  v.push_back(32);
  v.push_back(64);
  return v;
}
std::vector<int> roots(int p) {
  std::vector<int> v{0};
  if (p / 2 != 0) v.push_back(p / 2);
  if (p - 1 != 0 && p - 1 != p / 2) v.push_back(p - 1);
  return v;
}

// Per-rank state of one simulated call.
struct RankData {
  Bytes send, recv, expect;
  std::vector<int> sc, sd, rc, rd;
  std::vector<Datatype*> st, rt;
  CollArgs a;
};

// Builds, simulates and checks one call; `setup` fills every rank's data
// and args (comm and coll are set here) and the expected receive buffer.
void runCase(const Algorithm* alg, int p, const std::string& what,
             const std::function<void(int, RankData&)>& setup) {
  loom::sim::SimComms comms(p);
  std::vector<RankData> d(p);
  for (int r = 0; r < p; ++r) {
    d[r].a.coll = alg->coll;
    d[r].a.comm = comms[r];
    setup(r, d[r]);
  }
  if (alg->supports && !alg->supports(d[0].a)) return;
  std::vector<std::unique_ptr<Schedule>> s;
  for (int r = 0; r < p; ++r) {
    s.push_back(std::make_unique<Schedule>(comms[r], 0));
    ASSERT_TRUE(alg->build(*s.back(), d[r].a).isOk()) << alg->name << " " << what;
  }
  ASSERT_EQ(loom::sim::simulate(s), "") << alg->name << " p=" << p << " " << what;
  for (int r = 0; r < p; ++r)
    ASSERT_TRUE(d[r].recv == d[r].expect)
        << loom::coll::collectiveName(alg->coll) << " " << alg->name << " p=" << p << " rank "
        << r << " " << what;
}

std::string label(int c, int root, bool inPlace, const TypeCase& t) {
  return "count=" + std::to_string(c) + " root=" + std::to_string(root) +
         (inPlace ? " in-place " : " ") + t.name;
}

}  // namespace

TEST(CollMove, Bcast) {
  for (const Algorithm* alg : algorithmsOf(Collective::kBcast))
    for (int p : rankCounts())
      for (int c : {0, 1, 7, 1000})
        for (int root : roots(p))
          for (int ti = 0; ti < 2; ++ti) {
            Datatype* t = ti ? vecType() : intType();
            runCase(alg, p, label(c, root, false, typeCase(ti)), [&](int r, RankData& d) {
              Bytes data = pattern(span(c, t), root);
              d.recv = r == root ? data : sentinel(span(c, t));
              d.expect = d.recv;
              unpackInto(d.expect.data(), c, t, packOf(data.data(), c, t));
              d.a.recvbuf = d.recv.data();
              d.a.sendbuf = d.a.recvbuf;
              d.a.count = c;
              d.a.type = t;
              d.a.root = root;
            });
          }
}

TEST(CollMove, GatherAndScatter) {
  for (Collective coll : {Collective::kGather, Collective::kScatter})
    for (const Algorithm* alg : algorithmsOf(coll))
      for (int p : rankCounts())
        for (int c : {0, 1, 7, 1000}) {
          if (c == 1000 && p > 17) continue;
          for (int root : roots(p))
            for (int ti = 0; ti < 3; ++ti)
              for (bool inPlace : {false, true}) {
                TypeCase t = typeCase(ti);
                const int64_t sc = c * t.sMul, rc = c * t.rMul;
                runCase(alg, p, label(c, root, inPlace, t), [&](int r, RankData& d) {
                  d.a.count = sc;
                  d.a.type = t.st;
                  d.a.recvCount = rc;
                  d.a.recvType = t.rt;
                  d.a.root = root;
                  d.a.inPlace = inPlace && r == root;
                  if (coll == Collective::kGather) {
                    d.send = pattern(span(sc, t.st), r + 1);
                    if (r != root) {
                      d.a.sendbuf = d.send.data();
                      return;
                    }
                    d.recv = sentinel(span(p * rc, t.rt));
                    for (int i = 0; i < p; ++i) {
                      Bytes other = pattern(span(sc, t.st), i + 1);
                      unpackInto(d.recv.data() + i * span(rc, t.rt), rc, t.rt,
                                 packOf(other.data(), sc, t.st));
                    }
                    d.expect = d.recv;
                    if (d.a.inPlace) {  // the own block is there already
                      for (int i = 0; i < p; ++i)
                        if (i != root && span(rc, t.rt))  // memset of null, 0 is UB
                          std::memset(d.recv.data() + i * span(rc, t.rt), 0xEE, span(rc, t.rt));
                    } else {
                      d.recv = sentinel(d.recv.size());
                    }
                    d.a.sendbuf = d.send.data();
                    d.a.recvbuf = d.recv.data();
                  } else {
                    d.recv = sentinel(span(rc, t.rt));
                    d.expect = d.recv;
                    Bytes all = pattern(span(p * sc, t.st), root + 1);
                    unpackInto(d.expect.data(), rc, t.rt,
                               packOf(all.data() + r * span(sc, t.st), sc, t.st));
                    if (r == root) {
                      d.send = all;
                      d.a.sendbuf = d.send.data();
                      if (d.a.inPlace) d.expect = d.recv;  // the root's receive buffer is unused
                    }
                    d.a.recvbuf = d.recv.data();
                  }
                });
              }
        }
}

TEST(CollMove, GathervAndScatterv) {
  for (Collective coll : {Collective::kGatherv, Collective::kScatterv})
    for (const Algorithm* alg : algorithmsOf(coll))
      for (int p : rankCounts())
        for (int c : {0, 1, 7})
          for (int root : roots(p))
            for (bool inPlace : {false, true}) {
              Datatype* it = intType();
              auto cnt = [c](int i) { return c * (i % 3); };
              // Blocks stored in reverse rank order with a one-int gap.
              std::vector<int> displ(p);
              int at = 0;
              for (int i = p - 1; i >= 0; --i) {
                displ[i] = at;
                at += cnt(i) + 1;
              }
              const int total = at;
              runCase(alg, p, label(c, root, inPlace, kTypes[0]), [&](int r, RankData& d) {
                d.a.root = root;
                d.a.inPlace = inPlace && r == root;
                d.a.type = d.a.recvType = it;
                if (coll == Collective::kGatherv) {
                  d.send = pattern(span(cnt(r), it), r + 1);
                  d.a.sendbuf = d.send.data();
                  d.a.count = cnt(r);
                  if (r != root) return;
                  d.rc.resize(p);
                  for (int i = 0; i < p; ++i) d.rc[i] = cnt(i);
                  d.recv = sentinel(span(total, it));
                  d.expect = d.recv;
                  for (int i = 0; i < p; ++i) {
                    Bytes b = pattern(span(cnt(i), it), i + 1);
                    if (!b.empty()) std::memcpy(d.expect.data() + displ[i] * 4, b.data(), b.size());
                  }
                  if (d.a.inPlace && !d.send.empty())
                    std::memcpy(d.recv.data() + displ[r] * 4, d.send.data(), d.send.size());
                  d.a.recvbuf = d.recv.data();
                  d.a.recvCounts = d.rc.data();
                  d.a.recvDispls = displ.data();
                } else {
                  d.recv = sentinel(span(cnt(r), it));
                  d.a.recvbuf = d.recv.data();
                  d.a.recvCount = cnt(r);
                  Bytes all = pattern(span(total, it), root + 7);
                  d.expect = d.recv;
                  if (!d.expect.empty()) std::memcpy(d.expect.data(), all.data() + displ[r] * 4, d.expect.size());
                  if (r != root) return;
                  if (d.a.inPlace) d.expect = d.recv;
                  d.send = all;
                  d.sc.resize(p);
                  for (int i = 0; i < p; ++i) d.sc[i] = cnt(i);
                  d.a.sendbuf = d.send.data();
                  d.a.sendCounts = d.sc.data();
                  d.a.sendDispls = displ.data();
                }
              });
            }
}

TEST(CollMove, Allgather) {
  for (const Algorithm* alg : algorithmsOf(Collective::kAllgather))
    for (int p : rankCounts())
      for (int c : {0, 1, 7, 1000}) {
        if (c == 1000 && p > 17) continue;
        for (int ti = 0; ti < 3; ++ti)
          for (bool inPlace : {false, true}) {
            TypeCase t = typeCase(ti);
            const int64_t sc = c * t.sMul, rc = c * t.rMul;
            runCase(alg, p, label(c, 0, inPlace, t), [&](int r, RankData& d) {
              d.a.count = sc;
              d.a.type = t.st;
              d.a.recvCount = rc;
              d.a.recvType = t.rt;
              d.a.inPlace = inPlace;
              d.send = pattern(span(sc, t.st), r + 1);
              d.recv = sentinel(span(p * rc, t.rt));
              for (int i = 0; i < p; ++i) {
                Bytes other = pattern(span(sc, t.st), i + 1);
                unpackInto(d.recv.data() + i * span(rc, t.rt), rc, t.rt,
                           packOf(other.data(), sc, t.st));
              }
              d.expect = d.recv;
              if (inPlace) {
                for (int i = 0; i < p; ++i)
                  if (i != r && span(rc, t.rt))  // memset of null, 0 is UB
                    std::memset(d.recv.data() + i * span(rc, t.rt), 0xEE, span(rc, t.rt));
              } else {
                d.recv = sentinel(d.recv.size());
              }
              d.a.sendbuf = inPlace ? nullptr : d.send.data();
              d.a.recvbuf = d.recv.data();
            });
          }
      }
}

TEST(CollMove, Allgatherv) {
  for (const Algorithm* alg : algorithmsOf(Collective::kAllgatherv))
    for (int p : rankCounts())
      for (int c : {0, 1, 7, 100})
        for (bool inPlace : {false, true}) {
          Datatype* it = intType();
          auto cnt = [c](int i) { return c * ((i + 1) % 3); };
          std::vector<int> counts(p), displ(p);
          int at = 0;
          for (int i = p - 1; i >= 0; --i) {
            counts[i] = cnt(i);
            displ[i] = at;
            at += cnt(i) + 2;
          }
          const int total = at;
          runCase(alg, p, label(c, 0, inPlace, kTypes[0]), [&](int r, RankData& d) {
            d.a.type = d.a.recvType = it;
            d.a.count = cnt(r);
            d.a.inPlace = inPlace;
            d.a.recvCounts = counts.data();
            d.a.recvDispls = displ.data();
            d.send = pattern(span(cnt(r), it), r + 1);
            d.recv = sentinel(span(total, it));
            d.expect = d.recv;
            for (int i = 0; i < p; ++i) {
              Bytes b = pattern(span(cnt(i), it), i + 1);
              if (!b.empty()) std::memcpy(d.expect.data() + displ[i] * 4, b.data(), b.size());
            }
            if (inPlace && !d.send.empty())
              std::memcpy(d.recv.data() + displ[r] * 4, d.send.data(), d.send.size());
            d.a.sendbuf = inPlace ? nullptr : d.send.data();
            d.a.recvbuf = d.recv.data();
          });
        }
}

TEST(CollMove, Alltoall) {
  for (const Algorithm* alg : algorithmsOf(Collective::kAlltoall))
    for (int p : rankCounts())
      for (int c : {0, 1, 7, 1000}) {
        if (c == 1000 && p > 8) continue;
        for (int ti = 0; ti < 3; ++ti)
          for (bool inPlace : {false, true}) {
            TypeCase t = typeCase(ti);
            if (inPlace) t = typeCase(ti == 1 ? 0 : ti);  // in place: one type
            if (inPlace) t.st = t.rt, t.sMul = t.rMul;
            const int64_t sc = c * t.sMul, rc = c * t.rMul;
            // Rank r's block for rank j: pattern seeded r * 100 + j.
            auto block = [&](int from, int to) {
              Bytes b = pattern(span(sc, t.st), from * 100 + to);
              return packOf(b.data(), sc, t.st);
            };
            runCase(alg, p, label(c, 0, inPlace, t), [&](int r, RankData& d) {
              d.a.count = sc;
              d.a.type = t.st;
              d.a.recvCount = rc;
              d.a.recvType = t.rt;
              d.a.inPlace = inPlace;
              d.send = sentinel(span(p * sc, t.st));
              d.recv = sentinel(span(p * rc, t.rt));
              d.expect = d.recv;
              for (int j = 0; j < p; ++j) {
                unpackInto((inPlace ? d.recv : d.send).data() + j * span(sc, t.st), sc, t.st,
                           block(r, j));
                unpackInto(d.expect.data() + j * span(rc, t.rt), rc, t.rt, block(j, r));
              }
              d.a.sendbuf = inPlace ? nullptr : d.send.data();
              d.a.recvbuf = d.recv.data();
            });
          }
      }
}

// alltoallv and alltoallw: counts (r + j) % 3 * c from r to j, blocks
// stored in reverse order with gaps; alltoallw uses the vector type for
// odd peers.
TEST(CollMove, AlltoallvAndW) {
  for (Collective coll : {Collective::kAlltoallv, Collective::kAlltoallw})
    for (const Algorithm* alg : algorithmsOf(coll))
      for (int p : rankCounts())
        for (int c : {0, 1, 7, 50})
          for (bool inPlace : {false, true}) {
            const bool w = coll == Collective::kAlltoallw;
            // With in-place the send and receive sides share counts: use a
            // symmetric count (r + j) % 3.
            auto typeFor = [&](int j) { return w && (j % 2) ? vecType() : intType(); };
            auto elems = [&](int from, int to, Datatype* t) {
              int ints = 2 * c * ((from + to) % 3);
              return t == vecType() ? ints / 2 : ints;
            };
            auto block = [&](int from, int to) {
              Datatype* t = typeFor(to);  // sender's type for peer `to`
              Bytes b = pattern(span(elems(from, to, t), t), from * 100 + to);
              return packOf(b.data(), elems(from, to, t), t);
            };
            runCase(alg, p, label(c, 0, inPlace, kTypes[0]), [&](int r, RankData& d) {
              d.a.inPlace = inPlace;
              d.sc.resize(p), d.sd.resize(p), d.rc.resize(p), d.rd.resize(p);
              d.st.resize(p), d.rt.resize(p);
              size_t sAt = 0, rAt = 0;  // bytes
              for (int j = p - 1; j >= 0; --j) {
                // Sending to j uses typeFor(j) on the sender; receiving from
                // j uses typeFor(j) on the receiver too, but the signature
                // is the same (2 ints per vector element).
                d.st[j] = typeFor(j);
                d.rt[j] = typeFor(j);
                d.sc[j] = elems(r, j, d.st[j]);
                d.rc[j] = elems(j, r, d.rt[j]);
                d.sd[j] = static_cast<int>(w ? sAt : sAt / 4);
                d.rd[j] = static_cast<int>(w ? rAt : rAt / 4);
                sAt += span(d.sc[j], d.st[j]) + 4;
                rAt += span(d.rc[j], d.rt[j]) + 4;
              }
              d.send = sentinel(sAt);
              d.recv = sentinel(rAt);
              d.expect = d.recv;
              auto sOff = [&](int j) { return w ? d.sd[j] : d.sd[j] * 4; };
              auto rOff = [&](int j) { return w ? d.rd[j] : d.rd[j] * 4; };
              for (int j = 0; j < p; ++j) {
                if (inPlace)
                  unpackInto(d.recv.data() + rOff(j), d.rc[j], d.rt[j], block(r, j));
                else
                  unpackInto(d.send.data() + sOff(j), d.sc[j], d.st[j], block(r, j));
                unpackInto(d.expect.data() + rOff(j), d.rc[j], d.rt[j], block(j, r));
              }
              d.a.sendbuf = inPlace ? nullptr : d.send.data();
              d.a.recvbuf = d.recv.data();
              d.a.recvCounts = d.rc.data();
              d.a.recvDispls = d.rd.data();
              if (!inPlace) {
                d.a.sendCounts = d.sc.data();
                d.a.sendDispls = d.sd.data();
              }
              if (w) {
                d.a.recvTypes = d.rt.data();
                if (!inPlace) d.a.sendTypes = d.st.data();
              } else {
                d.a.type = d.a.recvType = intType();
              }
            });
          }
}

// The rules pick an algorithm for every data-movement collective at every
// size and rank count (the last rule of each accepts anything).
TEST(CollMove, RulesCoverEveryCase) {
  for (Collective c : {Collective::kBcast, Collective::kGather, Collective::kGatherv,
                       Collective::kScatter, Collective::kScatterv, Collective::kAllgather,
                       Collective::kAllgatherv, Collective::kAlltoall, Collective::kAlltoallv,
                       Collective::kAlltoallw})
    for (int p : {1, 2, 3, 7, 8, 9, 64})
      for (size_t bytes : {size_t{0}, size_t{1}, size_t{256}, size_t{257}, size_t{12289},
                           size_t{1} << 20}) {
        loom::sim::SimComms comms(p);
        CollArgs a;
        a.coll = c;
        a.comm = comms[0];
        a.bytes = bytes;
        const Algorithm* alg = nullptr;
        ASSERT_TRUE(loom::coll::select(a, &alg).isOk()) << loom::coll::collectiveName(c);
        EXPECT_EQ(alg->coll, c);
      }
}

// LOOM_COLL_SHM_DEPTH=auto with a core per rank: as many slots as fit in a
// 2 MiB segment, 64 at most, 4 at least, always a power of two.
TEST(CollShmDepth, AutoFollowsTheSegmentBudget) {
  using loom::coll::shmAutoDepth;
  const size_t k16 = 16384;
  EXPECT_EQ(shmAutoDepth(2, k16), 64u);
  EXPECT_EQ(shmAutoDepth(3, k16), 32u);
  EXPECT_EQ(shmAutoDepth(4, k16), 32u);
  EXPECT_EQ(shmAutoDepth(5, k16), 16u);
  EXPECT_EQ(shmAutoDepth(8, k16), 16u);
  EXPECT_EQ(shmAutoDepth(16, k16), 8u);
  EXPECT_EQ(shmAutoDepth(17, k16), 4u);
  EXPECT_EQ(shmAutoDepth(64, k16), 4u);  // over budget: never fewer than 4
  EXPECT_EQ(shmAutoDepth(2, 4096), 64u);
  EXPECT_EQ(shmAutoDepth(2, size_t{1} << 20), 4u);
  for (int p = 2; p <= 64; ++p)
    for (size_t slot : {size_t{4096}, k16, size_t{65536}}) {
      const uint64_t d = shmAutoDepth(p, slot);
      EXPECT_EQ(d & (d - 1), 0u) << p << " " << slot;
      EXPECT_TRUE(d == 4 || p * d * slot <= (size_t{2} << 20)) << p << " " << slot;
    }
}
