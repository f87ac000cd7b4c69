#include <gtest/gtest.h>

#include "p2p/protocol.h"

using loom::p2p::Kind;
using loom::p2p::ProtocolLimits;
using loom::p2p::RndvMode;
using loom::p2p::selectProtocol;

namespace {
ProtocolLimits limits() {
  ProtocolLimits l;
  l.inlineMax = 24;
  l.eagerMax = 16384;
  l.getMin = 1 << 20;
  l.maxPayload = 65536;
  l.rndv = RndvMode::kAuto;
  l.get = true;
  return l;
}
}  // namespace

TEST(Protocol, EveryThresholdPlusMinusOne) {
  ProtocolLimits l = limits();
  EXPECT_EQ(selectProtocol(0, true, l), Kind::kInline);
  EXPECT_EQ(selectProtocol(23, true, l), Kind::kInline);
  EXPECT_EQ(selectProtocol(24, true, l), Kind::kInline);
  EXPECT_EQ(selectProtocol(25, true, l), Kind::kEager);
  EXPECT_EQ(selectProtocol(16383, true, l), Kind::kEager);
  EXPECT_EQ(selectProtocol(16384, true, l), Kind::kEager);
  EXPECT_EQ(selectProtocol(16385, true, l), Kind::kRtsPipeline);
  EXPECT_EQ(selectProtocol((1 << 20) - 1, true, l), Kind::kRtsPipeline);
  EXPECT_EQ(selectProtocol(1 << 20, true, l), Kind::kRtsGet);
  EXPECT_EQ(selectProtocol((1 << 20) + 1, true, l), Kind::kRtsGet);
}

TEST(Protocol, NonContiguousNeverUsesCma) {
  ProtocolLimits l = limits();
  EXPECT_EQ(selectProtocol(8 << 20, false, l), Kind::kRtsPipeline);
  l.rndv = RndvMode::kGet;
  EXPECT_EQ(selectProtocol(8 << 20, false, l), Kind::kRtsPipeline);
  EXPECT_EQ(selectProtocol(20000, false, l), Kind::kRtsPipeline);
  EXPECT_EQ(selectProtocol(100, false, l), Kind::kEager);  // eager packs anything
}

TEST(Protocol, ForcedModes) {
  ProtocolLimits l = limits();
  l.rndv = RndvMode::kGet;
  EXPECT_EQ(selectProtocol(16385, true, l), Kind::kRtsGet);
  l.rndv = RndvMode::kPipeline;
  EXPECT_EQ(selectProtocol(64 << 20, true, l), Kind::kRtsPipeline);
  l.rndv = RndvMode::kAuto;
  l.get = false;  // CMA forbidden here: fall back without an error
  EXPECT_EQ(selectProtocol(64 << 20, true, l), Kind::kRtsPipeline);
}

TEST(Protocol, EagerLimitedByTransportRecord) {
  ProtocolLimits l = limits();
  l.eagerMax = 1 << 20;
  l.maxPayload = 4000;  // a tiny ring carries small records only
  EXPECT_EQ(selectProtocol(4000, true, l), Kind::kEager);
  EXPECT_EQ(selectProtocol(4001, true, l), Kind::kRtsPipeline);
  l.eagerMax = 0;  // everything by rendezvous, except empty messages
  EXPECT_EQ(selectProtocol(0, true, l), Kind::kInline);
  EXPECT_EQ(selectProtocol(1, true, l), Kind::kRtsPipeline);
}
