// The engine behind MPIX_*_enqueue on a GPU stream (stream_internal.h).
//
// An enqueued operation is an inactive persistent request (MPI_Send_init,
// MPI_Recv_init, MPI_Allreduce_init, ...) on host twins of its device
// buffers, built by the enqueuing call, which checks every argument there
// with the blocking call's error classes. On the program's stream the call
// then queues, and returns:
//     copies in (device -> twin)    the operation's inputs
//     mark "trigger"                reached = all earlier work is done
//     gate wait                     later work stops here ...
//     copies back (twin -> device)  ... until Loom opens the gate
//     mark "retire"                 reached = the twins are free again
// Loom's progress (this file's poller, run by every MPI call's progress and
// by the progress thread while the program is outside MPI) starts the
// request once its trigger is reached, in stream order; when the request
// completes it opens the gate; once the retire mark is reached the twins go.
// MPIX_Isend/Irecv_enqueue queue only the first two: later work does not
// wait for them; MPIX_Wait(all)_enqueue queues the gate, the receives'
// copies back and a retire mark.
//
// Why a poller and not CUDA host functions running the MPI call (MPICH's
// way): Loom's internals are not thread-safe and a blocked call would hold
// the API lock, so a host function waiting in MPI for a peer would keep
// this rank's own progress out, and every MPI call of the program's thread
// out with it: a rank inside MPI_Recv, waiting for a message its peer sends
// after synchronising a stream, would never let the peer's enqueued
// allreduce meet its own. Here nothing ever waits while holding the lock:
// the stream waits on the GPU (the gate), the host polls.
//
// Collective order: a persistent collective draws its communicator's
// collective tag when it is created, i.e. in the order the program makes
// the calls, and runs only message-based algorithms, so enqueued and host
// collectives on one communicator match across ranks whatever order they
// start in (persistent_coll_api.cc).
//
// Hazards (docs/gpu.md): while a gate is shut, anything that waits for the
// whole device (cudaFree, cudaFreeHost, cudaDeviceSynchronize, a copy on
// the legacy default stream) waits for the gate, which only progress opens.
// Loom itself issues none of these from progress: twins come from and go to
// the staging pool, and what it must free for real (large twins, gates)
// waits until no gate of any stream is shut (the grave below).
#include <mpi.h>

#include <algorithm>
#include <unordered_map>

#include "api/handles_datatype.h"
#include "api/persistent_coll.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "api/stream_internal.h"
#include "core/comm.h"
#include "core/device_stage.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "core/progress_async.h"

namespace loom::api::stream {

bool onTwins() {
  static const bool twins = params::getBool("LOOM_STREAM_TWINS");
  return twins;
}

// ---- staging ----------------------------------------------------------------

void Staging::add(const void* p, int64_t lo, int64_t hi, Dir dir, bool whole) {
  if (!p || p == MPI_IN_PLACE || hi <= lo || !device::isDevice(p)) return;
  for (Span& s : spans_) {
    if (s.p != p) continue;
    // One buffer named twice (sendbuf == recvbuf): one twin for both, so
    // the MPI call's own aliasing check still sees one address.
    s.lo = std::min(s.lo, lo);
    s.hi = std::max(s.hi, hi);
    s.dir |= dir;
    s.whole = s.whole && whole;
    return;
  }
  spans_.push_back(Span{p, lo, hi, static_cast<uint8_t>(dir), whole});
}

Status Staging::commit() {
  for (Span& s : spans_) {
    s.cap = static_cast<size_t>(s.hi - s.lo);
    s.host = device::stageAlloc(s.cap);
    if (!s.host)
      return errorf(MPI_ERR_NO_MEM, "no host memory for a %zu-byte staging buffer", s.cap);
  }
  return Status::ok();
}

void* Staging::translate(const void* p) const {
  for (const Span& s : spans_)
    if (s.p == p && s.host) return static_cast<char*>(s.host) - s.lo;
  return const_cast<void*>(p);
}

Staging::~Staging() {
  for (Span& s : spans_)
    if (s.host) device::stageFree(s.host, s.cap);
}

// ---- operations ------------------------------------------------------------------

struct Twin {
  void* host;
  size_t cap;
};

// A copy back, queued by the operation's own gate or by its wait's.
struct CopyBack {
  char* dev;
  const void* host;
  size_t bytes;
};

struct Op {
  OpKind kind = OpKind::kBlocking;
  bool wait = false;  // MPIX_Wait(all)_enqueue
  const char* fn = "";
  StreamObj* s = nullptr;
  Comm* comm = nullptr;  // retained: errors go through its handler
  MPI_Request inner = MPI_REQUEST_NULL;
  device::Fence trigger{};
  device::Fence retire{};
  uint32_t gate = 0;  // 0: later work does not wait for it
  std::vector<Twin> twins;
  std::vector<CopyBack> backs;  // kStart: what its wait copies back
  MPI_Status* status = nullptr;
  bool started = false, done = false, opened = false;
  // The result.
  int source = MPI_ANY_SOURCE, tag = MPI_ANY_TAG, error = MPI_SUCCESS;
  int64_t bytes = 0;
  bool cancelled = false;
  // kStart: the request the program holds, and what became of it.
  MPI_Request user = MPI_REQUEST_NULL;
  bool orphan = false;    // the program freed the request: nobody waits
  bool consumed = false;  // a wait took it
  // Waits: the operations and where their statuses go.
  std::vector<std::pair<int, Op*>> waits;
  MPI_Status* statuses = nullptr;  // MPIX_Waitall_enqueue's array (or ignore)
};

namespace {

std::vector<StreamObj*> gGpu;                    // live gpu streams
std::unordered_map<MPI_Request, Op*> gUserReqs;  // requests of kStart ops
int gQueued = 0;                                 // ops not yet retired
bool gPolling = false;
bool gConsuming = false;  // enqueueWait frees the program's request itself
bool gFinalizeHook = false;
std::vector<Twin> gGraveTwins;
std::vector<device::Gate> gGraveGates;

void writeStatus(MPI_Status* st, const Op* a) {
  if (!st) return;
  fillStatus(st, a->source, a->tag, a->bytes, a->cancelled);
  st->MPI_ERROR = a->error;
}

void opQueued() {
  if (gQueued++ == 0) progress::asyncBusy(+1);
}
void opGone() {
  if (--gQueued == 0) progress::asyncBusy(-1);
}

// Device frees wait while any stream stands at a shut gate (device.h,
// holdFrees): the device algorithms' scratch and staging may be freed from
// progress, and cudaFree would wait for the gate.
void updateHold() {
  bool shut = false;
  for (StreamObj* s : gGpu) shut = shut || s->gateOpened != s->gateNext;
  device::holdFrees(shut);
}

// Frees what had to wait for every gate to be open (see the file comment).
void flushGrave() {
  for (StreamObj* s : gGpu)
    if (s->gateOpened != s->gateNext) return;
  for (Twin& t : gGraveTwins) device::stageFree(t.host, t.cap);
  gGraveTwins.clear();
  for (device::Gate& g : gGraveGates) device::gateDestroy(g);
  gGraveGates.clear();
}

// The error of a finished operation, through its communicator's handler.
// There is no caller to return a code to: with MPI_ERRORS_RETURN the
// failure is logged (the data is then undefined, the stream goes on).
void report(Op* op, const Status& why) {
  int rc = raise(op->comm, why, op->fn);
  if (rc != MPI_SUCCESS)
    log::warn("%s: an enqueued operation failed: %s (the stream goes on)", op->fn,
              why.message().c_str());
}

void start(Op* op) {
  op->started = true;
  Request* r = toRequest(op->inner);
  int rc = r && isPersistentColl(r) ? startPersistentColl(r, op->fn) : PMPI_Start(&op->inner);
  if (rc != MPI_SUCCESS) {  // raised already
    op->error = rc;
    op->done = true;
    PMPI_Request_free(&op->inner);
  }
}

bool finishIfDone(Op* op) {
  if (op->wait) {
    for (auto& [i, a] : op->waits)
      if (!a->done) return false;
    for (auto& [i, a] : op->waits) {
      writeStatus(op->statuses ? &op->statuses[i] : op->status, a);
      // Its twins stay until this wait's copies back have run.
      op->twins.insert(op->twins.end(), a->twins.begin(), a->twins.end());
      a->twins.clear();
      a->consumed = true;
    }
    op->done = true;
    return true;
  }
  Request* r = toRequest(op->inner);
  if (r && !r->complete) return false;
  Status why;
  if (r) {
    op->source = r->statusSource;
    op->tag = r->statusTag;
    op->bytes = r->bytes;
    op->cancelled = r->cancelled;
    op->error = r->statusError;
    if (op->error == MPI_ERR_TRUNCATE)
      why = errorf(MPI_ERR_TRUNCATE,
                   "the message from rank %d (tag %d) is longer than the "
                   "receive buffer",
                   op->source, op->tag);
    else if (op->error != MPI_SUCCESS)
      why = r->error.isOk() ? errorf(op->error, "the enqueued operation failed") : r->error;
    PMPI_Request_free(&op->inner);
  }
  op->done = true;
  if (op->kind == OpKind::kBlocking) writeStatus(op->status, op);
  if (op->error != MPI_SUCCESS) report(op, why);
  return true;
}

bool retirable(const Op* op) {
  if (!op->done || (op->gate && !op->opened)) return false;
  if (op->kind == OpKind::kStart && !op->wait && !op->orphan && !op->consumed) return false;
  // The stream may still copy into or out of the twins before these marks.
  return device::fenceDone(op->trigger) && device::fenceDone(op->retire);
}

void destroy(Op* op) {
  gGraveTwins.insert(gGraveTwins.end(), op->twins.begin(), op->twins.end());
  device::fenceDestroy(op->trigger);
  device::fenceDestroy(op->retire);
  if (op->inner != MPI_REQUEST_NULL) PMPI_Request_free(&op->inner);
  Comm::release(op->comm);
  delete op;
  opGone();
}

Op* gated(StreamObj* s, uint32_t gate) {
  for (Op* op : s->ops)
    if (op->gate == gate) return op;
  return nullptr;
}

int advance(StreamObj* s) {
  int events = 0;
  // Start in stream order, each once the stream reached its trigger. A
  // wait starts nothing; its operations started before it.
  for (Op* op : s->ops) {
    if (op->started) continue;
    if (op->wait) {
      op->started = true;
      continue;
    }
    if (!device::fenceDone(op->trigger)) break;
    start(op);
    ++events;
  }
  for (Op* op : s->ops)
    if (op->started && !op->done && finishIfDone(op)) ++events;
  // Gates open in order: opening k opens every gate below k too.
  while (s->gateOpened != s->gateNext) {
    Op* g = gated(s, s->gateOpened + 1);
    if (!g || !g->done) break;
    device::gateOpen(s->gate, ++s->gateOpened);
    g->opened = true;
    ++events;
  }
  auto end = std::remove_if(s->ops.begin(), s->ops.end(), [&](Op* op) {
    if (!retirable(op)) return false;
    destroy(op);
    ++events;
    return true;
  });
  s->ops.erase(end, s->ops.end());
  return events;
}

int poll(void*) {
  if (gPolling || gQueued == 0) return 0;  // re-entered from inside an operation's start
  gPolling = true;
  int events = 0;
  for (size_t i = 0; i < gGpu.size(); ++i) events += advance(gGpu[i]);
  updateHold();
  if (!gGraveTwins.empty() || !gGraveGates.empty()) flushGrave();
  gPolling = false;
  return events;
}

// The program's handle of a kStart operation: a generalized request,
// complete from the start so that MPI_Wait or MPI_Test on it cannot hang,
// and failing with MPI_ERR_REQUEST there (the operation completes on the
// stream: MPIX_Wait_enqueue). Freeing it (MPI_Request_free, or such a
// wait) leaves the operation to finish unwatched.
int userQuery(void*, MPI_Status* status) {
  setEmptyStatus(status);
  log::error(
      "MPI_Wait/MPI_Test/MPI_Request_get_status on a request of MPIX_Isend_enqueue or "
      "MPIX_Irecv_enqueue: it completes on its stream, with MPIX_Wait_enqueue or "
      "MPIX_Waitall_enqueue");
  return MPI_ERR_REQUEST;
}
int userFree(void* extra) {
  if (gConsuming) return MPI_SUCCESS;
  auto* op = static_cast<Op*>(extra);
  gUserReqs.erase(op->user);
  op->user = MPI_REQUEST_NULL;
  op->orphan = true;
  return MPI_SUCCESS;
}
int userCancel(void*, int) {
  return MPI_SUCCESS;
}

// MPI_Finalize: requests never waited for are given up (the program can
// no longer free them), then everything queued runs to its end.
int finalizeDrain(MPI_Comm, int, void*, void*) {
  for (auto& [h, op] : gUserReqs) {
    op->user = MPI_REQUEST_NULL;
    op->orphan = true;
  }
  gUserReqs.clear();
  drain(nullptr);
  return MPI_SUCCESS;
}

// Queues the copies back of `backs` and the retire mark after gate `g`.
Status queueGate(StreamObj* s, Op* op, const std::vector<CopyBack>& backs) {
  op->gate = ++s->gateNext;
  device::holdFrees(true);
  LOOM_TRY(device::streamWaitGate(s->dev, s->gate, op->gate));
  for (const CopyBack& b : backs) LOOM_TRY(device::copyAsync(b.dev, b.host, b.bytes, s->dev));
  return device::fenceRecord(s->dev, &op->retire);
}

}  // namespace

// ---- enqueueing -----------------------------------------------------------------

Status enqueue(StreamObj* s, Comm* comm, OpKind kind, Staging& staging, MPI_Request inner,
               MPI_Status* status, const char* fn, MPI_Request* request) {
  auto* op = new Op;
  op->kind = kind;
  op->fn = fn;
  op->s = s;
  op->comm = comm;
  comm->retain();
  op->inner = inner;
  op->status = status;
  Status st;
  std::vector<CopyBack> backs;
  for (Staging::Span& sp : staging.spans()) {
    char* dev = static_cast<char*>(const_cast<void*>(sp.p)) + sp.lo;
    const size_t n = sp.cap;
    if (st.isOk() && ((sp.dir & Staging::kIn) || !sp.whole))
      st = device::copyAsync(sp.host, dev, n, s->dev);
    if (sp.dir & Staging::kOut) backs.push_back(CopyBack{dev, sp.host, n});
    // The stream may use the twin from here on: it belongs to the op.
    op->twins.push_back(Twin{sp.host, sp.cap});
    sp.host = nullptr;
  }
  if (st.isOk()) st = device::fenceRecord(s->dev, &op->trigger);
  if (!st.isOk()) {
    // The stream may still copy into the twins and nothing tells when:
    // they are left allocated (a device error; the stream is unusable).
    log::warn("%s: %zu staging buffers left allocated after a device error", fn, op->twins.size());
    op->twins.clear();
    device::fenceDestroy(op->trigger);
    if (op->inner != MPI_REQUEST_NULL) PMPI_Request_free(&op->inner);
    Comm::release(comm);
    delete op;
    return st;
  }
  if (kind == OpKind::kBlocking) {
    st = queueGate(s, op, backs);
  } else {
    op->backs = std::move(backs);
  }
  if (!st.isOk()) {
    // Past the trigger: the op must still flow through, or its gate number
    // (taken) would never open and the stream would stop there for good.
    // It does not run; its gate opens in order; the error goes back now.
    op->started = op->done = true;
    op->error = st.code();
    op->orphan = true;
    if (op->inner != MPI_REQUEST_NULL) PMPI_Request_free(&op->inner);
  }
  s->ops.push_back(op);
  opQueued();
  if (!st.isOk()) return st;
  if (kind == OpKind::kStart) {
    MPI_Request h = MPI_REQUEST_NULL;
    PMPI_Grequest_start(userQuery, userFree, userCancel, op, &h);
    PMPI_Grequest_complete(h);
    op->user = h;
    gUserReqs[h] = op;
    *request = h;
  }
  return Status::ok();
}

int unwaited(StreamObj* s) {
  int n = 0;
  for (const auto& [h, op] : gUserReqs) n += op->s == s;
  return n;
}

bool isEnqueuedRequest(MPI_Request h, StreamObj** s) {
  auto it = gUserReqs.find(h);
  if (it == gUserReqs.end()) return false;
  if (s) *s = it->second->s;
  return true;
}

Status enqueueWait(int count, MPI_Request reqs[], MPI_Status* statuses, bool all, const char* fn) {
  StreamObj* s = nullptr;
  std::vector<std::pair<int, Op*>> waits;
  for (int i = 0; i < count; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    auto it = gUserReqs.find(reqs[i]);
    if (it == gUserReqs.end())
      return errorf(MPI_ERR_REQUEST,
                    "array_of_requests[%d] is not a request of "
                    "MPIX_Isend_enqueue or MPIX_Irecv_enqueue on a GPU stream",
                    i);
    Op* a = it->second;
    if (s && a->s != s)
      return errorf(MPI_ERR_REQUEST,
                    "the requests belong to different streams (one wait "
                    "queues on one stream)");
    for (auto& w : waits)
      if (w.second == a) return errorf(MPI_ERR_REQUEST, "request %d appears twice", i);
    s = a->s;
    waits.emplace_back(i, a);
  }
  // Null entries have an empty status at once.
  for (int i = 0; i < count; ++i)
    if (reqs[i] == MPI_REQUEST_NULL && all && statuses) setEmptyStatus(&statuses[i]);
  if (!s) {
    if (!all && statuses) setEmptyStatus(statuses);
    return Status::ok();
  }
  auto* w = new Op;
  w->wait = true;
  w->fn = fn;
  w->s = s;
  w->comm = waits.front().second->comm;
  w->comm->retain();
  w->waits = waits;
  if (all)
    w->statuses = statuses;
  else
    w->status = statuses;
  std::vector<CopyBack> backs;
  for (auto& [i, a] : waits) backs.insert(backs.end(), a->backs.begin(), a->backs.end());
  Status st = queueGate(s, w, backs);
  for (auto& [i, a] : waits) {
    gUserReqs.erase(a->user);
    gConsuming = true;
    PMPI_Request_free(&a->user);
    gConsuming = false;
    a->user = MPI_REQUEST_NULL;
    reqs[i] = MPI_REQUEST_NULL;
  }
  s->ops.push_back(w);
  opQueued();
  // A failed gate still opens in order (above); the data is not copied back.
  return st;
}

// ---- streams come and go ------------------------------------------------------

void streamAdded(StreamObj* s) {
  if (gGpu.empty()) progress::add(poll, nullptr);
  gGpu.push_back(s);
  if (!gFinalizeHook && rt().worldActive) {
    // MPI_Finalize deletes MPI_COMM_SELF's attributes first: operations
    // still queued then finish before the runtime goes. (A program of
    // sessions only must synchronise its streams before finalizing.)
    int kv = MPI_KEYVAL_INVALID;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalizeDrain, &kv, nullptr);
    PMPI_Comm_set_attr(MPI_COMM_SELF, kv, nullptr);
    gFinalizeHook = true;
  }
}

void streamRemoved(StreamObj* s) {
  gGpu.erase(std::remove(gGpu.begin(), gGpu.end(), s), gGpu.end());
  // The stream passed its last gate (every op retired): its counter may go
  // once no other stream is stopped at a gate.
  gGraveGates.push_back(s->gate);
  s->gate = device::Gate{};
  updateHold();
  flushGrave();
  if (gGpu.empty()) progress::remove(poll, nullptr);
}

void drain(StreamObj* s) {
  progress::waitUntil([s] {
    if (s) return s->ops.empty();
    for (StreamObj* g : gGpu)
      if (!g->ops.empty()) return false;
    return true;
  });
  flushGrave();
}

// ---- geometry ------------------------------------------------------------------

namespace {
// A type the MPI call will accept (else the span is empty and its own
// checks report the problem).
const Datatype* usable(MPI_Datatype type) {
  const Datatype* t = toDatatype(type);
  return t && t->isCommitted() && t->size() > 0 ? t : nullptr;
}
}  // namespace

// device::typeSpan, refusing (empty span) what does not fit 64 bits: the
// span is computed before the call's own checks, which then report the
// count.
void spanOf(int64_t count, const Datatype* t, int64_t* lo, int64_t* hi) {
  *lo = *hi = 0;
  int64_t step, l, h;
  if (!t || count <= 0 || __builtin_mul_overflow(count - 1, t->extent(), &step) ||
      __builtin_add_overflow(t->trueLb(), std::min<int64_t>(0, step), &l) ||
      __builtin_add_overflow(t->trueUb(), std::max<int64_t>(0, step), &h))
    return;
  *lo = l;
  *hi = h;
}

void typeSpan(int64_t count, MPI_Datatype type, int64_t* lo, int64_t* hi) {
  spanOf(count, usable(type), lo, hi);
}

void blocksSpan(int n, const std::function<int64_t(int)>& counts,
                const std::function<int64_t(int)>& displs, MPI_Datatype type, int64_t* lo,
                int64_t* hi) {
  *lo = *hi = 0;
  const Datatype* t = usable(type);
  if (!t) return;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    int64_t l, h;
    spanOf(counts(i), t, &l, &h);
    if (h <= l) continue;
    int64_t at, a, b;
    if (__builtin_mul_overflow(displs(i), t->extent(), &at) || __builtin_add_overflow(at, l, &a) ||
        __builtin_add_overflow(at, h, &b)) {
      *lo = *hi = 0;  // nonsense displacements: the call's checks say so
      return;
    }
    *lo = any ? std::min(*lo, a) : a;
    *hi = any ? std::max(*hi, b) : b;
    any = true;
  }
}

bool contiguous(MPI_Datatype type) {
  const Datatype* t = usable(type);
  return t && t->isContiguous();
}

}  // namespace loom::api::stream
