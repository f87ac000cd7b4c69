// The device layer (core/device.h) through its mock backend: device memory
// the host cannot touch, copies in every direction, the memory-kind cache,
// IPC within one process, and the staging of typed buffers
// (core/device_stage.h) that MPI calls on device buffers run through.
#include "core/device.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "core/datatype.h"
#include "core/device_backend.h"
#include "core/device_stage.h"
#include "core/request.h"

namespace {

using loom::Datatype;
namespace dev = loom::device;

// Every test runs with the mock on and the cache on, and leaves the
// process as it found it (the other tests run without a backend).
class DeviceMock : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = dev::setBackendForTest(dev::Backend::kMock);
    prevCache_ = dev::setKindCacheForTest(true);
  }
  void TearDown() override {
    dev::setKindCacheForTest(prevCache_);
    dev::setBackendForTest(prev_);
  }
  dev::Backend prev_ = dev::Backend::kNone;
  bool prevCache_ = true;
};

Datatype* pre(MPI_Datatype h) {
  return loom::predefinedDatatype(reinterpret_cast<uintptr_t>(h));
}

TEST(Device, NoBackendIsAllHost) {
  const dev::Backend prev = dev::setBackendForTest(dev::Backend::kNone);
  int x = 0;
  EXPECT_FALSE(dev::active());
  EXPECT_EQ(dev::kindOf(&x), dev::MemKind::kHost);
  EXPECT_EQ(dev::deviceAlloc(64), nullptr);
  int y = 7;
  ASSERT_TRUE(dev::copy(&x, &y, sizeof x).isOk());
  EXPECT_EQ(x, 7);
  dev::setBackendForTest(prev);
}

TEST_F(DeviceMock, AllocationsAreDeviceMemory) {
  char* p = static_cast<char*>(dev::deviceAlloc(100));
  ASSERT_NE(p, nullptr);
  std::vector<char> host(100);
  EXPECT_EQ(dev::kindOf(p), dev::MemKind::kDevice);
  EXPECT_EQ(dev::kindOf(p + 99), dev::MemKind::kDevice);
  EXPECT_EQ(dev::kindOf(host.data()), dev::MemKind::kHost);
  EXPECT_EQ(dev::kindOf(nullptr), dev::MemKind::kHost);
  EXPECT_EQ(dev::count(), 1);
  dev::deviceFree(p);
}

// The point of the mock: a host access to its memory faults, as a host
// access to real device memory would.
TEST_F(DeviceMock, HostAccessFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  char* p = static_cast<char*>(dev::deviceAlloc(64));
  ASSERT_NE(p, nullptr);
  EXPECT_DEATH({ *reinterpret_cast<volatile char*>(p) = 1; }, "");
  EXPECT_DEATH({ std::printf("%d\n", *reinterpret_cast<volatile char*>(p + 10)); }, "");
  dev::deviceFree(p);
}

// Frees held (while a stream stands at a gate) happen when the hold ends:
// until then the memory stays allocated and usable.
TEST_F(DeviceMock, HeldFreesWaitForTheRelease) {
  char* p = static_cast<char*>(dev::deviceAlloc(4096));
  ASSERT_NE(p, nullptr);
  std::vector<char> in(4096, 5), out(4096, 0);
  ASSERT_TRUE(dev::copy(p, in.data(), in.size()).isOk());
  dev::holdFrees(true);
  dev::deviceFree(p);
  void* h = dev::hostAlloc(128);
  dev::hostFree(h);
  EXPECT_EQ(dev::kindOf(p), dev::MemKind::kDevice);
  ASSERT_TRUE(dev::copy(out.data(), p, out.size()).isOk());  // still mapped
  EXPECT_EQ(out, in);
  dev::holdFrees(false);
  EXPECT_EQ(dev::kindOf(p), dev::MemKind::kHost);  // gone now
}

TEST_F(DeviceMock, CopiesEveryDirection) {
  std::vector<int> a(1000), b(1000, 0);
  std::iota(a.begin(), a.end(), 1);
  int* d1 = static_cast<int*>(dev::deviceAlloc(4000));
  int* d2 = static_cast<int*>(dev::deviceAlloc(4000));
  ASSERT_TRUE(dev::copy(d1, a.data(), 4000).isOk());  // host to device
  ASSERT_TRUE(dev::copy(d2, d1, 4000).isOk());        // device to device
  ASSERT_TRUE(dev::copy(b.data(), d2, 4000).isOk());  // device to host
  EXPECT_EQ(a, b);
  // 2D: every other int of d1 into the same places of a fresh host array.
  std::vector<int> c(1000, -1);
  ASSERT_TRUE(dev::copy2D(c.data(), 8, d1, 8, 4, 500).isOk());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(c[i], i % 2 ? -1 : a[i]) << i;
  // Asynchronous copies and fences (at once on the mock).
  dev::Stream s;
  dev::Fence f;
  ASSERT_TRUE(dev::streamCreate(&s).isOk());
  ASSERT_TRUE(dev::copyAsync(b.data(), d1 + 10, 40, s).isOk());
  ASSERT_TRUE(dev::fenceRecord(s, &f).isOk());
  EXPECT_TRUE(dev::fenceWait(f).isOk());
  EXPECT_TRUE(dev::fenceDone(f));
  dev::fenceDestroy(f);
  dev::streamDestroy(s);
  EXPECT_EQ(b[0], 11);
  // A copy past the end of an allocation is an error, not a fault.
  EXPECT_FALSE(dev::copy(b.data(), d1 + 999, 8).isOk());
  // The read-write alias sees the same bytes.
  EXPECT_EQ(static_cast<int*>(dev::hostAlias(d1))[5], 6);
  EXPECT_EQ(dev::hostAlias(a.data()), nullptr);
  dev::deviceFree(d1);
  dev::deviceFree(d2);
}

TEST_F(DeviceMock, KindCacheRemembersAnswers) {
  std::vector<char> buf(3 * 4096);
  // The start of a page: the 64 bytes below are all on it.
  char* host = buf.data() + (4096 - reinterpret_cast<uintptr_t>(buf.data()) % 4096);
  char* d = static_cast<char*>(dev::deviceAlloc(1 << 16));
  const uint64_t q0 = dev::kindQueries();
  EXPECT_EQ(dev::kindOf(host), dev::MemKind::kHost);
  const uint64_t q1 = dev::kindQueries();
  EXPECT_EQ(q1, q0 + 1);  // asked once
  for (int i = 0; i < 100; ++i) EXPECT_EQ(dev::kindOf(host + (i % 64)), dev::MemKind::kHost);
  EXPECT_EQ(dev::kindQueries(), q1);  // then remembered (same page)
  // Loom's own allocations are known ranges: no query at all.
  EXPECT_EQ(dev::kindOf(d + 12345), dev::MemKind::kDevice);
  EXPECT_EQ(dev::kindQueries(), q1);
  // Freed: forgotten, and the next query asks again.
  dev::deviceFree(d);
  EXPECT_EQ(dev::kindOf(d), dev::MemKind::kHost);
  EXPECT_EQ(dev::kindQueries(), q1 + 1);
  // Off: every call asks.
  dev::setKindCacheForTest(false);
  const uint64_t q2 = dev::kindQueries();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(dev::kindOf(host), dev::MemKind::kHost);
  EXPECT_EQ(dev::kindQueries(), q2 + 5);
}

// A device allocation over a page the cache remembers as host (the host
// memory there was unmapped, the address reused) clears that page.
TEST_F(DeviceMock, NewAllocationsClearStaleHostPages) {
  char* d = static_cast<char*>(dev::deviceAlloc(4096));
  dev::deviceFree(d);
  EXPECT_EQ(dev::kindOf(d), dev::MemKind::kHost);  // now remembered as host
  // The kernel hands the same address out again, often; when it does the
  // answer must be right.
  for (int i = 0; i < 8; ++i) {
    char* e = static_cast<char*>(dev::deviceAlloc(4096));
    EXPECT_EQ(dev::kindOf(e), dev::MemKind::kDevice);
    dev::deviceFree(e);
  }
}

// A remembered range whose allocation was freed behind Loom's back (the
// program's cudaFree) and replaced by another at the same address: the
// allocation's identity differs, so the pointer is queried again (CUDA then
// marks the new allocation SYNC_MEMOPS) and the new identity remembered.
TEST_F(DeviceMock, ReusedAddressIsQueriedAgain) {
  char* d = static_cast<char*>(dev::deviceAlloc(8192));
  const auto base = reinterpret_cast<uintptr_t>(d);
  dev::noteDeviceRange(dev::Range{base, base + 8192, 987654321});  // a former allocation's
  const uint64_t q0 = dev::kindQueries();
  EXPECT_EQ(dev::kindOf(d + 100), dev::MemKind::kDevice);
  EXPECT_EQ(dev::kindQueries(), q0 + 1);  // the identity differed: asked again
  EXPECT_EQ(dev::kindOf(d + 200), dev::MemKind::kDevice);
  EXPECT_EQ(dev::kindQueries(), q0 + 1);  // the new identity is remembered
  dev::deviceFree(d);
}

TEST_F(DeviceMock, IpcWithinOneProcess) {
  char* d = static_cast<char*>(dev::deviceAlloc(8192));
  std::vector<char> src(100, 'x'), got(100, 0);
  ASSERT_TRUE(dev::copy(d + 300, src.data(), 100).isOk());
  dev::IpcHandle h;
  ASSERT_TRUE(dev::ipcGet(d + 300, &h).isOk());
  void* q = nullptr;
  ASSERT_TRUE(dev::ipcOpen(h, &q).isOk());
  EXPECT_NE(q, d + 300);  // another mapping of the same memory
  EXPECT_EQ(dev::kindOf(q), dev::MemKind::kDevice);
  ASSERT_TRUE(dev::copy(got.data(), q, 100).isOk());
  EXPECT_EQ(got, src);
  EXPECT_TRUE(dev::ipcClose(q).isOk());
  EXPECT_FALSE(dev::ipcGet(src.data(), &h).isOk());
  dev::deviceFree(d);
}

TEST(DeviceStage, PoolReusesBuffers) {
  void* a = dev::stageAlloc(5000);
  dev::stageFree(a, 5000);
  void* b = dev::stageAlloc(8000);  // the same 8 KiB class
  EXPECT_EQ(a, b);
  dev::stageFree(b, 8000);
}

TEST(DeviceStage, TypeSpan) {
  Datatype* vec = nullptr;  // 3 blocks of 2 ints, 4 ints apart: xx..xx..xx
  ASSERT_TRUE(loom::typeVector(3, 2, 4, pre(MPI_INT), &vec).isOk());
  vec->commit();
  int64_t lo = 0, hi = 0;
  dev::typeSpan(2, vec, &lo, &hi);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, vec->extent() + 40);
  dev::typeSpan(0, vec, &lo, &hi);
  EXPECT_EQ(hi - lo, 0);
  vec->release();
}

// Typed copies write the type's bytes and leave its holes alone.
TEST_F(DeviceMock, CopyTypedKeepsHoles) {
  Datatype* vec = nullptr;
  ASSERT_TRUE(loom::typeVector(3, 2, 4, pre(MPI_INT), &vec).isOk());
  vec->commit();
  const int n = 2 * 10;  // two elements of 10 ints (extent 40 bytes)
  std::vector<int> old(n), mine(n), got(n);
  for (int i = 0; i < n; ++i) old[i] = -i, mine[i] = 100 + i;
  int* d = static_cast<int*>(dev::deviceAlloc(n * 4));
  ASSERT_TRUE(dev::copy(d, old.data(), n * 4).isOk());
  ASSERT_TRUE(dev::copyTyped(d, mine.data(), 2, vec).isOk());
  ASSERT_TRUE(dev::copy(got.data(), d, n * 4).isOk());
  const bool typed[10] = {1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
  for (int i = 0; i < 2 * 10 - 0; ++i) {
    const int k = i % 10;
    const bool inType = typed[k] && i < 10 + 10;
    EXPECT_EQ(got[i], inType ? mine[i] : old[i]) << i;
  }
  // Part of the stream: the first 3 ints (12 bytes) only.
  ASSERT_TRUE(dev::copy(d, old.data(), n * 4).isOk());
  ASSERT_TRUE(dev::copyTyped(d, mine.data(), 2, vec, 12).isOk());
  ASSERT_TRUE(dev::copy(got.data(), d, n * 4).isOk());
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(got[i], (i == 0 || i == 1 || i == 4) ? mine[i] : old[i]) << i;
  dev::deviceFree(d);
  vec->release();
}

// A receive into a device buffer: staged, filled on the host, copied back
// (what it got only) when it finishes, its buffer restored.
TEST_F(DeviceMock, StagedReceiveRoundTrip) {
  int* d = static_cast<int*>(dev::deviceAlloc(64 * 4));
  std::vector<int> old(64, -1), got(64);
  ASSERT_TRUE(dev::copy(d, old.data(), 256).isOk());
  loom::Request* r = loom::Request::alloc(loom::ReqKind::kRecv);
  r->buf = d;
  r->count = 64;
  r->type = pre(MPI_INT);
  ASSERT_TRUE(dev::stageRequest(r, false).isOk());
  ASSERT_NE(r->buf, static_cast<void*>(d));
  EXPECT_EQ(dev::kindOf(r->buf), dev::MemKind::kHost);
  int* h = static_cast<int*>(r->buf);
  for (int i = 0; i < 64; ++i) h[i] = i;
  r->bytes = 10 * 4;  // a shorter message: 10 ints arrived
  r->finish();
  EXPECT_EQ(r->buf, static_cast<void*>(d));
  EXPECT_EQ(r->statusError, MPI_SUCCESS);
  ASSERT_TRUE(dev::copy(got.data(), d, 256).isOk());
  for (int i = 0; i < 64; ++i) EXPECT_EQ(got[i], i < 10 ? i : -1) << i;
  loom::Request::release(r);
  dev::deviceFree(d);
}

TEST_F(DeviceMock, PackAndUnpackDeviceBuffers) {
  Datatype* vec = nullptr;
  ASSERT_TRUE(loom::typeVector(3, 2, 4, pre(MPI_INT), &vec).isOk());
  vec->commit();
  std::vector<int> src(10), packed(6), back(10, 0);
  std::iota(src.begin(), src.end(), 1);
  int* d = static_cast<int*>(dev::deviceAlloc(40));
  int* dp = static_cast<int*>(dev::deviceAlloc(24));
  ASSERT_TRUE(dev::copy(d, src.data(), 40).isOk());
  ASSERT_TRUE(dev::packAny(vec, d, 1, dp, 24).isOk());  // device to device
  ASSERT_TRUE(dev::copy(packed.data(), dp, 24).isOk());
  EXPECT_EQ(packed, (std::vector<int>{1, 2, 5, 6, 9, 10}));
  std::vector<int> zero(10, 0);
  ASSERT_TRUE(dev::copy(d, zero.data(), 40).isOk());
  ASSERT_TRUE(dev::unpackAny(vec, d, 1, packed.data(), 24).isOk());  // host to device
  ASSERT_TRUE(dev::copy(back.data(), d, 40).isOk());
  EXPECT_EQ(back, (std::vector<int>{1, 2, 0, 0, 5, 6, 0, 0, 9, 10}));
  dev::deviceFree(d);
  dev::deviceFree(dp);
  vec->release();
}

}  // namespace
