// HandlePool: memory for objects that users hold as MPI handles
// (communicators, groups, datatypes, ops).
//
// A user may pass a handle after freeing it. Each such object starts with a
// magic number that its destructor clears, and the API checks it; but
// reading memory returned to the system allocator is undefined (and the
// page may be gone). So these objects never return their memory: a class
// derives from HandlePool<Self> and its slots are recycled through a free
// list, so a stale handle still reads a cleared magic. A stale handle may
// alias a newer object once its slot is reused: the same guarantee MPIs with
// integer handles give.
#pragma once

#include <cstddef>
#include <new>

namespace loom {

template <class T>
class HandlePool {
 public:
  static void* operator new(size_t bytes) {
    if (bytes == sizeof(T) && head_) {
      void* p = head_;
      head_ = linkOf(p);
      return p;
    }
    return ::operator new(bytes);
  }
  static void operator delete(void* p, size_t bytes) {
    if (!p) return;
    if (bytes != sizeof(T)) {  // not a T (a larger derived class): give it back
      ::operator delete(p);
      return;
    }
    linkOf(p) = head_;
    head_ = p;
  }

 private:
  // The free-list link sits in the slot's last bytes, away from the magic
  // at its start.
  static void*& linkOf(void* p) {
    static_assert(sizeof(T) >= 2 * sizeof(void*), "too small to pool");
    return *reinterpret_cast<void**>(static_cast<char*>(p) + sizeof(T) - sizeof(void*));
  }
  static inline void* head_ = nullptr;
};

}  // namespace loom
