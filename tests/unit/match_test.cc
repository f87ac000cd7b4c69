#include <gtest/gtest.h>

#include "p2p/match.h"

using loom::Request;
using loom::p2p::Kind;
using loom::p2p::MatchTable;
using loom::p2p::MsgHeader;
using loom::p2p::Unexpected;

namespace {
MsgHeader msg(uint32_t ctx, int src, int tag, uint64_t size = 0) {
  MsgHeader h{};
  h.ctx = ctx;
  h.src = src;
  h.tag = tag;
  h.kind = Kind::kEager;
  h.size = size;
  return h;
}
Request* recv(int src, int tag) {
  Request* r = Request::alloc(loom::ReqKind::kRecv);
  r->peer = src;
  r->tag = tag;
  return r;
}
std::unique_ptr<Unexpected> unexpected(const MsgHeader& h) {
  auto u = std::make_unique<Unexpected>();
  u->hdr = h;
  return u;
}
}  // namespace

TEST(Match, PostedInOrderWithWildcards) {
  MatchTable t;
  Request* anyAny = recv(MPI_ANY_SOURCE, MPI_ANY_TAG);
  Request* from2 = recv(2, 5);
  t.post(0, anyAny);
  t.post(0, from2);
  // The oldest accepting receive wins, even if a later one is more specific.
  EXPECT_EQ(t.takePosted(msg(0, 2, 5)), anyAny);
  EXPECT_EQ(t.takePosted(msg(0, 2, 5)), from2);
  EXPECT_EQ(t.takePosted(msg(0, 2, 5)), nullptr);
}

TEST(Match, ContextsAreSeparate) {
  MatchTable t;
  Request* r = recv(MPI_ANY_SOURCE, MPI_ANY_TAG);
  t.post(2, r);  // communicator 1's point-to-point context
  EXPECT_EQ(t.takePosted(msg(3, 0, 0)), nullptr);  // its collective context
  EXPECT_EQ(t.takePosted(msg(0, 0, 0)), nullptr);
  EXPECT_EQ(t.takePosted(msg(2, 0, 0)), r);
}

TEST(Match, TagAndSourceFilters) {
  MatchTable t;
  Request* tag7 = recv(MPI_ANY_SOURCE, 7);
  Request* src1 = recv(1, MPI_ANY_TAG);
  t.post(0, tag7);
  t.post(0, src1);
  EXPECT_EQ(t.takePosted(msg(0, 1, 3)), src1);
  EXPECT_EQ(t.takePosted(msg(0, 0, 3)), nullptr);
  EXPECT_EQ(t.takePosted(msg(0, 4, 7)), tag7);
}

TEST(Match, UnexpectedNonOvertaking) {
  MatchTable t;
  for (int i = 0; i < 5; ++i) t.addUnexpected(unexpected(msg(0, 1, 9, i)));
  t.addUnexpected(unexpected(msg(0, 2, 9, 100)));
  // Same source and tag: taken in arrival order.
  for (int i = 0; i < 5; ++i) {
    Unexpected* u = t.findUnexpected(0, 1, 9, true);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->hdr.size, static_cast<uint64_t>(i));
    delete u;
  }
  // Probe without taking, then take.
  Unexpected* peek = t.findUnexpected(0, MPI_ANY_SOURCE, MPI_ANY_TAG, false);
  ASSERT_NE(peek, nullptr);
  EXPECT_EQ(peek->hdr.src, 2);
  EXPECT_EQ(t.unexpectedCount(0), 1u);
  delete t.findUnexpected(0, 2, MPI_ANY_TAG, true);
  EXPECT_EQ(t.unexpectedCount(0), 0u);
}

TEST(Match, CancelRemovesPosted) {
  MatchTable t;
  Request* a = recv(0, 1);
  Request* b = recv(0, 1);
  t.post(0, a);
  t.post(0, b);
  EXPECT_TRUE(t.removePosted(0, a));
  EXPECT_FALSE(t.removePosted(0, a));
  EXPECT_EQ(t.takePosted(msg(0, 0, 1)), b);
}
