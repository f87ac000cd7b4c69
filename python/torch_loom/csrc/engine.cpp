// Engine and LoomWork: see engine.h for the life of an op.
#include "engine.h"

#include <ATen/core/ivalue.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <chrono>
#include <cctype>
#include <thread>
#include <cstdio>

namespace torch_loom {

std::string mpiErrorText(int rc, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) {
    return std::string("loom: ") + what + " failed with MPI error " + std::to_string(rc);
  }
  return std::string("loom: ") + what + " failed: " + std::string(text, len);
}

void checkMpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) TORCH_CHECK(false, mpiErrorText(rc, what));
}

// The message of an exception, for a Work's error.
std::string whatOf(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return std::string("loom: a device operation failed: ") + x.what();
  } catch (...) {
    return "loom: a device operation failed";
  }
}

// ---------------------------------------------------------------- GroupState

std::string GroupState::abortReason() {
  std::lock_guard<std::mutex> lock(mu);
  return reason;
}

void GroupState::abort(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu);
  if (reason.empty()) reason = why;
  abortedFlag.store(true, std::memory_order_release);
}

namespace {
std::string seqKey(int rank) { return "loom_seq/" + std::to_string(rank); }
}  // namespace

void GroupState::publish(bool force) {
  if (!store) return;
  const uint64_t now = issued.load(std::memory_order_acquire);
  const auto t = std::chrono::steady_clock::now();
  if (now == published && !force) return;
  if (!force && t - publishedAt < std::chrono::milliseconds(200)) return;
  try {
    std::string v = std::to_string(now);
    store->set(seqKey(rank), std::vector<uint8_t>(v.begin(), v.end()));
    published = now;
    publishedAt = t;
  } catch (...) {
  }
}

std::string GroupState::notJoined(uint64_t seq) {
  if (!store) return "unknown (no store)";
  std::string out;
  try {
    for (int r = 0; r < size; ++r) {
      uint64_t theirs = 0;
      if (store->check({seqKey(r)})) {
        auto v = store->get(seqKey(r));
        theirs = std::stoull(std::string(v.begin(), v.end()));
      }
      if (theirs < seq) out += (out.empty() ? "" : ", ") + std::to_string(r);
    }
  } catch (...) {
    return "unknown (the store did not answer)";
  }
  return out.empty() ? "none (every rank started it; one of them is stuck in it)" : out;
}

// ---------------------------------------------------------------- LoomWork

LoomWork::LoomWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
                   std::optional<c10::Device> device)
    : Work(rank, type),
      outputs_(std::move(outputs)),
      // A device Work's future knows its device: its consumers' streams wait
      // on it (ivalue::Future records an event when it is marked completed).
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::ofTensors(),
          device ? std::vector<c10::Device>{*device} : std::vector<c10::Device>{})),
      device_(device) {}

bool LoomWork::isCompleted() {
  if (done_.load(std::memory_order_acquire)) return true;
  return Engine::get().poll(this);
}

bool LoomWork::isSuccess() const {
  return done_.load(std::memory_order_acquire) && !error_;
}

std::exception_ptr LoomWork::exception() const {
  return done_.load(std::memory_order_acquire) ? error_ : nullptr;
}

int LoomWork::sourceRank() const {
  if (device_ && anySource && end) {
    // The sender is known once the stream got there: the host waits here,
    // until then or until the Work fails (a timeout, an abort).
    while (!done_.load(std::memory_order_acquire) && !end->query())
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (error_) std::rethrow_exception(error_);
    return devStatus.MPI_SOURCE;
  }
  TORCH_CHECK(done_.load(std::memory_order_acquire),
              "loom: sourceRank() of a receive that has not completed");
  return source_;
}

std::vector<at::Tensor> LoomWork::result() { return outputs_; }

c10::intrusive_ptr<c10::ivalue::Future> LoomWork::getFuture() { return future_; }

void LoomWork::synchronize() {
  if (!device_) {
    wait(kNoTimeout);
    return;
  }
  // As NCCL's: the current stream waits for the op; the host does not.
  auto* impl = c10::impl::getDeviceGuardImpl(device_->type());
  if (end) end->block(impl->getStream(*device_));
}

bool LoomWork::wait(std::chrono::milliseconds timeout) {
  if (device_) {
    if (done_.load(std::memory_order_acquire) && error_) std::rethrow_exception(error_);
    if (timeout != kNoTimeout) {
      // A bounded wait blocks the host, as NCCL's does, and raises at the end.
      const auto until = std::chrono::steady_clock::now() + timeout;
      while (!isCompleted()) {
        TORCH_CHECK(std::chrono::steady_clock::now() < until, "loom: Work::wait timed out after ",
                    timeout.count(), " ms (", what, ")");
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      if (error_) std::rethrow_exception(error_);
    }
    synchronize();
    return true;
  }
  using Clock = std::chrono::steady_clock;
  const bool bounded = timeout != kNoTimeout;
  const auto deadline = Clock::now() + timeout;
  Engine& engine = Engine::get();
  unsigned spins = 0;
  while (!done_.load(std::memory_order_acquire)) {
    if (engine.poll(this)) break;
    if (bounded && Clock::now() > deadline) {
      TORCH_CHECK(false, "loom: Work::wait timed out after ", timeout.count(), " ms (", what, ")");
    }
    // Leave the MPI mutex to the progress thread and to other callers now
    // and then; the MPI layer itself yields on an oversubscribed node.
    if (++spins % 16 == 0) std::this_thread::yield();
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

void LoomWork::fail(const std::string& why) {
  std::exception_ptr err;
  try {
    TORCH_CHECK(false, why);
  } catch (...) {
    err = std::current_exception();
  }
  // keep and holds stay: the requests or the stream may still use them.
  epilogue = nullptr;
  settle(err);
}

void LoomWork::complete() {
  std::exception_ptr err;
  try {
    if (mpiError_ != MPI_SUCCESS) TORCH_CHECK(false, mpiErrorText(mpiError_, what));
    if (epilogue) epilogue();
  } catch (...) {
    err = std::current_exception();
  }
  epilogue = nullptr;
  keep.clear();
  holds.clear();
  if (anySource) source_ = devStatus.MPI_SOURCE;
  settle(err);
}

void LoomWork::settle(std::exception_ptr err) {
  error_ = err;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = true;
    exception_ = err;
  }
  done_.store(true, std::memory_order_release);
  cv_.notify_all();
  if (err) {
    future_->setError(err);
  } else if (device_ && idleStream) {
    // The op is done on the device: the future's event goes on a stream
    // with nothing queued, so its consumers wait for nothing else.
    c10::StreamGuard guard(*idleStream);
    future_->markCompleted(c10::IValue(outputs_));
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

// ---------------------------------------------------------------- Engine

Engine& Engine::get() {
  static Engine* engine = new Engine();  // never destroyed: the thread may outlive statics
  return *engine;
}

void Engine::addZombieLocked(c10::intrusive_ptr<LoomWork> w) {
  w->claimed_ = true;
  w->registered = true;
  zombies_.push_back(std::move(w));
}

void Engine::addPendingLocked(c10::intrusive_ptr<LoomWork> w) {
  w->registered = true;
  pending_.push_back(std::move(w));
  npending_.store(pending_.size());
}

void Engine::kick() {
  if (sleeping_.load()) {
    std::lock_guard<std::mutex> lock(sleepMu_);
    sleepCv_.notify_one();
  }
}

bool Engine::testLocked(LoomWork* w) {
  if (w->device()) return w->end && w->end->query();
  int flag = 0;
  int rc;
  if (w->reqs.size() == 1) {
    MPI_Status status;
    rc = MPI_Test(&w->reqs[0], &flag, &status);
    if (rc == MPI_SUCCESS && flag) w->source_ = status.MPI_SOURCE;
  } else {
    rc = MPI_Testall(static_cast<int>(w->reqs.size()), w->reqs.data(), &flag,
                     MPI_STATUSES_IGNORE);
  }
  if (rc != MPI_SUCCESS) {
    w->mpiError_ = rc;
    return true;
  }
  return flag != 0;
}

bool Engine::poll(LoomWork* w) {
  bool mine = false;
  std::exception_ptr broken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (w->claimed_ || !w->registered) return w->done_.load(std::memory_order_acquire);
    try {
      mine = testLocked(w);
    } catch (...) {  // a device error (a sticky CUDA fault, ...)
      broken = std::current_exception();
      mine = true;
    }
    if (mine) w->claimed_ = true;  // the progress thread drops it from pending_
  }
  if (broken) {
    w->fail(whatOf(broken));
    return true;
  }
  if (mine) w->complete();
  return mine;
}

void Engine::publishGroups() {
  std::vector<std::shared_ptr<GroupState>> live;
  {
    std::lock_guard<std::mutex> lock(groupsMu_);
    size_t kept = 0;
    for (size_t i = 0; i < groups_.size(); ++i) {
      auto g = groups_[i].lock();
      if (!g) continue;
      live.push_back(g);
      groups_[kept++] = groups_[i];
    }
    groups_.resize(kept);
  }
  for (auto& g : live) g->publish(false);
}

void Engine::start() {
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

void Engine::stop() {
  if (!started_) return;
  stop_.store(true);
  {
    std::lock_guard<std::mutex> lock(sleepMu_);
    sleepCv_.notify_all();
  }
  thread_.join();
  started_ = false;
}

void Engine::addGroup(const std::shared_ptr<GroupState>& g) {
  std::lock_guard<std::mutex> lock(groupsMu_);
  groups_.push_back(g);
}

void Engine::abortGroup(const std::shared_ptr<GroupState>& g, const std::string& why) {
  g->abort(why);
  std::vector<c10::intrusive_ptr<LoomWork>> failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& w : pending_) {
      if (w->group != g || w->claimed_) continue;
      w->claimed_ = true;
      failed.push_back(w);
      zombies_.push_back(w);
    }
  }
  for (auto& w : failed) w->fail(why);
}

bool Engine::hasPending(const std::shared_ptr<GroupState>& g) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& w : pending_)
    if (w->group == g && !w->claimed_) return true;
  return false;
}

namespace {
// The message of a Work that outlived its group's timeout.
std::string timeoutText(LoomWork& w) {
  GroupState& g = *w.group;
  std::string op = c10d::opTypeToString(w.retrieveOpType());
  for (char& c : op) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string text = "loom: " + op;
  if (w.seq)
    text += " (collective number " + std::to_string(w.seq) + " of group '" + g.name + "', " +
            std::to_string(g.size) + " ranks)";
  else
    text += " (point to point, group '" + g.name + "')";
  text += " did not complete within " + std::to_string(g.timeoutMs.load()) + " ms on group rank " +
          std::to_string(g.rank);
  if (w.seq) {
    g.publish(true);
    text += "; group ranks that had not joined it: " + g.notJoined(w.seq);
  }
  text += ". The group is aborted: its later ops fail; make a new group to go on.";
  return text;
}
}  // namespace

void Engine::run() {
  using Clock = std::chrono::steady_clock;
  std::vector<c10::intrusive_ptr<LoomWork>> finished, timedOut;
  std::vector<std::pair<c10::intrusive_ptr<LoomWork>, std::string>> broken;
  // Works a waiter already finished: their last reference may be ours, and
  // dropping it can release tensors, which takes the GIL. That must happen
  // after mu_ is released: a Python thread holding the GIL may be waiting
  // for mu_ (any MPI call), and the two would wait for each other forever.
  std::vector<c10::intrusive_ptr<LoomWork>> dropped;
  auto idleSince = Clock::now();
  bool onlyDevice = false;
  while (!stop_.load()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      size_t kept = 0;
      onlyDevice = true;
      const auto now = Clock::now();
      // Failed Works go once their requests or streams are done.
      for (size_t i = 0; i < zombies_.size();) {
        bool over;
        try {
          over = testLocked(zombies_[i].get());
        } catch (...) {
          over = true;  // the device says no more: let it go
        }
        if (over) {
          dropped.push_back(std::move(zombies_[i]));
          zombies_[i] = std::move(zombies_.back());
          zombies_.pop_back();
        } else {
          ++i;
        }
      }
      for (size_t i = 0; i < pending_.size(); ++i) {
        LoomWork* w = pending_[i].get();
        if (w->claimed_) {  // a waiter finished it
          dropped.push_back(std::move(pending_[i]));
          continue;
        }
        bool ok;
        try {
          ok = testLocked(w);
        } catch (...) {
          w->claimed_ = true;
          zombies_.push_back(pending_[i]);
          broken.emplace_back(std::move(pending_[i]), whatOf(std::current_exception()));
          continue;
        }
        if (ok) {
          w->claimed_ = true;
          finished.push_back(std::move(pending_[i]));
          continue;
        }
        if (now > w->deadline) {
          w->claimed_ = true;
          zombies_.push_back(pending_[i]);
          timedOut.push_back(std::move(pending_[i]));
          continue;
        }
        if (!w->device()) onlyDevice = false;
        if (kept != i) pending_[kept] = std::move(pending_[i]);
        ++kept;
      }
      pending_.resize(kept);
      npending_.store(kept);
    }
    for (auto& w : finished) {
      try {
        w->complete();
      } catch (...) {  // the future's event (a device error): the future fails
        try {
          auto f = w->getFuture();
          if (!f->completed()) f->setError(std::current_exception());
        } catch (...) {
        }
      }
    }
    for (auto& w : timedOut) {
      std::string why;
      try {
        why = timeoutText(*w);
      } catch (...) {
        why = std::string("loom: ") + w->what + " timed out (its description failed: " +
              whatOf(std::current_exception()) + ")";
      }
      std::fprintf(stderr, "%s\n", why.c_str());
      w->group->abort(why);
      w->fail(why);
    }
    for (auto& [w, why] : broken) w->fail(why);
    const bool busy = !finished.empty() || !timedOut.empty() || !broken.empty();
    finished.clear();
    timedOut.clear();
    broken.clear();
    dropped.clear();
    publishGroups();
    if (npending_.load() > 0 || busy) {
      idleSince = Clock::now();
      if ((oversubscribed_ || onlyDevice) && !busy) {
        // Nothing finished: nap (a new work's kick() ends it early). Device
        // works wait for a stream, which spinning does not speed up.
        std::unique_lock<std::mutex> lock(sleepMu_);
        sleepCv_.wait_for(lock, std::chrono::microseconds(50));
      } else {
        std::this_thread::yield();  // lets a caller take the mutex between passes
      }
      continue;
    }
    // Idle: spin briefly (a training loop issues the next op soon), then sleep.
    if (Clock::now() - idleSince < std::chrono::microseconds(200)) {
      std::this_thread::yield();
      continue;
    }
    std::unique_lock<std::mutex> lock(sleepMu_);
    sleeping_.store(true);
    // Wakes now and then to publish the groups' counts (publishGroups).
    sleepCv_.wait_for(lock, std::chrono::milliseconds(250),
                      [this] { return npending_.load() > 0 || stop_.load(); });
    sleeping_.store(false);
    idleSince = Clock::now();
  }
}

}  // namespace torch_loom
