#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "p2p/payload.h"

using loom::p2p::allocPayload;
using loom::p2p::Payload;
using loom::p2p::payloadBytesPooled;
using loom::p2p::payloadsPooled;

TEST(Payload, FreedBuffersComeBackForTheirClass) {
  const size_t before = payloadsPooled();
  Payload a = allocPayload(16384);
  std::byte* p = a.get();
  std::memset(p, 0xab, 16384);  // the whole size is usable
  a.reset();
  EXPECT_EQ(payloadsPooled(), before + 1);
  // Any size of the same power-of-two class takes it again.
  Payload b = allocPayload(9000);
  EXPECT_EQ(b.get(), p);
  EXPECT_EQ(payloadsPooled(), before);
  // Another class does not.
  Payload c = allocPayload(4096);
  EXPECT_NE(c.get(), p);
}

TEST(Payload, AlignedAndSizedFromZeroToLarge) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{257}, size_t{65535},
                   size_t{65536}, size_t{65537}, size_t{1} << 20}) {
    Payload a = allocPayload(n);
    ASSERT_NE(a.get(), nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.get()) % 16, 0u) << n;
    if (n) std::memset(a.get(), 1, n);
  }
}

TEST(Payload, LargeOnesAreNotKept) {
  const size_t before = payloadsPooled();
  { Payload a = allocPayload(size_t{1} << 20); }
  { Payload a = allocPayload(65537); }
  EXPECT_EQ(payloadsPooled(), before);
}

TEST(Payload, KeepsAtMostTwoMiBPerClass) {
  // A burst of 200 buffers of 16 KiB: 128 of them (2 MiB) are kept.
  std::vector<Payload> burst;
  for (int i = 0; i < 200; ++i) burst.push_back(allocPayload(16384));
  const size_t bytes = payloadBytesPooled();
  burst.clear();
  EXPECT_LE(payloadBytesPooled() - bytes, size_t{2} << 20);
  EXPECT_GE(payloadBytesPooled() - bytes, size_t{2} << 20);
}
