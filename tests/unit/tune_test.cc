// The measured thresholds (core/tune.h): the decision from fake samples, the
// cache file (round trip, stale key, corrupt, unwritable place), the
// precedence of environment, cache and defaults, and the protocol window
// they give (p2p/protocol.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/tune.h"
#include "p2p/protocol.h"

namespace tune = loom::tune;
using loom::p2p::Kind;
using loom::p2p::ProtocolLimits;
using loom::p2p::selectProtocol;

namespace {

constexpr size_t K = 1024;

// getUs/otherUs per size; the sizes of the quick calibration by default.
std::vector<tune::Sample> samples(std::vector<std::pair<double, double>> t,
                                  std::vector<size_t> sizes = {16 * K, 64 * K, 256 * K}) {
  std::vector<tune::Sample> s;
  for (size_t i = 0; i < t.size(); ++i) s.push_back({sizes[i], t[i].first, t[i].second});
  return s;
}

std::string tempDir() {
  char tmpl[] = "/tmp/loom-tune-test-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

tune::Record record(size_t mn, size_t mx) {
  tune::Record r;
  r.key = tune::hostKey();
  r.values = {mn, mx, 0.4};
  r.samples = samples({{1.3, 2.6}, {3, 8}, {9, 19}});
  r.costUs = 1200;
  r.when = "2026-11-29T00:00:00Z";
  return r;
}

}  // namespace

TEST(TuneDecide, PipelineWinsEverywhereKeepsTheDefaults) {
  // AMD Zen 4: the pipeline beats CMA at every size.
  tune::Values v = tune::decide(samples({{3, 2}, {12, 6}, {40, 20}}));
  EXPECT_EQ(v.cmaMin, tune::defaults(false).cmaMin);
  EXPECT_EQ(v.cmaMax, tune::kNoMax);
}

TEST(TuneDecide, ClearWinAtTheLargestSampleReachesFourTimesAbove) {
  // Intel Xeon, quick run: CMA wins 16-256 KiB, by 2.2x at 256 KiB.
  tune::Values v = tune::decide(samples({{1.3, 2.6}, {3, 8.3}, {8.8, 19.1}}));
  EXPECT_EQ(v.cmaMin, 16 * K);
  EXPECT_EQ(v.cmaMax, 1024 * K);
}

TEST(TuneDecide, NarrowWinAtTheLargestSampleEndsThere) {
  tune::Values v = tune::decide(samples({{1.3, 2.6}, {3, 8.3}, {17, 19.1}}));
  EXPECT_EQ(v.cmaMin, 16 * K);
  EXPECT_EQ(v.cmaMax, 256 * K);
}

TEST(TuneDecide, WindowStartsAtTheFirstWinAndEndsAtTheLastConsecutiveOne) {
  // Full run shape: eager wins at 16 KiB, CMA 32-512 KiB, pipeline from 1 MiB.
  std::vector<size_t> sz = {16 * K, 32 * K, 64 * K, 128 * K, 256 * K, 512 * K, 1024 * K,
                            2048 * K, 4096 * K};
  tune::Values v = tune::decide(samples({{4.3, 3.0}, {2.5, 4.9}, {4.5, 8.1}, {8, 12.1},
                                         {14.4, 21.1}, {29, 38}, {72, 64}, {187, 128}, {432, 267}},
                                        sz));
  EXPECT_EQ(v.cmaMin, 32 * K);
  EXPECT_EQ(v.cmaMax, 512 * K);
}

TEST(TuneDecide, WinsWithinTheMarginDoNotCount) {
  // 0.95x is noise, not a win (kMargin 0.9).
  tune::Values v = tune::decide(samples({{2.5, 2.6}, {7.9, 8.3}, {18, 19.1}}));
  EXPECT_EQ(v.cmaMin, tune::defaults(false).cmaMin);
}

TEST(TuneDecide, LargeLastWinOpensTheWindow) {
  std::vector<size_t> sz = {4096 * K, 16384 * K};
  tune::Values v = tune::decide(samples({{400, 600}, {1500, 2500}}, sz));
  EXPECT_EQ(v.cmaMin, 4096 * K);
  EXPECT_EQ(v.cmaMax, tune::kNoMax);
}

TEST(TuneDecide, MissingMeasurementsNeverWin) {
  tune::Values v = tune::decide(samples({{0, 2.6}, {3, 0}}));
  EXPECT_EQ(v.cmaMin, tune::defaults(false).cmaMin);
  EXPECT_EQ(tune::decide({}).cmaMin, tune::defaults(false).cmaMin);
}

TEST(TuneCache, FormatParseRoundTrip) {
  tune::Record r = record(16 * K, tune::kNoMax), back;
  std::string why;
  ASSERT_TRUE(tune::parse(tune::format(r), &back, &why)) << why;
  EXPECT_EQ(back.key, r.key);
  EXPECT_EQ(back.values.cmaMin, 16 * K);
  EXPECT_EQ(back.values.cmaMax, tune::kNoMax);
  EXPECT_DOUBLE_EQ(back.values.rttUs, 0.4);
  ASSERT_EQ(back.samples.size(), 3u);
  EXPECT_EQ(back.samples[2].bytes, 256 * K);
  EXPECT_EQ(back.when, r.when);
}

TEST(TuneCache, CorruptTextIsRefused) {
  tune::Record out;
  std::string why;
  std::string good = tune::format(record(16 * K, 1024 * K));
  EXPECT_FALSE(tune::parse("garbage without equals\n", &out, &why));
  EXPECT_FALSE(tune::parse("", &out, &why));  // no key at all
  std::string bad = good;
  bad.replace(bad.find("shm_cma_min = 16K"), 17, "shm_cma_min = lots");
  EXPECT_FALSE(tune::parse(bad, &out, &why));
  EXPECT_NE(why.find("shm_cma_min"), std::string::npos) << why;
  std::string inverted = good;
  inverted.replace(inverted.find("shm_cma_min = 16K"), 17, "shm_cma_min = 2M");
  EXPECT_FALSE(tune::parse(inverted, &out, &why));
  std::string truncated = good.substr(0, good.find("shm_cma_max"));
  EXPECT_FALSE(tune::parse(truncated, &out, &why));
}

TEST(TuneCache, StoreLoadStaleCorruptMissing) {
  std::string dir = tempDir() + "/sub/dir";  // store creates the directories
  std::string path = dir + "/tune-h.conf";
  std::string why;
  tune::Record r = record(32 * K, 512 * K), back;
  EXPECT_EQ(tune::load(path, tune::hostKey(), &back, &why), tune::Load::kMissing);
  ASSERT_TRUE(tune::store(path, r, &why)) << why;
  ASSERT_EQ(tune::load(path, tune::hostKey(), &back, &why), tune::Load::kOk) << why;
  EXPECT_EQ(back.values.cmaMax, 512 * K);
  // Another kernel, CPU or Loom: stale.
  tune::Key other = tune::hostKey();
  other.kernel += "-other";
  EXPECT_EQ(tune::load(path, other, &back, &why), tune::Load::kStale);
  other = tune::hostKey();
  other.version = "0.0.0-old";
  EXPECT_EQ(tune::load(path, other, &back, &why), tune::Load::kStale);
  EXPECT_NE(why.find("another machine"), std::string::npos) << why;
  writeFile(path, "cpu = x\nshm_cma_min = 1\n\x01\x02 binary junk\n");
  EXPECT_EQ(tune::load(path, tune::hostKey(), &back, &why), tune::Load::kCorrupt);
  // No temporary file is left behind by store.
  ASSERT_TRUE(tune::store(path, r, &why)) << why;
  EXPECT_EQ(access(path.c_str(), R_OK), 0);
  std::string cmd = "test $(ls " + dir + " | wc -l) -eq 1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  std::system(("rm -rf " + dir.substr(0, dir.size() - 8)).c_str());
}

TEST(TuneCache, UnwritablePlaceIsReportedNotFatal) {
  // A directory below a regular file cannot be created, even by root.
  std::string base = tempDir();
  writeFile(base + "/file", "x");
  std::string path = base + "/file/loom/tune-h.conf";
  std::string why;
  EXPECT_FALSE(tune::writable(path, &why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(tune::store(path, record(16 * K, 1024 * K), &why));
  EXPECT_FALSE(tune::shouldCalibrate(
      tune::resolve(false, tune::Mode::kAuto, path, "auto", "auto"), tune::Mode::kAuto, false));
  std::system(("rm -rf " + base).c_str());
}

TEST(TuneResolve, DefaultsCacheEnvironmentInThatOrder) {
  std::string path = tempDir() + "/tune-h.conf";
  std::string why;
  // Nothing cached: the defaults, and a job should measure.
  tune::Resolved r = tune::resolve(false, tune::Mode::kAuto, path, "auto", "auto");
  EXPECT_EQ(r.cmaMin, tune::Source::kDefault);
  EXPECT_EQ(r.values.cmaMin, size_t{64} << 20);
  EXPECT_EQ(r.state, tune::Load::kMissing);
  EXPECT_TRUE(tune::shouldCalibrate(r, tune::Mode::kAuto, true));
  // Cached: used, and nothing to measure.
  ASSERT_TRUE(tune::store(path, record(16 * K, 1024 * K), &why)) << why;
  r = tune::resolve(false, tune::Mode::kAuto, path, "auto", "auto");
  EXPECT_EQ(r.cmaMin, tune::Source::kCached);
  EXPECT_EQ(r.cmaMax, tune::Source::kCached);
  EXPECT_EQ(r.values.cmaMin, 16 * K);
  EXPECT_EQ(r.values.cmaMax, 1024 * K);
  EXPECT_FALSE(tune::shouldCalibrate(r, tune::Mode::kAuto, true));
  EXPECT_TRUE(tune::shouldCalibrate(r, tune::Mode::kRefresh, true));
  EXPECT_NE(tune::describe(r).find("16K (cached)"), std::string::npos) << tune::describe(r);
  // The environment beats the cache; a minimum alone opens the window.
  r = tune::resolve(false, tune::Mode::kAuto, path, "128k", "auto");
  EXPECT_EQ(r.cmaMin, tune::Source::kEnv);
  EXPECT_EQ(r.values.cmaMin, 128 * K);
  EXPECT_EQ(r.values.cmaMax, tune::kNoMax);
  r = tune::resolve(false, tune::Mode::kAuto, path, "auto", "64k");
  EXPECT_EQ(r.cmaMin, tune::Source::kCached);
  EXPECT_EQ(r.cmaMax, tune::Source::kEnv);
  EXPECT_EQ(r.values.cmaMax, 64 * K);
  r = tune::resolve(false, tune::Mode::kAuto, path, "32k", "2m");
  EXPECT_FALSE(tune::shouldCalibrate(r, tune::Mode::kAuto, true));  // nothing left to measure
  // A measurement never overrides the environment.
  tune::adopt(&r, {16 * K, 256 * K, 0.5});
  EXPECT_EQ(r.values.cmaMin, 32 * K);
  EXPECT_EQ(r.values.cmaMax, 2048 * K);
  EXPECT_EQ(r.rtt, tune::Source::kMeasured);
  // Oversubscribed: the defaults, whatever is cached, and no measurement.
  r = tune::resolve(true, tune::Mode::kAuto, path, "auto", "auto");
  EXPECT_EQ(r.cmaMin, tune::Source::kDefault);
  EXPECT_EQ(r.values.cmaMin, 32 * K);
  EXPECT_FALSE(tune::shouldCalibrate(r, tune::Mode::kAuto, true));
  // LOOM_TUNE=0: no cache is read, nothing measured.
  r = tune::resolve(false, tune::Mode::kOff, path, "auto", "auto");
  EXPECT_EQ(r.cmaMin, tune::Source::kDefault);
  EXPECT_FALSE(tune::shouldCalibrate(r, tune::Mode::kOff, true));
  // Stale or corrupt: the defaults until measured again.
  writeFile(path, "not a record\n");
  r = tune::resolve(false, tune::Mode::kAuto, path, "auto", "auto");
  EXPECT_EQ(r.state, tune::Load::kCorrupt);
  EXPECT_EQ(r.cmaMin, tune::Source::kDefault);
  EXPECT_TRUE(tune::shouldCalibrate(r, tune::Mode::kAuto, true));
  tune::Record old = record(16 * K, 1024 * K);
  old.key.kernel = "1.0-old";
  ASSERT_TRUE(tune::store(path, old, &why));
  r = tune::resolve(false, tune::Mode::kAuto, path, "auto", "auto");
  EXPECT_EQ(r.state, tune::Load::kStale);
  EXPECT_EQ(r.values.cmaMin, size_t{64} << 20);
  EXPECT_TRUE(tune::shouldCalibrate(r, tune::Mode::kAuto, true));
  std::system(("rm -rf " + path.substr(0, path.rfind('/'))).c_str());
}

TEST(TuneProtocol, MeasuredWindowReachesBelowTheEagerLimit) {
  ProtocolLimits l;
  l.eagerMax = 16 * K;
  l.maxPayload = 64 * K;
  l.getMin = 16 * K;
  l.getMax = 1024 * K;
  l.getBelowEager = true;
  EXPECT_EQ(selectProtocol(16 * K - 1, true, l), Kind::kEager);
  EXPECT_EQ(selectProtocol(16 * K, true, l), Kind::kRtsGet);
  EXPECT_EQ(selectProtocol(16 * K + 1, true, l), Kind::kRtsGet);
  EXPECT_EQ(selectProtocol(1024 * K, true, l), Kind::kRtsGet);
  EXPECT_EQ(selectProtocol(1024 * K + 1, true, l), Kind::kRtsPipeline);
  EXPECT_EQ(selectProtocol(16 * K, false, l), Kind::kEager);  // non-contiguous: no read
  l.get = false;  // CMA forbidden on this node
  EXPECT_EQ(selectProtocol(64 * K, true, l), Kind::kRtsPipeline);
  EXPECT_EQ(selectProtocol(16 * K, true, l), Kind::kEager);
  // A minimum from the environment (getBelowEager false) takes rendezvous sizes only.
  l.get = true;
  l.getBelowEager = false;
  l.getMin = 0;
  l.getMax = SIZE_MAX;
  EXPECT_EQ(selectProtocol(100, true, l), Kind::kEager);
  EXPECT_EQ(selectProtocol(16 * K + 1, true, l), Kind::kRtsGet);
}
