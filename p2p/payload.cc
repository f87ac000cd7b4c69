#include "p2p/payload.h"

#include <bit>
#include <new>
#include <vector>

namespace loom::p2p {
namespace {

constexpr unsigned kMinClass = 8;   // 256 B
constexpr unsigned kMaxClass = 16;  // 64 KiB
constexpr size_t kKeepPerClass = size_t{2} << 20;
constexpr unsigned kDirect = 0xff;  // not pooled: freed to the heap
constexpr size_t kHeader = 16;      // the class, before the data (keeps 16-byte alignment)

struct Pool {
  std::vector<std::byte*> free[kMaxClass + 1];
};

// Never destroyed: a match table torn down at exit may still free payloads
// into it (the buffers it holds stay reachable from here).
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

unsigned classOf(size_t n) {
  if (n <= (size_t{1} << kMinClass)) return kMinClass;
  return static_cast<unsigned>(std::bit_width(n - 1));
}

}  // namespace

Payload allocPayload(size_t n) {
  const unsigned c = classOf(n);
  std::byte* block;
  if (c > kMaxClass) {
    block = static_cast<std::byte*>(::operator new(kHeader + n));
    block[0] = static_cast<std::byte>(kDirect);
  } else {
    auto& list = pool().free[c];
    if (!list.empty()) {
      block = list.back();
      list.pop_back();
    } else {
      block = static_cast<std::byte*>(::operator new(kHeader + (size_t{1} << c)));
      block[0] = static_cast<std::byte>(c);
    }
  }
  return Payload(block + kHeader);
}

void PayloadFree::operator()(std::byte* p) const noexcept {
  if (!p) return;
  std::byte* block = p - kHeader;
  const unsigned c = static_cast<unsigned>(block[0]);
  if (c != kDirect) {
    auto& list = pool().free[c];
    if (((list.size() + 1) << c) <= kKeepPerClass) {
      list.push_back(block);
      return;
    }
  }
  ::operator delete(block);
}

size_t payloadsPooled() {
  size_t n = 0;
  for (auto& v : pool().free) n += v.size();
  return n;
}

size_t payloadBytesPooled() {
  size_t bytes = 0;
  for (unsigned c = kMinClass; c <= kMaxClass; ++c) bytes += pool().free[c].size() << c;
  return bytes;
}

}  // namespace loom::p2p
