// The program's device streams (core/device_stream.h) on the mock backend:
// a mock stream runs its queue in order on a thread of its own, marks pass
// when reached, a gate stops the stream until it is opened (a cyclic >=,
// as cuStreamWaitValue32), copy errors surface at synchronisation, and
// Loom's own streams stay synchronous.
#include "core/device_stream.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/device.h"
#include "core/device_stream_impl.h"

namespace {

namespace dev = loom::device;
namespace ms = loom::device::mockstream;
using namespace std::chrono_literals;

class DeviceStream : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = dev::setBackendForTest(dev::Backend::kMock);
    s_ = ms::create();
    ASSERT_TRUE(dev::userStream(reinterpret_cast<uintptr_t>(s_), &stream_).isOk());
  }
  void TearDown() override {
    ms::destroy(s_);
    dev::setBackendForTest(prev_);
  }
  // Polls `done` for up to `limit`.
  template <class F>
  static bool eventually(F done, std::chrono::milliseconds limit = 5000ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }
  dev::Backend prev_ = dev::Backend::kNone;
  void* s_ = nullptr;
  dev::Stream stream_;
};

// A "kernel" long enough that the test queues everything behind it before
// it ends, even on a loaded machine.
void sleepThenSet(void* arg) {
  std::this_thread::sleep_for(300ms);
  static_cast<std::atomic<bool>*>(arg)->store(true);
}

TEST_F(DeviceStream, RunsInOrderAndStopsAtAGate) {
  std::vector<int> src(64), dst(64, -1);
  for (int i = 0; i < 64; ++i) src[i] = i * 3;
  void* d = dev::deviceAlloc(sizeof(int) * 64);
  ASSERT_NE(d, nullptr);
  dev::Gate g;
  ASSERT_TRUE(dev::gateCreate(&g).isOk());
  std::atomic<bool> kernel{false};
  ms::launch(s_, sleepThenSet, &kernel);
  ASSERT_TRUE(dev::copyAsync(d, src.data(), sizeof(int) * 64, stream_).isOk());
  dev::Fence trigger, retire;
  ASSERT_TRUE(dev::fenceRecord(stream_, &trigger).isOk());
  ASSERT_TRUE(dev::streamWaitGate(stream_, g, 1).isOk());
  ASSERT_TRUE(dev::copyAsync(dst.data(), d, sizeof(int) * 64, stream_).isOk());
  ASSERT_TRUE(dev::fenceRecord(stream_, &retire).isOk());
  // Everything was queued behind a 300 ms kernel: nothing has run yet.
  EXPECT_FALSE(dev::fenceDone(trigger));
  EXPECT_TRUE(eventually([&] { return dev::fenceDone(trigger); }));
  EXPECT_TRUE(kernel.load());  // the mark comes after the kernel
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(dev::fenceDone(retire));  // the gate holds the stream
  EXPECT_EQ(dst[0], -1);
  dev::gateOpen(g, 1);
  EXPECT_TRUE(eventually([&] { return dev::fenceDone(retire); }));
  EXPECT_EQ(dst, src);
  EXPECT_TRUE(ms::synchronize(s_).isOk());
  dev::fenceDestroy(trigger);
  dev::fenceDestroy(retire);
  dev::gateDestroy(g);
  dev::deviceFree(d);
}

TEST_F(DeviceStream, GatesCompareCyclically) {
  dev::Gate g;
  ASSERT_TRUE(dev::gateCreate(&g).isOk());
  dev::gateOpen(g, 0xfffffff0u);
  dev::Fence a, b;
  ASSERT_TRUE(dev::streamWaitGate(stream_, g, 0xfffffff0u).isOk());  // open already
  ASSERT_TRUE(dev::fenceRecord(stream_, &a).isOk());
  ASSERT_TRUE(dev::streamWaitGate(stream_, g, 5).isOk());  // past the wrap
  ASSERT_TRUE(dev::fenceRecord(stream_, &b).isOk());
  EXPECT_TRUE(eventually([&] { return dev::fenceDone(a); }));
  dev::gateOpen(g, 0xffffffffu);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(dev::fenceDone(b));  // 0xffffffff is "before" 5
  dev::gateOpen(g, 5);
  EXPECT_TRUE(eventually([&] { return dev::fenceDone(b); }));
  EXPECT_EQ(dev::gateValue(g), 5u);
  dev::fenceDestroy(a);
  dev::fenceDestroy(b);
  dev::gateDestroy(g);
}

TEST_F(DeviceStream, CopyErrorsSurfaceAtSynchronize) {
  void* d = dev::deviceAlloc(16);
  std::vector<char> h(64);
  // Queued fine; past the allocation's end when it runs.
  ASSERT_TRUE(dev::copyAsync(h.data(), d, 64, stream_).isOk());
  loom::Status st = ms::synchronize(s_);
  EXPECT_EQ(st.code(), MPI_ERR_OTHER);
  EXPECT_TRUE(ms::synchronize(s_).isOk());  // reported once
  dev::deviceFree(d);
}

TEST_F(DeviceStream, RefusesWhatIsNotAStream) {
  dev::Stream out;
  int x = 0;
  EXPECT_EQ(dev::userStream(reinterpret_cast<uintptr_t>(&x), &out).code(), MPI_ERR_ARG);
  EXPECT_EQ(dev::userStream(0, &out).code(), MPI_ERR_ARG);
  dev::setBackendForTest(dev::Backend::kNone);
  EXPECT_EQ(dev::userStream(reinterpret_cast<uintptr_t>(s_), &out).code(),
            MPI_ERR_UNSUPPORTED_OPERATION);
  dev::setBackendForTest(dev::Backend::kMock);
}

// Loom's own streams (staging) are not the program's: still synchronous.
TEST_F(DeviceStream, LoomStreamsStaySynchronous) {
  dev::Stream own;
  ASSERT_TRUE(dev::streamCreate(&own).isOk());
  void* d = dev::deviceAlloc(8);
  const uint64_t v = 0x1122334455667788ull;
  uint64_t back = 0;
  ASSERT_TRUE(dev::copyAsync(d, &v, 8, own).isOk());
  ASSERT_TRUE(dev::copyAsync(&back, d, 8, own).isOk());
  EXPECT_EQ(back, v);
  dev::Fence f;
  ASSERT_TRUE(dev::fenceRecord(own, &f).isOk());
  EXPECT_TRUE(dev::fenceDone(f));
  dev::fenceDestroy(f);
  dev::streamDestroy(own);
  dev::deviceFree(d);
}

}  // namespace
