// Whether a large pipeline message is copied through the caches or streamed
// past them (copy.h) is measured, not fixed, because the better way depends
// on where the host puts the two processes' vCPUs, and that changes while a
// job runs (docs/benchmarks.md, "What decides bandwidth"):
//   - sharing a last-level cache, a cached copy moves 1 MB in ~50 us and a
//     streamed one in ~105 us (the data goes to memory and back);
//   - on different CCDs, the cached copy takes ~210 us (every ring line is
//     fetched from the other CCD's cache) and the streamed one ~113 us.
//
// The receiver keeps, per peer and per size class (powers of two from
// 16 KiB), the recent cost per byte of each way, measured from its clear to
// send (or the end of the peer's previous message, see finished) to the
// last byte landed. It uses the cheaper way (streaming only when
// clearly cheaper, see kStreamWins) and tries the other
// once every kProbeEvery messages but at most once per kProbeTicks, so a
// change of placement is noticed within a hundred messages or a few
// milliseconds, whichever is later. The first messages of a class try
// both ways twice (kWarmup).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace loom::p2p {

// A cheap monotonic tick count; only ratios of tick counts are used.
inline uint64_t ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

class StreamChoice {
 public:
  static constexpr int kClasses = 10;         // 16 KiB, 32 KiB, ..., 8 MiB and above
  static constexpr uint32_t kProbeEvery = 32;  // one message in this many tries the other way
  static constexpr float kOutlier = 2.0f;      // a sample counts at most this many times the mean
  // Streaming must win clearly: it also leaves the destination out of the
  // receiver's cache, which costs whatever reads it next (a ping-pong's reply
  // from the same buffer), and that is not in the measurement. In 64 KiB
  // ping-pongs with a shared cache the two ways measured alike on one side
  // while the cached way was twice as fast end to end; across CCDs the
  // streamed way measures about half the cached one.
  static constexpr float kStreamWins = 0.7f;
  // And at most one probe per this many ticks (~5-8 ms at 2-3 GHz). A probe
  // in a stream of messages pays for the state the other way left: a cached
  // 1 MiB message among streamed ones measured 1.0 tick/B against 0.17 for
  // its neighbours, so one probe in 32 cost a window of 1 MiB messages 15%
  // of its bandwidth. Placements last minutes; milliseconds to notice are
  // enough.
  static constexpr uint64_t kProbeTicks = uint64_t{1} << 24;
  static constexpr float kProbeShare = 32.0f;
  // The first messages of a size class alternate, cached first: the first
  // of each way pays for pages touched the first time, and only a later,
  // faster one shows its real cost (costs fall at once, rise slowly).
  static constexpr uint32_t kWarmup = 4;

  // Whether the next message of `bytes`, whose clear to send leaves at tick
  // `now`, should be streamed.
  bool pick(size_t bytes, uint64_t now) {
    Cell& c = cells_[classOf(bytes)];
    if (c.warm < kWarmup) return (c.warm++ & 1) != 0;
    if (c.cost[0] == 0.0f) return false;
    if (c.cost[1] == 0.0f) return true;
    const bool best = c.cost[1] < kStreamWins * c.cost[0];
    // A probe costs the other way's extra; keep probes kProbeShare times
    // that apart, so they cost a stream of messages ~1/kProbeShare of its
    // time whatever the ratio (8x across CCDs for a cached 1 MiB message).
    const float extra = (best ? c.cost[0] - c.cost[1] : c.cost[1] - c.cost[0]) *
                        static_cast<float>(bytes) * kProbeShare;
    const uint64_t gap = extra > static_cast<float>(kProbeTicks) ? static_cast<uint64_t>(extra)
                                                                 : kProbeTicks;
    if (++c.picks >= kProbeEvery && now - c.lastProbe >= gap) {
      c.picks = 0;
      c.lastProbe = now;
      return !best;
    }
    return best;
  }

  // A message of `bytes`, copied the way `streamed` says, whose clear to
  // send left at tick `start`, landed its last byte at `now`. Its cost runs
  // from `start` or from the end of the previous message of this peer,
  // whichever is later: one sender streams its messages one after another,
  // so a message whose clear to send went out while earlier ones were still
  // moving (a window of nonblocking receives) waited for them, and that
  // wait is theirs, not its own. Counting it made streamed windows of 1 MiB
  // look as costly as cached ones, and auto kept the cached way at half the
  // streamed bandwidth.
  void finished(size_t bytes, bool streamed, uint64_t start, uint64_t now) {
    const uint64_t from = start > lastDone_ ? start : lastDone_;
    lastDone_ = now;
    record(bytes, streamed, now > from ? now - from : 0);
  }

  // What a message of `bytes` cost, copied the way `streamed` says.
  void record(size_t bytes, bool streamed, uint64_t elapsed) {
    if (bytes == 0) return;
    float& mean = cells_[classOf(bytes)].cost[streamed ? 1 : 0];
    float sample = static_cast<float>(elapsed) / static_cast<float>(bytes);
    if (sample <= 0.0f) sample = 1e-6f;
    if (mean == 0.0f || sample < mean) {
      mean = sample;  // faster than usual is real: nothing makes a copy look fast
    } else {
      // Slower than usual: partly noise (a preempted or delayed peer), so it
      // moves the mean less and counts at most twice the mean. A real change
      // (~4x) still takes over within a few messages.
      if (sample > kOutlier * mean) sample = kOutlier * mean;
      mean += (sample - mean) * 0.25f;
    }
  }

  // The current estimate (ticks per byte, 0 when not measured yet).
  float cost(size_t bytes, bool streamed) const {
    return cells_[classOf(bytes)].cost[streamed ? 1 : 0];
  }

  static int classOf(size_t bytes) {
    int c = 0;
    for (size_t b = bytes >> 15; b && c < kClasses - 1; b >>= 1) ++c;
    return c;
  }

 private:
  struct Cell {
    float cost[2] = {0.0f, 0.0f};  // ticks per byte: [0] cached, [1] streamed
    uint32_t warm = 0;        // warm-up picks made
    uint32_t picks = 0;       // since the last probe
    uint64_t lastProbe = 0;   // tick of the last probe
  };
  Cell cells_[kClasses];
  uint64_t lastDone_ = 0;  // tick at which this peer's last measured message landed
};

}  // namespace loom::p2p
