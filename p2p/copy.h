// Copies for the rendezvous pipeline's large messages.
//
// copyStream() writes with non-temporal stores: the destination lines go to
// memory without being read first (no read-for-ownership) and without being
// kept in this core's caches. Used on both sides of the copy pipeline for
// large messages when the receiver measured it cheaper (stream_choice.h),
// because of what the host does with the two vCPUs (measured on a 2-vCPU
// EPYC Zen 4 VM, see docs/benchmarks.md, "What decides bandwidth"): when
// they sit on different CCDs, a receiver reading ring lines out of the
// other CCD's cache while writing a destination that is not cached moves
// 1 MB messages at ~2-5 GB/s; when the sender streams the ring to memory and
// the receiver streams the destination, ~10 GB/s whatever the placement.
// Sharing a cache, the cached copy is twice as fast as that.
//
// Callers fence (streamFence) before publishing what they wrote: non-temporal
// stores are not ordered with later stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace loom::p2p {

#if defined(__x86_64__)

namespace detail {

// 32-byte stores when the CPU has AVX (every x86 this runs on in practice),
// 16-byte SSE2 stores otherwise; same result.
[[gnu::target("avx")]] inline void streamBodyAvx(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), e);
  }
  for (; i + 32 <= n; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
  if (i < n) std::memcpy(d + i, s + i, n - i);
}

inline void streamBodySse2(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  if (i < n) std::memcpy(d + i, s + i, n - i);
}

inline bool haveAvx() {
  static const bool yes = __builtin_cpu_supports("avx");
  return yes;
}

}  // namespace detail

// memcpy with non-temporal stores for the 32-byte-aligned body of the
// destination (the unaligned head and the tail are ordinary stores).
inline void copyStream(void* dst, const void* src, size_t n) {
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  if (n < 256) {
    std::memcpy(d, s, n);
    return;
  }
  size_t head = (32 - (reinterpret_cast<uintptr_t>(d) & 31)) & 31;
  std::memcpy(d, s, head);
  if (detail::haveAvx())
    detail::streamBodyAvx(d + head, s + head, n - head);
  else
    detail::streamBodySse2(d + head, s + head, n - head);
}

// Orders earlier non-temporal stores before later stores (a flag, a
// sequence number).
inline void streamFence() { _mm_sfence(); }

#else

inline void copyStream(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
inline void streamFence() {}

#endif

}  // namespace loom::p2p
