// Group algebra and context-id bookkeeping, in one process.
#include "core/group.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/comm.h"

namespace loom {
namespace {

using V = std::vector<int>;

// Groups are released, not deleted: a small owner for the tests.
struct G {
  Group* g;
  explicit G(V ranks) : g(new Group(std::move(ranks))) {}
  ~G() { Group::release(g); }
  const Group& operator*() const { return *g; }
};

TEST(Group, RankLookup) {
  G g(V{7, 3, 5});
  EXPECT_EQ(g.g->size(), 3);
  EXPECT_EQ(g.g->jobRank(0), 7);
  EXPECT_EQ(g.g->rankOf(7), 0);
  EXPECT_EQ(g.g->rankOf(3), 1);
  EXPECT_EQ(g.g->rankOf(5), 2);
  EXPECT_EQ(g.g->rankOf(4), MPI_UNDEFINED);
  EXPECT_EQ(Group::empty()->size(), 0);
  EXPECT_EQ(Group::empty()->rankOf(0), MPI_UNDEFINED);
}

TEST(Group, RefCounting) {
  auto* g = new Group(V{1, 2});
  g->retain();
  Group::release(g);
  EXPECT_TRUE(g->valid());  // one reference left
  Group::release(g);
  Group::release(Group::empty());  // permanent: stays
  EXPECT_TRUE(Group::empty()->valid());
}

TEST(Group, UnionIntersectionDifference) {
  G a(V{0, 2, 4, 6}), b(V{6, 5, 4, 3});
  EXPECT_EQ(groupUnion(*a, *b), (V{0, 2, 4, 6, 5, 3}));
  EXPECT_EQ(groupUnion(*b, *a), (V{6, 5, 4, 3, 0, 2}));
  EXPECT_EQ(groupIntersection(*a, *b), (V{4, 6}));
  EXPECT_EQ(groupIntersection(*b, *a), (V{6, 4}));
  EXPECT_EQ(groupDifference(*a, *b), (V{0, 2}));
  EXPECT_EQ(groupDifference(*b, *a), (V{5, 3}));
  EXPECT_TRUE(groupDifference(*a, *a).empty());
  EXPECT_EQ(groupUnion(*a, *Group::empty()), a.g->jobRanks());
  EXPECT_TRUE(groupIntersection(*a, *Group::empty()).empty());
}

TEST(Group, InclExcl) {
  G g(V{10, 11, 12, 13, 14});
  V out;
  ASSERT_TRUE(groupIncl(*g, V{4, 0, 2}, &out).isOk());
  EXPECT_EQ(out, (V{14, 10, 12}));
  ASSERT_TRUE(groupIncl(*g, V{}, &out).isOk());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(groupExcl(*g, V{4, 0, 2}, &out).isOk());
  EXPECT_EQ(out, (V{11, 13}));
  EXPECT_EQ(groupIncl(*g, V{5}, &out).code(), MPI_ERR_RANK);
  EXPECT_EQ(groupIncl(*g, V{-1}, &out).code(), MPI_ERR_RANK);
  EXPECT_EQ(groupIncl(*g, V{1, 1}, &out).code(), MPI_ERR_RANK);
  EXPECT_EQ(groupExcl(*g, V{2, 2}, &out).code(), MPI_ERR_RANK);
  EXPECT_EQ(groupExcl(*g, V{7}, &out).code(), MPI_ERR_RANK);
}

TEST(Group, RangeIncl) {
  std::vector<int> ranks(10);
  for (int i = 0; i < 10; ++i) ranks[i] = 100 + i;
  G g(ranks);
  V out;
  std::vector<RankRange> r = {{0, 8, 3}};  // 0 3 6 (8 itself not reached)
  ASSERT_TRUE(groupRangeIncl(*g, r, &out).isOk());
  EXPECT_EQ(out, (V{100, 103, 106}));
  r = {{9, 0, -4}, {1, 1, 1}};  // 9 5 1, then 1 again: duplicate
  EXPECT_EQ(groupRangeIncl(*g, r, &out).code(), MPI_ERR_RANK);
  r = {{9, 0, -4}, {2, 3, 1}};  // negative stride: 9 5 1, then 2 3
  ASSERT_TRUE(groupRangeIncl(*g, r, &out).isOk());
  EXPECT_EQ(out, (V{109, 105, 101, 102, 103}));
  r = {{7, 7, -1}};  // a single rank, either stride sign
  ASSERT_TRUE(groupRangeIncl(*g, r, &out).isOk());
  EXPECT_EQ(out, (V{107}));
  r = {{0, 20, 30}};  // last beyond the group, but only 0 is computed
  ASSERT_TRUE(groupRangeIncl(*g, r, &out).isOk());
  EXPECT_EQ(out, (V{100}));
  r = {{0, 4, 0}};
  EXPECT_EQ(groupRangeIncl(*g, r, &out).code(), MPI_ERR_ARG);
  r = {{4, 0, 1}};  // runs away from its end
  EXPECT_EQ(groupRangeIncl(*g, r, &out).code(), MPI_ERR_ARG);
  r = {{0, 4, -1}};
  EXPECT_EQ(groupRangeIncl(*g, r, &out).code(), MPI_ERR_ARG);
  r = {{8, 12, 2}};  // computes 10 and 12: out of range
  EXPECT_EQ(groupRangeIncl(*g, r, &out).code(), MPI_ERR_RANK);
  r = {{-1, 3, 1}};
  EXPECT_EQ(groupRangeIncl(*g, r, &out).code(), MPI_ERR_RANK);
  r = {{0, 2147483647, 1}};  // no overflow, no huge loop
  EXPECT_EQ(groupRangeIncl(*g, r, &out).code(), MPI_ERR_RANK);
}

TEST(Group, RangeExcl) {
  G g(V{0, 1, 2, 3, 4, 5, 6});
  V out;
  std::vector<RankRange> r = {{6, 0, -2}};  // drops 6 4 2 0
  ASSERT_TRUE(groupRangeExcl(*g, r, &out).isOk());
  EXPECT_EQ(out, (V{1, 3, 5}));
  r = {{0, 6, 1}};
  ASSERT_TRUE(groupRangeExcl(*g, r, &out).isOk());
  EXPECT_TRUE(out.empty());
  r = {{0, 3, 1}, {3, 5, 1}};  // 3 twice
  EXPECT_EQ(groupRangeExcl(*g, r, &out).code(), MPI_ERR_RANK);
}

TEST(Group, Translate) {
  G a(V{4, 1, 9, 2}), b(V{2, 4, 7});
  int out[4];
  V in{0, 1, 3, MPI_PROC_NULL};
  ASSERT_TRUE(groupTranslate(*a, in, *b, out).isOk());
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], MPI_UNDEFINED);
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], MPI_PROC_NULL);
  V bad{4};
  EXPECT_EQ(groupTranslate(*a, bad, *b, out).code(), MPI_ERR_RANK);
}

TEST(Group, Compare) {
  G a(V{1, 2, 3}), same(V{1, 2, 3}), perm(V{3, 1, 2}), other(V{1, 2, 4}), shorter(V{1, 2});
  EXPECT_EQ(groupCompare(*a, *same), MPI_IDENT);
  EXPECT_EQ(groupCompare(*a, *perm), MPI_SIMILAR);
  EXPECT_EQ(groupCompare(*a, *other), MPI_UNEQUAL);
  EXPECT_EQ(groupCompare(*a, *shorter), MPI_UNEQUAL);
  EXPECT_EQ(groupCompare(*Group::empty(), *Group::empty()), MPI_IDENT);
}

TEST(ContextIdMask, ReservedAndLowest) {
  ContextIdMask m;
  EXPECT_FALSE(m.isFree(ContextIdMask::kWorld));
  EXPECT_FALSE(m.isFree(ContextIdMask::kSelf));
  EXPECT_EQ(ContextIdMask::lowestFree(m.words()), 2);
  m.take(2);
  m.take(3);
  EXPECT_EQ(ContextIdMask::lowestFree(m.words()), 4);
  m.give(2);
  EXPECT_EQ(ContextIdMask::lowestFree(m.words()), 2);  // recycled
}

// The agreement as the processes of a parent run it: AND the masks, take
// the lowest common id on the members only.
int agree(std::vector<ContextIdMask*> parent, std::vector<ContextIdMask*> members) {
  uint64_t w[ContextIdMask::kWords];
  for (int i = 0; i < ContextIdMask::kWords; ++i) {
    w[i] = ~uint64_t{0};
    for (auto* m : parent) w[i] &= m->words()[i];
  }
  int id = ContextIdMask::lowestFree(w);
  if (id >= 0)
    for (auto* m : members) m->take(id);
  return id;
}

TEST(ContextIdMask, Agreement) {
  ContextIdMask p0, p1, p2, p3;
  // A split of {0,1,2,3} into {0,1} and {2,3}: one id for both halves.
  int s = agree({&p0, &p1, &p2, &p3}, {&p0, &p1, &p2, &p3});
  EXPECT_EQ(s, 2);
  // {0,1} alone makes two more; {2,3} one: they may coincide (disjoint).
  EXPECT_EQ(agree({&p0, &p1}, {&p0, &p1}), 3);
  EXPECT_EQ(agree({&p0, &p1}, {&p0, &p1}), 4);
  EXPECT_EQ(agree({&p2, &p3}, {&p2, &p3}), 3);
  // A communicator spanning both halves avoids every id either side holds.
  EXPECT_EQ(agree({&p0, &p1, &p2, &p3}, {&p1, &p2}), 5);
  // Created from a parent of 4 with only {0, 3} as members: 1 and 2 did not
  // take it, so a later agreement among {1,2} may reuse it (it cannot
  // among processes including 0 or 3).
  EXPECT_EQ(agree({&p0, &p1, &p2, &p3}, {&p0, &p3}), 6);
  EXPECT_EQ(agree({&p1, &p2}, {&p1, &p2}), 6);
  EXPECT_EQ(agree({&p0, &p1}, {&p0, &p1}), 7);
  // Free, then the same id comes back.
  p0.give(3);
  p1.give(3);
  EXPECT_EQ(agree({&p0, &p1}, {&p0, &p1}), 3);
}

TEST(ContextIdMask, Exhaustion) {
  ContextIdMask m;
  for (int i = 2; i < ContextIdMask::kIds; ++i) {
    int id = ContextIdMask::lowestFree(m.words());
    ASSERT_EQ(id, i);
    m.take(id);
  }
  EXPECT_EQ(ContextIdMask::lowestFree(m.words()), -1);
  m.give(ContextIdMask::kIds - 1);
  EXPECT_EQ(ContextIdMask::lowestFree(m.words()), ContextIdMask::kIds - 1);
}

TEST(Comm, OwnsGroupAndContextId) {
  ContextIdMask& pool = contextIds();
  int id = ContextIdMask::lowestFree(pool.words());
  ASSERT_GE(id, 2);
  pool.take(id);
  auto* c = new Comm(id, V{3, 1}, 1, "");
  c->setOwnsContextId(true);
  EXPECT_EQ(c->size(), 2);
  EXPECT_EQ(c->worldRank(0), 3);
  Group* g = c->group();
  g->retain();  // as MPI_Comm_group does
  c->retain();  // as a pending operation would
  Comm::free(c);
  EXPECT_FALSE(c->valid());
  EXPECT_FALSE(pool.isFree(id));  // still referenced
  Comm::release(c);
  EXPECT_TRUE(pool.isFree(id));
  EXPECT_TRUE(g->valid());  // the user's group outlives the communicator
  EXPECT_EQ(g->jobRank(0), 3);
  Group::release(g);
}

}  // namespace
}  // namespace loom
