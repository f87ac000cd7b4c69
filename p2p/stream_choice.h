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
// send to the last byte landed. It uses the cheaper way (streaming only when
// clearly cheaper, see kStreamWins) and tries the other
// once every kProbeEvery messages, so a change of placement is noticed
// within a hundred messages or so. A way not measured yet is tried first.
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

  // Whether the next message of `bytes` should be streamed.
  bool pick(size_t bytes) {
    Cell& c = cells_[classOf(bytes)];
    if (c.cost[0] == 0.0f) return false;
    if (c.cost[1] == 0.0f) return true;
    const bool best = c.cost[1] < kStreamWins * c.cost[0];
    return ++c.picks % kProbeEvery == 0 ? !best : best;
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
    uint32_t picks = 0;
  };
  Cell cells_[kClasses];
};

}  // namespace loom::p2p
