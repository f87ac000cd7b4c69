// The mock device (LOOM_DEVICE_MOCK=1): device memory without a GPU, so
// every device path of Loom runs in CI.
//
// An allocation is a memfd mapped twice. The program gets the PROT_NONE
// mapping: any load or store through it faults, exactly as a host
// dereference of a real device pointer would, so a code path that forgets
// to stage a buffer crashes in the mock tests instead of passing. Loom's
// device layer alone uses the second, read-write mapping (copies, and the
// mock's reductions through hostAlias()). IPC hands out the memfd: a peer
// takes it with pidfd_getfd (or /proc/<pid>/fd/<fd>) and maps it the same
// two ways.
//
// Costs: a memfd, two mappings and a map entry per allocation, a mutex per
// operation. It is a test device, not a fast one.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/device_backend.h"
#include "core/device_stream_impl.h"
#include "core/params.h"

namespace loom::device {
namespace {

// LOOM_DEVICE_MOCK_PACKED: small allocations are carved out of shared
// 2 MiB regions ("arenas", one memfd each) at 256-byte alignment, as
// cudaMalloc packs small buffers, so one 4 KiB page holds several
// allocations and the gaps between them; such an allocation's range is the
// bytes asked for, not whole pages.
struct Arena {
  char* user;  // the PROT_NONE view
  char* rw;
  int fd;
  size_t size;
  uint64_t gen;                    // names the arena in IPC handles
  std::map<size_t, size_t> free;  // offset -> bytes, coalesced
};

struct Alloc {
  size_t size;  // bytes the program asked for (mapped: whole pages)
  size_t mapped;
  char* rw;  // the read-write view
  int fd;
  bool imported;  // mapped from another process's handle (ipcOpen)
  uint64_t gen;   // which allocation of this process (IPC handles name it)
  Arena* arena = nullptr;  // packed: carved from this arena (mapped = size)
};

constexpr size_t kArenaBytes = size_t{2} << 20;
constexpr size_t kPackMax = size_t{256} << 10;  // larger allocations get their own memfd
constexpr size_t kPackAlign = 256;

size_t pageRound(size_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return std::max(page, (n + page - 1) / page * page);
}

int takeFd(int pid, int fd) {
  if (pid == getpid()) return fcntl(fd, F_DUPFD_CLOEXEC, 0);
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  const int pfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pfd >= 0) {
    const int got = static_cast<int>(syscall(SYS_pidfd_getfd, pfd, fd, 0));
    close(pfd);
    if (got >= 0) return got;
  }
#endif
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  return open(path.c_str(), O_RDWR | O_CLOEXEC);
}

class Mock final : public BackendImpl {
  // The handle of Loom's own (synchronous) streams and of their fences.
  static inline void* const kDone = reinterpret_cast<void*>(uintptr_t{1});

 public:
  Backend kind() const override { return Backend::kMock; }
  int count() override { return 1; }
  std::string describe(int dev) override {
    return std::to_string(dev) +
           ": mock device (LOOM_DEVICE_MOCK=1: memfd memory the program sees PROT_NONE)";
  }

  MemKind query(const void* p, Range* range) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find(p);
    if (it == allocs_.end()) return MemKind::kHost;
    *range = Range{it->first, it->first + it->second.mapped, it->second.gen};
    return MemKind::kDevice;
  }

  uint64_t allocationId(const void* p) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find(p);
    return it == allocs_.end() ? 0 : it->second.gen;
  }

  Status copy(void* dst, const void* src, size_t n) override {
    std::lock_guard<std::mutex> lock(mu_);
    char* d = nullptr;
    const char* s = nullptr;
    LOOM_TRY(view(dst, n, &d));
    char* sv = nullptr;
    LOOM_TRY(view(src, n, &sv));
    s = sv;
    std::memmove(d, s, n);
    return Status::ok();
  }

  Status copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                size_t rows) override {
    for (size_t k = 0; k < rows; ++k)
      LOOM_TRY(copy(static_cast<char*>(dst) + k * dpitch,
                    static_cast<const char*>(src) + k * spitch, width));
    return Status::ok();
  }

  // Loom's own streams have no queue: an asynchronous copy is done when it
  // returns and their fences (kDone) are always passed. A program's stream
  // (loom_mock_stream_create, for the stream-ordered API) is a thread that
  // runs its queue in order: copies and fences on it go there
  // (device_mock_stream.cc).
  //
  // LOOM_DEVICE_MOCK_ASYNC=N (N > 0): Loom's own streams are mock streams
  // too (a thread each, device_mock_stream.cc), so their copies and
  // reductions (enqueue) run some time after they were queued, concurrently
  // with the host code that queued them, and only their fences tell when
  // they have run, as on a GPU. Each item first sleeps N microseconds,
  // which widens the window in which an ordering mistake (host code or
  // another stream reading what a queued item has not yet written, or
  // reusing what it has not yet read) shows as wrong data or a fault. A
  // copy that fails there aborts the process with the reason (nothing would
  // report it: Loom's fences carry no error in the mock).
  static int asyncDelay() {
    static const int n = static_cast<int>(params::getInt("LOOM_DEVICE_MOCK_ASYNC"));
    return n;
  }
  bool isOwnAsync(const void* h) {
    std::lock_guard<std::mutex> lock(mu_);
    return h && own_.count(h) != 0;
  }

  Status streamCreate(Stream* s) override {
    if (asyncDelay() > 0) {
      s->h = mockstream::create();
      std::lock_guard<std::mutex> lock(mu_);
      own_.insert(s->h);
      return Status::ok();
    }
    s->h = kDone;
    return Status::ok();
  }
  void streamDestroy(Stream s) override {
    if (!isOwnAsync(s.h)) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      own_.erase(s.h);
    }
    mockstream::destroy(s.h);
  }

  // An item of one of Loom's own asynchronous streams: sleeps, then runs.
  struct Job {
    void (*fn)(void*);
    void* arg;
    static void run(void* p) {
      auto* j = static_cast<Job*>(p);
      std::this_thread::sleep_for(std::chrono::microseconds(asyncDelay()));
      j->fn(j->arg);
      delete j;
    }
  };
  bool enqueue(Stream s, void (*fn)(void*), void* arg) {
    if (!isOwnAsync(s.h)) return false;
    mockstream::launch(s.h, Job::run, new Job{fn, arg});
    return true;
  }
  struct CopyJob {
    void* dst;
    const void* src;
    size_t n;
    static void run(void* p) {
      auto* c = static_cast<CopyJob*>(p);
      Status st = mockBackend()->copy(c->dst, c->src, c->n);
      if (!st.isOk()) {
        std::fprintf(stderr, "loom mock device (LOOM_DEVICE_MOCK_ASYNC): a queued copy failed: %s\n",
                     st.message().c_str());
        std::abort();
      }
      delete c;
    }
  };

  Status copyAsync(void* dst, const void* src, size_t n, Stream s) override {
    if (enqueue(s, CopyJob::run, new CopyJob{dst, src, n})) return Status::ok();
    if (s.h != kDone && mockstream::isStream(s.h)) return mockstream::copyAsync(s.h, dst, src, n);
    return copy(dst, src, n);
  }
  // LOOM_DEVICE_MOCK_SLOW_FENCES=N: a fence of Loom's own streams is a
  // SlowFence that says "not yet" to its first N polls (fenceWait passes
  // it at once), as a GPU's fence does while its work runs; the work itself
  // was done when queued.
  struct SlowFence {
    int polls;
  };
  static int slowFences() {
    static const int n = static_cast<int>(params::getInt("LOOM_DEVICE_MOCK_SLOW_FENCES"));
    return n;
  }
  bool isSlow(void* h) {
    std::lock_guard<std::mutex> lock(mu_);
    return slow_.count(static_cast<SlowFence*>(h)) != 0;
  }

  Status fenceRecord(Stream s, Fence* f) override {
    if (s.h != kDone && mockstream::isStream(s.h)) {
      f->h = mockstream::markRecord(s.h);
    } else if (slowFences() > 0) {
      auto* sf = new SlowFence{slowFences()};
      std::lock_guard<std::mutex> lock(mu_);
      slow_.insert(sf);
      f->h = sf;
    } else {
      f->h = kDone;
    }
    return Status::ok();
  }
  bool fenceDone(Fence f) override {
    if (f.h == kDone) return true;
    if (isSlow(f.h)) {
      auto* sf = static_cast<SlowFence*>(f.h);
      return sf->polls <= 0 || --sf->polls < 0;
    }
    return mockstream::markDone(f.h);
  }
  Status fenceWait(Fence f) override {
    if (f.h == kDone) return Status::ok();
    if (isSlow(f.h))
      static_cast<SlowFence*>(f.h)->polls = 0;
    else
      mockstream::markWait(f.h);
    return Status::ok();
  }
  void fenceDestroy(Fence f) override {
    if (f.h == kDone) return;
    if (isSlow(f.h)) {
      std::lock_guard<std::mutex> lock(mu_);
      slow_.erase(static_cast<SlowFence*>(f.h));
      delete static_cast<SlowFence*>(f.h);
      return;
    }
    mockstream::markDestroy(f.h);
  }

  // LOOM_DEVICE_MOCK_PACKED (read once).
  static bool packed() {
    static const bool on = params::getBool("LOOM_DEVICE_MOCK_PACKED");
    return on;
  }

  void* packedAlloc(size_t n) {
    const size_t want = (std::max<size_t>(n, 1) + kPackAlign - 1) / kPackAlign * kPackAlign;
    std::lock_guard<std::mutex> lock(mu_);
    Arena* in = nullptr;
    size_t off = 0;
    for (Arena* a : arenas_) {
      for (auto it = a->free.begin(); it != a->free.end(); ++it) {
        if (it->second < want) continue;
        in = a;
        off = it->first;
        const size_t left = it->second - want;
        a->free.erase(it);
        if (left) a->free[off + want] = left;
        break;
      }
      if (in) break;
    }
    if (!in) {
      const int fd = static_cast<int>(syscall(SYS_memfd_create, "loom-mock-arena", MFD_CLOEXEC));
      if (fd < 0) return nullptr;
      void* user = nullptr;
      char* rw = nullptr;
      if (ftruncate(fd, static_cast<off_t>(kArenaBytes)) != 0 ||
          !mapTwice(fd, kArenaBytes, &user, &rw)) {
        close(fd);
        return nullptr;
      }
      in = new Arena{static_cast<char*>(user), rw, fd, kArenaBytes, ++gen_, {}};
      arenas_.push_back(in);
      off = 0;
      in->free[want] = kArenaBytes - want;
    }
    Alloc a{n, std::max<size_t>(n, 1), in->rw + off, in->fd, false, ++gen_, in};
    char* user = in->user + off;
    allocs_[reinterpret_cast<uintptr_t>(user)] = a;
    return user;
  }

  void packedFreeLocked(std::map<uintptr_t, Alloc>::iterator it) {
    Arena* a = it->second.arena;
    size_t off = static_cast<size_t>(reinterpret_cast<char*>(it->first) - a->user);
    size_t len = (it->second.mapped + kPackAlign - 1) / kPackAlign * kPackAlign;
    allocs_.erase(it);
    auto next = a->free.lower_bound(off);
    if (next != a->free.end() && off + len == next->first) {
      len += next->second;
      next = a->free.erase(next);
    }
    if (next != a->free.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        prev->second += len;
        return;
      }
    }
    a->free[off] = len;
  }

  void* deviceAlloc(size_t n) override {
    if (packed() && n <= kPackMax) return packedAlloc(n);
    const size_t m = pageRound(n);
    const int fd = static_cast<int>(syscall(SYS_memfd_create, "loom-mock-device", MFD_CLOEXEC));
    if (fd < 0) return nullptr;
    if (ftruncate(fd, static_cast<off_t>(m)) != 0) {
      close(fd);
      return nullptr;
    }
    void* user = nullptr;
    Alloc a{n, m, nullptr, fd, false, 0};
    if (!mapTwice(fd, m, &user, &a.rw)) {
      close(fd);
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mu_);
    a.gen = ++gen_;
    allocs_[reinterpret_cast<uintptr_t>(user)] = a;
    return user;
  }

  void deviceFree(void* p) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocs_.find(reinterpret_cast<uintptr_t>(p));
    if (it == allocs_.end() || it->second.imported) return;
    if (it->second.arena) {
      packedFreeLocked(it);
      return;
    }
    unmapLocked(it);
  }

  void* hostAlloc(size_t n) override { return std::malloc(n ? n : 1); }
  void hostFree(void* p) override { std::free(p); }

  void* hostAlias(const void* p) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find(p);
    if (it == allocs_.end()) return nullptr;
    return it->second.rw + (reinterpret_cast<uintptr_t>(p) - it->first);
  }

  Status ipcGet(const void* p, IpcHandle* out) override {
    if (refuse("get"))
      return errorf(MPI_ERR_OTHER, "mock IPC refused (LOOM_DEVICE_MOCK_IPC_FAIL=get)");
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find(p);
    if (it == allocs_.end())
      return errorf(MPI_ERR_OTHER, "%p is not mock device memory: no IPC handle", p);
    std::memset(out, 0, sizeof *out);
    if (const Arena* a = it->second.arena) {
      // A packed allocation: the handle maps its whole arena.
      std::memcpy(out->bytes, &a->gen, sizeof a->gen);
      out->offset = static_cast<uint64_t>(static_cast<const char*>(p) - a->user);
      out->size = a->size;
      out->pid = getpid();
      out->fd = a->fd;
      return Status::ok();
    }
    // Like a CUDA handle, the bytes name the allocation: one freed and
    // another made at the same address get different handles, so a peer's
    // cache of opened handles can tell them apart (the fd number alone may
    // be reused).
    std::memcpy(out->bytes, &it->second.gen, sizeof it->second.gen);
    out->offset = reinterpret_cast<uintptr_t>(p) - it->first;
    out->size = it->second.mapped;
    out->pid = getpid();
    out->fd = it->second.fd;
    return Status::ok();
  }

  Status ipcOpen(const IpcHandle& h, void** out, Range* range) override {
    if (refuse("open"))
      return errorf(MPI_ERR_OTHER, "mock IPC refused (LOOM_DEVICE_MOCK_IPC_FAIL=open)");
    const int fd = takeFd(h.pid, h.fd);
    if (fd < 0)
      return errorf(MPI_ERR_OTHER, "cannot take the mock device memory of pid %d (%s)", h.pid,
                    std::strerror(errno));
    void* user = nullptr;
    Alloc a{h.size, h.size, nullptr, fd, true, 0};
    if (!mapTwice(fd, h.size, &user, &a.rw)) {
      close(fd);
      return errorf(MPI_ERR_OTHER, "cannot map %llu bytes of mock device memory",
                    static_cast<unsigned long long>(h.size));
    }
    std::lock_guard<std::mutex> lock(mu_);
    allocs_[reinterpret_cast<uintptr_t>(user)] = a;
    *out = static_cast<char*>(user) + h.offset;
    *range = Range{reinterpret_cast<uintptr_t>(user), reinterpret_cast<uintptr_t>(user) + h.size};
    return Status::ok();
  }

  Status ipcClose(void* p) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find(p);
    if (it == allocs_.end() || !it->second.imported)
      return errorf(MPI_ERR_OTHER, "%p was not opened from an IPC handle", p);
    const uintptr_t base = it->first;
    unmapLocked(it);
    forgetDeviceRange(base);
    return Status::ok();
  }

 private:
  using Map = std::map<uintptr_t, Alloc>;
  std::set<SlowFence*> slow_;
  std::set<const void*> own_;  // Loom's own streams in the asynchronous mode
  std::vector<Arena*> arenas_;  // LOOM_DEVICE_MOCK_PACKED; never unmapped

  // LOOM_DEVICE_MOCK_IPC_FAIL: which IPC step fails, to test the fallbacks
  // (a CUDA device may refuse either: memory from cudaMallocAsync pools
  // has no legacy handle, a peer without access cannot open one).
  static bool refuse(const char* step) {
    static const std::string what = params::getString("LOOM_DEVICE_MOCK_IPC_FAIL");
    return what == step;
  }

  Map::iterator find(const void* p) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    auto it = allocs_.upper_bound(a);
    if (it == allocs_.begin()) return allocs_.end();
    --it;
    return a < it->first + it->second.mapped ? it : allocs_.end();
  }

  // Host memory as is; mock memory through its read-write view, the whole
  // [p, p + n) inside one allocation.
  Status view(const void* p, size_t n, char** out) {
    auto it = find(p);
    if (it == allocs_.end()) {
      *out = static_cast<char*>(const_cast<void*>(p));
      return Status::ok();
    }
    const uintptr_t off = reinterpret_cast<uintptr_t>(p) - it->first;
    if (off > it->second.size || n > it->second.size - off)
      return errorf(MPI_ERR_OTHER,
                    "a copy of %zu bytes at %p runs past the end of its mock "
                    "device allocation (%zu bytes)",
                    n, p, it->second.size);
    *out = it->second.rw + off;
    return Status::ok();
  }

  static bool mapTwice(int fd, size_t m, void** user, char** rw) {
    void* u = mmap(nullptr, m, PROT_NONE, MAP_SHARED, fd, 0);
    if (u == MAP_FAILED) return false;
    void* w = mmap(nullptr, m, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (w == MAP_FAILED) {
      munmap(u, m);
      return false;
    }
    *user = u;
    *rw = static_cast<char*>(w);
    return true;
  }

  void unmapLocked(Map::iterator it) {
    munmap(reinterpret_cast<void*>(it->first), it->second.mapped);
    munmap(it->second.rw, it->second.mapped);
    close(it->second.fd);
    allocs_.erase(it);
  }

  std::mutex mu_;
  Map allocs_;
  uint64_t gen_ = 0;
};

}  // namespace

namespace {
Mock* theMock() {
  static Mock* m = new Mock();  // never destroyed: buffers may outlive static destructors
  return m;
}
}  // namespace

BackendImpl* mockBackend() {
  return theMock();
}

bool mockEnqueueOn(Stream s, void (*fn)(void*), void* arg) {
  return theMock()->enqueue(s, fn, arg);
}

}  // namespace loom::device
