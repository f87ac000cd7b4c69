// The engine of the loom torch.distributed backend: one mutex that
// serialises every MPI call of the process (Loom provides
// MPI_THREAD_SERIALIZED), the Work type backed by nonblocking MPI requests,
// and the progress thread that completes them.
//
// Life of an op: the calling thread checks the tensors, takes the mutex,
// starts the MPI_I* call, appends the Work to the pending list and drops the
// mutex (the whole caller path). The progress thread tests the pending
// requests under the same mutex; a Work whose requests are all complete is
// claimed (exactly once, under the mutex) and finished outside it: its
// epilogue runs (copy back from a contiguous staging buffer, AVG's divide),
// then the Work is marked complete and its future is completed, which runs
// DDP's callbacks. Work::wait() does not sleep on the progress thread: it
// tests its own requests too, so a blocking collective finishes as soon as
// the MPI layer is done. When nothing is pending the progress thread spins
// for a short while, then sleeps on a condition variable.
#pragma once

#include <mpi.h>

#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace torch_loom {

// "loom: MPI_Foo failed: <Loom's error string>".
std::string mpiErrorText(int rc, const char* what);
// Throws a RuntimeError (c10::Error) with mpiErrorText when rc != MPI_SUCCESS.
void checkMpi(int rc, const char* what);
// "loom: a device operation failed: <e's message>".
std::string whatOf(std::exception_ptr e);

// A Work on CPU tensors completes when its MPI requests do. A Work on
// device tensors (device() set) was queued on the group's communication
// stream (loom_backend.cpp, "Device tensors"): it completes when the stream
// passes its end event. Its wait() and synchronize() make the caller's
// current stream wait for that event and return at once; the host never
// waits (the progress thread polls the event, then drops the tensors the
// Work kept alive and completes the future).
// What the Works of one group share: names for messages, this rank's count
// of collectives started, the store its ranks publish those counts to (so a
// rank whose collective timed out can say who had not joined it), and
// whether the group was aborted (a timeout, abort()).
struct GroupState {
  std::string name;  // torch's group name
  int rank = 0;
  int size = 0;
  // Of every op in ms (0: none); setTimeout may change it while the
  // progress thread reads it.
  std::atomic<int64_t> timeoutMs{0};
  c10::intrusive_ptr<c10d::Store> store;  // a clone for the progress thread; may be null
  std::atomic<uint64_t> issued{0};        // collectives this rank started
  // The progress thread's: what it published last, and when.
  uint64_t published = 0;
  std::chrono::steady_clock::time_point publishedAt{};

  bool aborted() const { return abortedFlag.load(std::memory_order_acquire); }
  std::string abortReason();
  void abort(const std::string& why);  // the first reason stays

  // Publishes `issued` under "loom_seq/<rank>" when it changed (progress
  // thread; errors ignored: the store is only for messages).
  void publish(bool force);
  // The group ranks whose published count is below `seq` (or that
  // published none), as "1, 3"; "unknown" without a store.
  std::string notJoined(uint64_t seq);

 private:
  std::atomic<bool> abortedFlag{false};
  std::mutex mu;
  std::string reason;
};

class LoomWork : public c10d::Work {
 public:
  LoomWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
           std::optional<c10::Device> device = std::nullopt);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  bool wait(std::chrono::milliseconds timeout) override;
  void synchronize() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  const std::optional<c10::Device>& device() const { return device_; }

  // Filled by the op before the Work is handed to the engine.
  std::vector<MPI_Request> reqs;       // outstanding requests (guarded by the engine's mutex)
  std::function<void()> epilogue;      // runs once all requests are complete
  std::vector<at::Tensor> keep;        // buffers MPI reads or writes, alive until then
  std::vector<std::shared_ptr<void>> holds;  // counts and displacements MPI may read until then
  const char* what = "MPI request";    // the MPI call, for error messages

  // Device Works: the end event on the communication stream (recorded after
  // the op and its epilogue), that stream, and the status a receive from
  // any source writes when the stream gets there.
  std::unique_ptr<c10::Event> end;
  std::optional<c10::Stream> stream;
  // A stream with nothing queued: the future's event goes there (on the
  // communication stream it would wait for the ops queued after this one).
  std::optional<c10::Stream> idleStream;
  MPI_Status devStatus{};
  bool anySource = false;

  // Timeouts: the group, this op's collective sequence number (0: not a
  // collective) and when it times out (max: never).
  std::shared_ptr<GroupState> group;
  uint64_t seq = 0;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

  // Fails the Work with `why` (a timeout, an abort): it is done, its
  // waiters raise, its future holds the error. Exactly once, like complete().
  void fail(const std::string& why);
  // Set when the Work is handed to the engine: before that (an open
  // coalesced group) nothing completes it.
  bool registered = false;
  // A collective (counted in its group when it is started, not before).
  bool collective = false;

  // Runs the epilogue, marks the Work done and completes its future (the
  // engine, once the requests or the stream are done; exactly once).
  void complete();

 private:
  friend class Engine;
  void settle(std::exception_ptr err);  // done (err null) or failed: waiters, the future

  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::atomic<bool> done_{false};
  std::exception_ptr error_;           // set before done_
  bool claimed_ = false;               // guarded by the engine's mutex
  int mpiError_ = MPI_SUCCESS;         // from MPI_Test, guarded likewise
  int source_ = -1;
  std::optional<c10::Device> device_;
};

class Engine {
 public:
  static Engine& get();

  // Every MPI call of the extension runs under this mutex.
  std::mutex& mpi() { return mu_; }

  // Registers a Work whose requests were started under mpi(): must be called
  // with mpi() held (lock held by `held`).
  void addPendingLocked(c10::intrusive_ptr<LoomWork> w);
  // Wakes the progress thread if it sleeps; call after dropping mpi().
  void kick();

  // One test of w's requests; finishes w when they are complete and w is not
  // claimed yet. Returns true when w is done.
  bool poll(LoomWork* w);

  // More ranks than cores on this node: a pass that completes nothing then
  // naps briefly instead of spinning, leaving the cores to the ranks'
  // compute (the backward pass DDP overlaps with its allreduces).
  void setOversubscribed(bool yes) { oversubscribed_ = yes; }

  void start();   // the progress thread (idempotent)
  void stop();    // joins it (before MPI_Finalize)

  // The progress thread publishes these groups' counts (GroupState::publish).
  void addGroup(const std::shared_ptr<GroupState>& g);
  // A Work that failed before it reached the engine (an error after some
  // of its operations were started): kept, with its buffers, until those
  // are done. Call with mpi() held.
  void addZombieLocked(c10::intrusive_ptr<LoomWork> w);
  // Fails every pending Work of `g` with `why` (abort()); they stay in the
  // engine, unclaimed by anyone, until their requests or streams are done.
  void abortGroup(const std::shared_ptr<GroupState>& g, const std::string& why);
  // Whether `g` has Works that are neither done nor failed.
  bool hasPending(const std::shared_ptr<GroupState>& g);

 private:
  Engine() = default;
  void run();
  void publishGroups();
  bool testLocked(LoomWork* w);  // true when complete (or failed)

  std::mutex mu_;
  std::vector<c10::intrusive_ptr<LoomWork>> pending_;  // guarded by mu_
  // Works failed before their requests finished: their buffers stay alive
  // until the requests (or the device stream) are done. Guarded by mu_.
  std::vector<c10::intrusive_ptr<LoomWork>> zombies_;
  std::mutex groupsMu_;
  std::vector<std::weak_ptr<GroupState>> groups_;
  std::atomic<size_t> npending_{0};
  std::mutex sleepMu_;
  std::condition_variable sleepCv_;
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
  bool started_ = false;
  bool oversubscribed_ = false;
};

}  // namespace torch_loom
