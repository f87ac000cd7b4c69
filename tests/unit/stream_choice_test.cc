// The receiver's choice between cached and streamed copies of large
// pipeline messages (p2p/stream_choice.h), driven with made-up costs.
#include <gtest/gtest.h>

#include "p2p/stream_choice.h"

using loom::p2p::StreamChoice;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Runs `n` messages of `bytes` through `c`, where a cached copy costs
// `cached` ticks per byte and a streamed one `streamed`; returns how many
// were streamed.
// `step`: ticks between two messages' clears to send (by default enough
// for every probe that kProbeEvery allows).
int run(StreamChoice& c, size_t bytes, int n, float cached, float streamed,
        uint64_t step = StreamChoice::kProbeTicks) {
  static uint64_t now = 0;
  int s = 0;
  for (int i = 0; i < n; ++i) {
    now += step;
    bool st = c.pick(bytes, now);
    s += st;
    c.record(bytes, st, static_cast<uint64_t>((st ? streamed : cached) * static_cast<float>(bytes)));
  }
  return s;
}

}  // namespace

TEST(StreamChoice, SizeClasses) {
  EXPECT_EQ(StreamChoice::classOf(0), 0);
  EXPECT_EQ(StreamChoice::classOf(16384), 0);
  EXPECT_EQ(StreamChoice::classOf(32767), 0);
  EXPECT_EQ(StreamChoice::classOf(32768), 1);
  EXPECT_EQ(StreamChoice::classOf(65535), 1);
  EXPECT_EQ(StreamChoice::classOf(65536), 2);
  EXPECT_EQ(StreamChoice::classOf(kMiB), 6);
  EXPECT_EQ(StreamChoice::classOf(8 * kMiB - 1), 8);
  EXPECT_EQ(StreamChoice::classOf(8 * kMiB), 9);
  EXPECT_EQ(StreamChoice::classOf(size_t{1} << 40), StreamChoice::kClasses - 1);
}

TEST(StreamChoice, TriesBothWaysFirst) {
  StreamChoice c;
  EXPECT_FALSE(c.pick(kMiB, 1));
  c.record(kMiB, false, kMiB);
  EXPECT_TRUE(c.pick(kMiB, 2));
  c.record(kMiB, true, kMiB);
  EXPECT_GT(c.cost(kMiB, false), 0.0f);
  EXPECT_GT(c.cost(kMiB, true), 0.0f);
  // Other size classes know nothing yet.
  EXPECT_EQ(c.cost(64 * 1024, false), 0.0f);
  EXPECT_FALSE(c.pick(64 * 1024, 3));
}

TEST(StreamChoice, CachedWhenNearProbingStreamedRarely) {
  StreamChoice c;
  int s = run(c, kMiB, 320, 0.5f, 1.0f);
  // Two warm-up messages, then one probe in kProbeEvery.
  EXPECT_LE(s, 1 + 320 / static_cast<int>(StreamChoice::kProbeEvery) + 1);
  EXPECT_GE(s, 320 / static_cast<int>(StreamChoice::kProbeEvery) - 1);
}

TEST(StreamChoice, StreamedWhenFar) {
  StreamChoice c;
  int s = run(c, kMiB, 320, 2.0f, 1.0f);
  EXPECT_GE(s, 320 - 1 - 320 / static_cast<int>(StreamChoice::kProbeEvery) - 1);
}

TEST(StreamChoice, StreamingMustWinClearly) {
  // Streamed measured a little cheaper (it also evicts the destination, which
  // the measurement does not see): stay cached.
  StreamChoice c;
  int s = run(c, kMiB, 320, 1.0f, 0.8f);
  EXPECT_LE(s, 1 + 320 / static_cast<int>(StreamChoice::kProbeEvery) + 1);
}

TEST(StreamChoice, FollowsAChangeOfPlacement) {
  StreamChoice c;
  run(c, kMiB, 200, 0.5f, 1.0f);  // near: cached
  // The vCPUs move apart: cached copies now cost 4x. Within a few messages
  // the choice is streaming and stays there.
  run(c, kMiB, 20, 2.0f, 1.0f);
  EXPECT_GE(run(c, kMiB, 64, 2.0f, 1.0f), 64 - 3);
  // And back: the next probes of the cached way notice.
  run(c, kMiB, 2 * StreamChoice::kProbeEvery + 2, 0.5f, 1.0f);
  EXPECT_LE(run(c, kMiB, 64, 0.5f, 1.0f), 3);
}

TEST(StreamChoice, OneSlowMessageDoesNotFlipTheChoice) {
  StreamChoice c;
  run(c, kMiB, 100, 0.5f, 1.0f);
  bool st = c.pick(kMiB, 0);
  ASSERT_FALSE(st);
  c.record(kMiB, false, static_cast<uint64_t>(1000.0f * kMiB));  // preempted for a while
  EXPECT_LE(run(c, kMiB, 20, 0.5f, 1.0f), 1);
}

TEST(StreamChoice, ZeroBytesAndZeroTicksAreHarmless) {
  StreamChoice c;
  c.record(0, false, 100);
  EXPECT_EQ(c.cost(0, false), 0.0f);
  c.record(kMiB, false, 0);
  EXPECT_GT(c.cost(kMiB, false), 0.0f);
}

TEST(StreamChoice, ProbesAtMostOncePerInterval) {
  StreamChoice c;
  run(c, kMiB, 2, 0.5f, 1.0f);  // both ways measured
  // Messages 64 times as often as probes may be: one probe in 64, not in 32.
  int s = run(c, kMiB, 640, 0.5f, 1.0f, StreamChoice::kProbeTicks / 64);
  EXPECT_LE(s, 640 / 64 + 1);
  EXPECT_GE(s, 640 / 64 - 1);
}

// A window of receives: every clear to send left at once, and the sender
// streams the messages one after another. Each costs its own copy, not the
// wait for the ones before it.
TEST(StreamChoice, QueuedMessagesCountFromThePreviousOne) {
  StreamChoice c;
  const uint64_t start = 1000;
  for (int i = 1; i <= 8; ++i) c.finished(kMiB, true, start, start + i * kMiB);
  EXPECT_FLOAT_EQ(c.cost(kMiB, true), 1.0f);
  // A message whose clear to send left after the previous one landed
  // counts from its clear to send.
  c.finished(kMiB, true, start + 20 * kMiB, start + 20 * kMiB + kMiB / 2);
  EXPECT_FLOAT_EQ(c.cost(kMiB, true), 0.5f);
}
