// The chunked staging pipeline (core/device_pipe.h) on the mock device:
// downloads consumed in pieces that straddle chunk boundaries, uploads put
// in record-sized pieces, sizes around the chunk, and the mock's IPC
// handles naming allocations (what the p2p IPC cache relies on).
#include "core/device_pipe.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/device.h"

namespace {

namespace dev = loom::device;

class DevicePipe : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = dev::setBackendForTest(dev::Backend::kMock);
    ASSERT_TRUE(dev::streamCreate(&stream_).isOk());
  }
  void TearDown() override {
    dev::streamDestroy(stream_);
    dev::setBackendForTest(prev_);
  }
  dev::Backend prev_ = dev::Backend::kNone;
  dev::Stream stream_;
};

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed * 131u + i * 7u + (i >> 8));
  return v;
}

// Reads the whole range through the pipeline, `piece` bytes at a time
// (the transport's record size), as the p2p sender does.
std::vector<unsigned char> download(void* d, size_t bytes, size_t chunk, size_t piece,
                                    dev::Stream s) {
  dev::ChunkPipe pipe;
  EXPECT_TRUE(pipe.init(d, bytes, chunk, true, s).isOk());
  std::vector<unsigned char> out;
  size_t off = 0;
  while (off < bytes) {
    loom::Status st;
    size_t avail = 0;
    const char* p = pipe.peek(off, &avail, &st);
    EXPECT_TRUE(st.isOk()) << st.message();
    if (!p) continue;  // the mock's fences are always passed: never taken
    const size_t n = std::min(piece, avail);
    out.insert(out.end(), p, p + n);
    off += n;
    EXPECT_TRUE(pipe.consumed(off).isOk());
  }
  return out;
}

}  // namespace

TEST_F(DevicePipe, DownloadEverySizeAroundTheChunk) {
  const size_t chunk = 4096;
  for (size_t bytes : {size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{5 * 4096 - 1},
                       size_t{16 * 4096 + 3}}) {
    for (size_t piece : {size_t{1000}, size_t{4096}, size_t{65536}}) {
      auto want = pattern(bytes, static_cast<unsigned>(bytes));
      void* d = dev::deviceAlloc(bytes);
      ASSERT_NE(d, nullptr);
      ASSERT_TRUE(dev::copy(d, want.data(), bytes).isOk());
      EXPECT_EQ(download(d, bytes, chunk, piece, stream_), want) << bytes << " " << piece;
      dev::deviceFree(d);
    }
  }
}

TEST_F(DevicePipe, UploadInPieces) {
  const size_t chunk = 4096;
  for (size_t bytes :
       {size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{9 * 4096 + 17}}) {
    for (size_t piece : {size_t{7}, size_t{1000}, size_t{4096}, size_t{65536}}) {
      auto want = pattern(bytes, static_cast<unsigned>(piece));
      void* d = dev::deviceAlloc(bytes);
      ASSERT_NE(d, nullptr);
      {
        dev::ChunkPipe pipe;
        ASSERT_TRUE(pipe.init(d, bytes, chunk, false, stream_).isOk());
        for (size_t off = 0; off < bytes; off += piece)
          ASSERT_TRUE(pipe.put(off, want.data() + off, std::min(piece, bytes - off)).isOk());
        ASSERT_TRUE(pipe.finish().isOk());
      }
      std::vector<unsigned char> got(bytes);
      ASSERT_TRUE(dev::copy(got.data(), d, bytes).isOk());
      EXPECT_EQ(got, want) << bytes << " " << piece;
      dev::deviceFree(d);
    }
  }
}

TEST_F(DevicePipe, ShortUploadLandsWhatCame) {
  const size_t bytes = 10000;
  void* d = dev::deviceAlloc(bytes);
  std::vector<unsigned char> zero(bytes, 0), part = pattern(5000, 3);
  ASSERT_TRUE(dev::copy(d, zero.data(), bytes).isOk());
  {
    dev::ChunkPipe pipe;
    ASSERT_TRUE(pipe.init(d, bytes, 4096, false, stream_).isOk());
    ASSERT_TRUE(pipe.put(0, part.data(), part.size()).isOk());
    ASSERT_TRUE(pipe.finish().isOk());
  }
  std::vector<unsigned char> got(bytes);
  ASSERT_TRUE(dev::copy(got.data(), d, bytes).isOk());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), got.begin()));
  EXPECT_TRUE(std::all_of(got.begin() + 5000, got.end(), [](unsigned char c) { return c == 0; }));
  dev::deviceFree(d);
}

TEST_F(DevicePipe, EmptyRange) {
  dev::ChunkPipe pipe;
  EXPECT_TRUE(pipe.init(nullptr, 0, 4096, false, stream_).isOk());
  EXPECT_TRUE(pipe.finish().isOk());
}

// A copy out of bounds fails (the mock checks its allocations): the error
// comes back from the pipeline, not a crash.
TEST_F(DevicePipe, CopyFailureIsReported) {
  void* d = dev::deviceAlloc(5000);  // one page more is mapped, but not allocated
  dev::ChunkPipe pipe;
  EXPECT_FALSE(pipe.init(d, 8192, 4096, true, stream_).isOk());
  dev::deviceFree(d);
}

TEST_F(DevicePipe, MockIpcHandlesNameTheAllocation) {
  void* a = dev::deviceAlloc(8192);
  dev::IpcHandle ha, hb;
  ASSERT_TRUE(dev::ipcGet(a, &ha).isOk());
  dev::deviceFree(a);
  void* b = dev::deviceAlloc(8192);  // often at the same address, same fd number
  ASSERT_TRUE(dev::ipcGet(b, &hb).isOk());
  EXPECT_NE(std::memcmp(ha.bytes, hb.bytes, sizeof ha.bytes), 0);
  dev::IpcHandle hb2;
  ASSERT_TRUE(dev::ipcGet(static_cast<char*>(b) + 100, &hb2).isOk());
  EXPECT_EQ(std::memcmp(hb.bytes, hb2.bytes, sizeof hb.bytes), 0);  // same allocation
  EXPECT_EQ(hb2.offset, 100u);
  dev::deviceFree(b);
}
