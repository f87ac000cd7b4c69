// copySmall: a memcpy for the short, variable lengths of packing and of
// small messages, where calling libc costs as much as the copy itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace loom {

// Copies n bytes of any length, inline up to 32 bytes: two overlapping
// loads and stores of the largest power of two that fits, so a copy never
// touches a byte outside [0, n) of either side.
inline void copySmall(char* d, const char* s, size_t n) {
  if (n <= 16) {
    if (n >= 8) {
      uint64_t a, b;
      std::memcpy(&a, s, 8);
      std::memcpy(&b, s + n - 8, 8);
      std::memcpy(d, &a, 8);
      std::memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, s, 4);
      std::memcpy(&b, s + n - 4, 4);
      std::memcpy(d, &a, 4);
      std::memcpy(d + n - 4, &b, 4);
    } else if (n >= 2) {
      uint16_t a, b;
      std::memcpy(&a, s, 2);
      std::memcpy(&b, s + n - 2, 2);
      std::memcpy(d, &a, 2);
      std::memcpy(d + n - 2, &b, 2);
    } else if (n) {
      *d = *s;
    }
  } else if (n <= 32) {
    char a[16], b[16];
    std::memcpy(a, s, 16);
    std::memcpy(b, s + n - 16, 16);
    std::memcpy(d, a, 16);
    std::memcpy(d + n - 16, b, 16);
  } else {
    std::memcpy(d, s, n);
  }
}

}  // namespace loom
