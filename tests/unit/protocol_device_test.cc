// Protocol choice for device buffers (p2p/protocol.h): which protocol a
// send takes by memory kind, layout, size and transport, how a receive
// takes each rendezvous, and the chunk size of staged pipelines; at every
// threshold, plus and minus one.
#include <gtest/gtest.h>

#include "p2p/protocol.h"

using loom::device::MemKind;
using loom::p2p::deviceChunk;
using loom::p2p::Kind;
using loom::p2p::Protocol;
using loom::p2p::ProtocolLimits;
using loom::p2p::RndvMode;
using loom::p2p::selectProtocol;
using loom::p2p::selectTake;
using loom::p2p::Staging;
using loom::p2p::Take;

namespace {

// shm-like limits: eager to 16 KiB, CMA from 1 MiB, IPC from 32 KiB,
// chunked staging from 1 MiB in 256 KiB chunks.
ProtocolLimits shmLimits() {
  ProtocolLimits l;
  l.inlineMax = 24;
  l.eagerMax = 16384;
  l.getMin = 1 << 20;
  l.maxPayload = 65536;
  l.rndv = RndvMode::kAuto;
  l.get = true;
  l.ipc = true;
  l.ipcMin = 32768;
  l.devPipelineMin = 1 << 20;
  l.devChunk = 256 << 10;
  return l;
}

// ofi-like: no IPC (another node), reads from the eager size up.
ProtocolLimits netLimits() {
  ProtocolLimits l = shmLimits();
  l.ipc = false;
  l.getMin = 0;
  return l;
}

Protocol dev(size_t bytes, const ProtocolLimits& l, bool contiguous = true) {
  return selectProtocol(bytes, contiguous, MemKind::kDevice, l);
}

bool same(Protocol p, Kind k, Staging s) {
  return p.kind == k && p.staging == s;
}

}  // namespace

TEST(ProtocolDevice, HostBuffersKeepTheHostChoice) {
  const ProtocolLimits l = shmLimits();
  for (size_t b : {size_t{0}, size_t{24}, size_t{25}, size_t{16384}, size_t{16385}, size_t{1} << 20,
                   size_t{64} << 20}) {
    for (bool contiguous : {true, false}) {
      const Protocol p = selectProtocol(b, contiguous, MemKind::kHost, l);
      EXPECT_EQ(p.kind, selectProtocol(b, contiguous, l)) << b;
      EXPECT_EQ(p.staging, Staging::kNone) << b;
    }
  }
}

TEST(ProtocolDevice, IpcThresholdOnANode) {
  const ProtocolLimits l = shmLimits();
  EXPECT_TRUE(same(dev(0, l), Kind::kInline, Staging::kWhole));  // nothing to copy
  EXPECT_TRUE(same(dev(1, l), Kind::kInline, Staging::kWhole));
  EXPECT_TRUE(same(dev(16384, l), Kind::kEager, Staging::kWhole));
  EXPECT_TRUE(same(dev(16385, l), Kind::kRtsPipeline, Staging::kWhole));
  EXPECT_TRUE(same(dev(32767, l), Kind::kRtsPipeline, Staging::kWhole));
  EXPECT_TRUE(same(dev(32768, l), Kind::kRtsIpc, Staging::kNone));
  EXPECT_TRUE(same(dev(32769, l), Kind::kRtsIpc, Staging::kNone));
  EXPECT_TRUE(same(dev(size_t{64} << 20, l), Kind::kRtsIpc, Staging::kNone));
}

TEST(ProtocolDevice, IpcForcedDownToOneByte) {
  ProtocolLimits l = shmLimits();
  l.ipcMin = 1;
  EXPECT_TRUE(same(dev(0, l), Kind::kInline, Staging::kWhole));
  EXPECT_TRUE(same(dev(1, l), Kind::kRtsIpc, Staging::kNone));
  EXPECT_TRUE(same(dev(100, l), Kind::kRtsIpc, Staging::kNone));
}

TEST(ProtocolDevice, IpcOffStagesInChunksOrWhole) {
  ProtocolLimits l = shmLimits();
  l.ipc = false;  // LOOM_DEVICE_IPC=0
  EXPECT_TRUE(same(dev(32768, l), Kind::kRtsPipeline, Staging::kWhole));
  EXPECT_TRUE(same(dev((1 << 20) - 1, l), Kind::kRtsPipeline, Staging::kWhole));
  EXPECT_TRUE(same(dev(1 << 20, l), Kind::kRtsPipeline, Staging::kChunked));
  EXPECT_TRUE(same(dev((1 << 20) + 1, l), Kind::kRtsPipeline, Staging::kChunked));
  // Whole staging of a large message follows the host rules (CMA from getMin)
  // only below the pipeline threshold; the chunked path never exposes a twin.
  l.devPipelineMin = size_t{1} << 40;
  EXPECT_TRUE(same(dev(1 << 20, l), Kind::kRtsGet, Staging::kWhole));
}

TEST(ProtocolDevice, BetweenNodesNeverIpc) {
  const ProtocolLimits l = netLimits();
  EXPECT_TRUE(same(dev(16384, l), Kind::kEager, Staging::kWhole));
  EXPECT_TRUE(same(dev(16385, l), Kind::kRtsGet, Staging::kWhole));
  EXPECT_TRUE(same(dev((1 << 20) - 1, l), Kind::kRtsGet, Staging::kWhole));
  EXPECT_TRUE(same(dev(1 << 20, l), Kind::kRtsPipeline, Staging::kChunked));
  EXPECT_TRUE(same(dev(size_t{64} << 20, l), Kind::kRtsPipeline, Staging::kChunked));
}

TEST(ProtocolDevice, PipelineThresholdBelowEagerStaysEager) {
  ProtocolLimits l = netLimits();
  l.devPipelineMin = 1;  // "pipeline everything" still sends eager messages whole
  EXPECT_TRUE(same(dev(100, l), Kind::kEager, Staging::kWhole));
  EXPECT_TRUE(same(dev(16384, l), Kind::kEager, Staging::kWhole));
  EXPECT_TRUE(same(dev(16385, l), Kind::kRtsPipeline, Staging::kChunked));
}

TEST(ProtocolDevice, NonContiguousAlwaysStagedWhole) {
  const ProtocolLimits l = shmLimits();
  for (size_t b : {size_t{100}, size_t{32768}, size_t{1} << 20, size_t{64} << 20}) {
    const Protocol p = dev(b, l, false);
    EXPECT_EQ(p.staging, Staging::kWhole) << b;
    EXPECT_EQ(p.kind, selectProtocol(b, false, l)) << b;
  }
}

TEST(ProtocolDevice, HowAReceiveTakesARendezvous) {
  for (MemKind m : {MemKind::kHost, MemKind::kDevice}) {
    // IPC: any contiguous receive (device-to-device or device-to-host).
    EXPECT_EQ(selectTake(Kind::kRtsIpc, true, m), Take::kIpc);
    EXPECT_EQ(selectTake(Kind::kRtsIpc, false, m), Take::kPipeline);
    EXPECT_EQ(selectTake(Kind::kRtsPipeline, true, m), Take::kPipeline);
    EXPECT_EQ(selectTake(Kind::kRtsGet, false, m), Take::kPipeline);
  }
  // A transport's read writes host memory only: a device receive asks for
  // the records instead.
  EXPECT_EQ(selectTake(Kind::kRtsGet, true, MemKind::kHost), Take::kGet);
  EXPECT_EQ(selectTake(Kind::kRtsGet, true, MemKind::kDevice), Take::kPipeline);
}

TEST(ProtocolDevice, ChunkSizes) {
  ProtocolLimits l = shmLimits();
  EXPECT_EQ(deviceChunk(0, l), 1u);
  EXPECT_EQ(deviceChunk(1000, l), 1000u);  // whole: one slot
  EXPECT_EQ(deviceChunk((1 << 20) - 1, l), (1u << 20) - 1);
  EXPECT_EQ(deviceChunk(1 << 20, l), 256u << 10);
  EXPECT_EQ(deviceChunk(size_t{64} << 20, l), 256u << 10);
}

TEST(ProtocolDevice, KindNames) {
  EXPECT_STREQ(loom::p2p::kindName(Kind::kRtsIpc), "rndv-ipc");
}
