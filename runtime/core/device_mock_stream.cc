// The mock device's streams (device_stream_impl.h): what a program's
// cudaStream_t is to the stream-ordered API, without a GPU.
//
// A stream is a thread that runs queued work in order, as a GPU runs a
// stream's kernels and copies: copies through the mock's read-write view,
// marks (fences) set when reached, gate waits that stop the thread until
// Loom opens the gate, and the tests' "kernels" (host functions, sleeps).
// So everything the stream-ordered API relies on is exercised for real:
// the enqueuing call returns while earlier work is still queued, an
// operation starts only once its mark is reached, later work waits at the
// gate, and copies back land before what follows them.
//
// Loom's own mock streams (streamCreate, for staging) stay synchronous:
// device_mock.cc sends only these streams and their marks here.
//
// Costs: a thread per stream, a mutex and a condition variable per queued
// item, 20 us naps in gate waits. Test machinery, not a fast path.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "core/device_backend.h"
#include "core/device_stream_impl.h"

namespace loom::device::mockstream {
namespace {

struct MockStream {
  std::mutex mu;
  std::condition_variable work;  // something queued, or stop
  std::condition_variable idle;  // the queue ran dry
  std::deque<std::function<void()>> queue;
  bool running = false;  // an item is being run
  bool stop = false;
  Status firstError;
  std::thread thread;

  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      work.wait(lock, [this] { return stop || !queue.empty(); });
      if (queue.empty()) return;  // stop, and nothing left
      std::function<void()> fn = std::move(queue.front());
      queue.pop_front();
      running = true;
      lock.unlock();
      fn();
      lock.lock();
      running = false;
      if (queue.empty()) idle.notify_all();
    }
  }

  void push(std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(fn));
    work.notify_one();
  }

  void fail(const Status& st) {
    std::lock_guard<std::mutex> lock(mu);
    if (firstError.isOk()) firstError = st;
  }
};

// A mark: set by the stream's thread when it gets there. Shared between
// the queued item and the fence handle, so either may go first.
using Mark = std::shared_ptr<std::atomic<bool>>;

std::mutex gRegistryMu;
std::set<const void*>& registry() {
  static auto* s = new std::set<const void*>();  // never destroyed: threads may outlive exit
  return *s;
}

MockStream* toStream(void* s) {
  return static_cast<MockStream*>(s);
}

}  // namespace

void* create() {
  auto* s = new MockStream();
  s->thread = std::thread([s] { s->loop(); });
  // Detached at exit if never destroyed: a test that forgets one must not
  // die in std::thread's destructor.
  std::lock_guard<std::mutex> lock(gRegistryMu);
  registry().insert(s);
  return s;
}

void destroy(void* h) {
  {
    std::lock_guard<std::mutex> lock(gRegistryMu);
    if (!registry().erase(h)) return;
  }
  MockStream* s = toStream(h);
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stop = true;
    s->work.notify_one();
  }
  s->thread.join();
  delete s;
}

bool isStream(const void* h) {
  std::lock_guard<std::mutex> lock(gRegistryMu);
  return h && registry().count(h) != 0;
}

void launch(void* h, void (*fn)(void*), void* arg) {
  toStream(h)->push([fn, arg] { fn(arg); });
}

Status synchronize(void* h) {
  MockStream* s = toStream(h);
  std::unique_lock<std::mutex> lock(s->mu);
  s->idle.wait(lock, [s] { return s->queue.empty() && !s->running; });
  Status st = s->firstError;
  s->firstError = Status::ok();
  return st;
}

Status copyAsync(void* h, void* dst, const void* src, size_t n) {
  MockStream* s = toStream(h);
  // The mock backend's copy checks the range when it runs, as a device
  // reports a bad copy when the stream gets there; the first failure is
  // what loom_mock_stream_synchronize returns.
  s->push([s, dst, src, n] {
    Status st = mockBackend()->copy(dst, src, n);
    if (!st.isOk()) s->fail(st);
  });
  return Status::ok();
}

void* markRecord(void* h) {
  auto mark = std::make_shared<std::atomic<bool>>(false);
  toStream(h)->push([mark] { mark->store(true, std::memory_order_release); });
  return new Mark(std::move(mark));
}

bool markDone(void* m) {
  return (*static_cast<Mark*>(m))->load(std::memory_order_acquire);
}

void markWait(void* m) {
  while (!markDone(m)) std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void markDestroy(void* m) {
  delete static_cast<Mark*>(m);
}

void waitGate(void* h, const uint32_t* counter, uint32_t value) {
  toStream(h)->push([counter, value] {
    // The stream stops here, as a GPU stream does at cuStreamWaitValue32.
    while (static_cast<int32_t>(__atomic_load_n(counter, __ATOMIC_ACQUIRE) - value) < 0)
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  });
}

}  // namespace loom::device::mockstream
