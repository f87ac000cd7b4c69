#include "core/progress_async.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"

namespace loom::progress {

namespace detail {
std::atomic<bool> gAsyncOn{false};
bool gAdopted = false;
int gUnlockedDepth = 0;
std::recursive_mutex& apiMutex() {
  static std::recursive_mutex m;
  return m;
}
}  // namespace detail

namespace {

int gUsers = 0;
pthread_t gAdopter{};
std::thread* gThread = nullptr;
std::atomic<bool> gStop{false};
std::atomic<int> gBusy{0};

bool allowed() {
  static const bool on = [] {
    bool yes = true;
    const std::string v = params::getString("LOOM_ASYNC_PROGRESS");
    if (v != "auto" && params::parseBool(v, &yes) && !yes) return false;
    return true;
  }();
  return on;
}

void loop() {
  using namespace std::chrono;
  microseconds nap{20};
  while (!gStop.load(std::memory_order_acquire)) {
    int events = 0;
    if (detail::apiMutex().try_lock()) {
      for (int i = 0; i < 16; ++i) {
        int e = poll();
        events += e;
        if (e == 0) break;
      }
      detail::apiMutex().unlock();
    }
    const bool busy = events || gBusy.load(std::memory_order_relaxed) > 0;
    nap = busy ? microseconds{20} : std::min(nap * 2, microseconds{1000});
    std::this_thread::sleep_for(nap);
  }
}

void stop() {
  if (!gThread) return;
  gStop.store(true, std::memory_order_release);
  gThread->join();
  delete gThread;
  gThread = nullptr;
  detail::gAsyncOn.store(false, std::memory_order_relaxed);
  log::debug("progress", "asynchronous progress thread stopped");
}

}  // namespace

void detail::releaseAdopted() {
  if (gAdopted && pthread_equal(gAdopter, pthread_self())) {
    gAdopted = false;
    apiMutex().unlock();
  }
}

void asyncRetain() {
  if (++gUsers > 1 || !allowed() || gThread) return;
  // The current call entered without the lock: take it now, and let its
  // guard give it back on the way out.
  if (!asyncOn()) {
    detail::apiMutex().lock();
    detail::gAdopted = true;
    gAdopter = pthread_self();
  }
  detail::gAsyncOn.store(true, std::memory_order_relaxed);
  gStop.store(false, std::memory_order_relaxed);
  gThread = new std::thread(loop);
  log::debug("progress", "asynchronous progress thread started");
}

void asyncRelease() {
  if (gUsers > 0 && --gUsers == 0) stop();
}

void asyncBusy(int delta) {
  gBusy.fetch_add(delta, std::memory_order_relaxed);
}

void asyncShutdown() {
  gUsers = 0;
  stop();
}

}  // namespace loom::progress
