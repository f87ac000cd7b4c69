// MPI_T performance variables: the point-to-point engine's counters
// (p2p/counters.h), all of type MPI_UNSIGNED_LONG_LONG, bound to no object.
//
//   loom_p2p_{self,shm,ofi}_messages_sent   COUNTER   messages handed to each transport
//   loom_p2p_{self,shm,ofi}_bytes_sent      COUNTER   their bytes
//   loom_p2p_messages_received              COUNTER   messages arrived (any transport)
//   loom_p2p_bytes_received                 COUNTER   their bytes
//   loom_p2p_unexpected_length              LEVEL     messages waiting for a receive now
//   loom_p2p_unexpected_peak                HIGHWATERMARK  the most that ever waited
//   loom_p2p_device_*                       COUNTER   which path device buffers took
//                                                     (p2p/device_path.h, docs/gpu.md)
//
// Semantics (MPI 5.0 §15.3.7): the counters and the high-water mark are
// not continuous: a handle starts stopped; while started it accumulates,
// and a read reports what happened in this handle's started intervals
// since its allocation or last reset (the engine's counters only grow, so
// each handle keeps an offset). They can be reset, not written. The level
// is continuous and read-only: it reads the queue's length at any time.
//
// The high-water mark of every handle is derived from one process-wide
// peak the engine maintains: whenever a handle starts or is reset, every
// started handle first folds the peak so far into its own value, then the
// peak restarts from the current length. That costs the engine one
// comparison per queued message and nothing per handle.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "api/mpit_internal.h"
#include "api/runtime.h"
#include "p2p/counters.h"

namespace loom::api::mpit {
namespace {

using p2p::gCounters;

struct Pvar {
  const char* name;
  const char* desc;
  int varClass;
  int verbosity;
  bool continuous;
  bool readonly;  // may not be reset either
  uint64_t (*now)();
};

constexpr Pvar kPvars[] = {
    {"loom_p2p_self_messages_sent", "Messages a rank sent to itself",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_DETAIL, false, false,
     [] { return gCounters.sentMessages[p2p::kViaSelf]; }},
    {"loom_p2p_self_bytes_sent", "Bytes of the messages a rank sent to itself",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_DETAIL, false, false,
     [] { return gCounters.sentBytes[p2p::kViaSelf]; }},
    {"loom_p2p_shm_messages_sent",
     "Messages sent to ranks of this node through shared memory (collectives' own messages "
     "included)",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, false, false,
     [] { return gCounters.sentMessages[p2p::kViaShm]; }},
    {"loom_p2p_shm_bytes_sent", "Bytes of the messages sent through shared memory",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, false, false,
     [] { return gCounters.sentBytes[p2p::kViaShm]; }},
    {"loom_p2p_ofi_messages_sent",
     "Messages sent to ranks on other nodes through libfabric (collectives' own messages "
     "included)",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, false, false,
     [] { return gCounters.sentMessages[p2p::kViaOfi]; }},
    {"loom_p2p_ofi_bytes_sent", "Bytes of the messages sent through libfabric",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, false, false,
     [] { return gCounters.sentBytes[p2p::kViaOfi]; }},
    {"loom_p2p_messages_received",
     "Messages that arrived at this rank, over any transport, matched or not yet",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, false, false,
     [] { return gCounters.receivedMessages; }},
    {"loom_p2p_bytes_received", "Bytes of the messages that arrived at this rank",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, false, false,
     [] { return gCounters.receivedBytes; }},
    {"loom_p2p_unexpected_length",
     "Messages that arrived before a matching receive was posted and still wait for one "
     "(every communicator)",
     MPI_T_PVAR_CLASS_LEVEL, MPI_T_VERBOSITY_TUNER_BASIC, true, true,
     [] { return gCounters.unexpectedLength; }},
    {"loom_p2p_unexpected_peak",
     "The most messages that waited for a receive at once (loom_p2p_unexpected_length's "
     "high-water mark)",
     MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_VERBOSITY_TUNER_BASIC, false, false,
     [] { return gCounters.unexpectedPeak; }},
    {"loom_p2p_device_ipc_received",
     "Messages received from a device buffer of this node by one copy from the mapped peer "
     "allocation (CUDA IPC)",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, false, false,
     [] { return gCounters.deviceIpcReceived; }},
    {"loom_p2p_device_ipc_mapped",
     "Peer device allocations mapped for CUDA IPC (misses of the cache of mappings)",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, false, false,
     [] { return gCounters.deviceIpcMapped; }},
    {"loom_p2p_device_ipc_declined",
     "CUDA IPC requests this rank could not map, answered with the staged pipeline",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, false, false,
     [] { return gCounters.deviceIpcDeclined; }},
    {"loom_p2p_device_chunked_sent",
     "Messages sent from device buffers through pinned chunks (device copies overlapping "
     "the transport)",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, false, false,
     [] { return gCounters.deviceChunkedSent; }},
    {"loom_p2p_device_chunked_received",
     "Messages received into device buffers through pinned chunks",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, false, false,
     [] { return gCounters.deviceChunkedReceived; }},
    {"loom_p2p_device_staged_whole",
     "Sends and receives whose device buffer was staged whole through a host copy",
     MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, false, false,
     [] { return gCounters.deviceStagedWhole; }},
};
constexpr int kNumPvars = sizeof kPvars / sizeof kPvars[0];

const Pvar* pvar(int index) { return index >= 0 && index < kNumPvars ? &kPvars[index] : nullptr; }

struct Session;
struct Handle {
  Session* session;
  int index;
  bool started;
  uint64_t value;  // counters: accumulated over stopped intervals; hwm: max so far
  uint64_t base;   // counters: the engine's counter when last started or reset
};
struct Session {
  std::vector<std::unique_ptr<Handle>> handles;
};

std::vector<std::unique_ptr<Session>>& sessions() {
  static std::vector<std::unique_ptr<Session>> s;
  return s;
}

Session* toSession(MPI_T_pvar_session s) {
  for (auto& p : sessions())
    if (reinterpret_cast<MPI_T_pvar_session>(p.get()) == s) return p.get();
  return nullptr;
}

Handle* toHandle(Session* s, MPI_T_pvar_handle h) {
  for (auto& p : s->handles)
    if (reinterpret_cast<MPI_T_pvar_handle>(p.get()) == h) return p.get();
  return nullptr;
}

bool isPeak(const Handle& h) { return kPvars[h.index].varClass == MPI_T_PVAR_CLASS_HIGHWATERMARK; }

// A handle of the high-water mark restarts its interval: see the file's
// comment.
void newPeakInterval() {
  for (auto& s : sessions())
    for (auto& h : s->handles)
      if (isPeak(*h) && h->started) h->value = std::max(h->value, gCounters.unexpectedPeak);
  gCounters.unexpectedPeak = gCounters.unexpectedLength;
}

uint64_t readHandle(const Handle& h) {
  const Pvar& v = kPvars[h.index];
  if (v.continuous) return v.now();
  if (isPeak(h)) return h.started ? std::max(h.value, v.now()) : h.value;
  return h.value + (h.started ? v.now() - h.base : 0);
}

void start(Handle& h) {
  if (h.started) return;
  if (isPeak(h)) newPeakInterval();
  h.base = kPvars[h.index].now();
  h.started = true;
}

void stop(Handle& h) {
  if (!h.started) return;
  h.value = readHandle(h);
  h.started = false;
}

void reset(Handle& h) {
  if (isPeak(h)) {
    newPeakInterval();
    h.value = gCounters.unexpectedLength;
  } else {
    h.value = 0;
    h.base = kPvars[h.index].now();
  }
}

// The checks start, stop and reset share: a valid session and, unless
// MPI_T_PVAR_ALL_HANDLES, a handle of that session.
int lookup(MPI_T_pvar_session session, MPI_T_pvar_handle handle, Session** s, Handle** h) {
  *s = toSession(session);
  if (!*s) return MPI_T_ERR_INVALID_SESSION;
  *h = nullptr;
  if (handle == MPI_T_PVAR_ALL_HANDLES) return MPI_SUCCESS;
  *h = toHandle(*s, handle);
  return *h ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

}  // namespace

int pvarCount() { return kNumPvars; }

void freePvarSessions() { sessions().clear(); }

}  // namespace loom::api::mpit

namespace mpit = loom::api::mpit;

extern "C" int PMPI_T_pvar_get_num(int* num_pvar) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!num_pvar) return MPI_T_ERR_INVALID;
  *num_pvar = mpit::pvarCount();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_get_num)

// Every output may be NULL (not wanted).
extern "C" int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity,
                                    int* var_class, MPI_Datatype* datatype, MPI_T_enum* enumtype,
                                    char* desc, int* desc_len, int* bind, int* readonly,
                                    int* continuous, int* atomic) {
  LOOM_MPIT_REQUIRE_INIT();
  const mpit::Pvar* v = mpit::pvar(pvar_index);
  if (!v) return MPI_T_ERR_INVALID_INDEX;
  mpit::copyString(v->name, name, name_len);
  if (verbosity) *verbosity = v->verbosity;
  if (var_class) *var_class = v->varClass;
  if (datatype) *datatype = MPI_UNSIGNED_LONG_LONG;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  mpit::copyString(v->desc, desc, desc_len);
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (readonly) *readonly = v->readonly;
  if (continuous) *continuous = v->continuous;
  if (atomic) *atomic = 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_get_info)

extern "C" int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!name || !pvar_index) return MPI_T_ERR_INVALID;
  for (int i = 0; i < mpit::kNumPvars; ++i) {
    if (mpit::kPvars[i].varClass == var_class && std::strcmp(mpit::kPvars[i].name, name) == 0) {
      *pvar_index = i;
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_get_index)

extern "C" int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!session) return MPI_T_ERR_INVALID;
  auto s = std::make_unique<mpit::Session>();
  *session = reinterpret_cast<MPI_T_pvar_session>(s.get());
  mpit::sessions().push_back(std::move(s));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_session_create)

// Frees the session's handles with it.
extern "C" int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!session) return MPI_T_ERR_INVALID;
  auto& all = mpit::sessions();
  auto it = std::find_if(all.begin(), all.end(), [&](const auto& p) {
    return reinterpret_cast<MPI_T_pvar_session>(p.get()) == *session;
  });
  if (it == all.end()) return MPI_T_ERR_INVALID_SESSION;
  all.erase(it);
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_session_free)

// obj_handle is ignored (no variable is bound to an object); every variable
// is one value (*count = 1). A continuous variable's handle is started.
extern "C" int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index,
                                        void* obj_handle, MPI_T_pvar_handle* handle,
                                        int* count) {
  (void)obj_handle;
  LOOM_MPIT_REQUIRE_INIT();
  mpit::Session* s = mpit::toSession(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  const mpit::Pvar* v = mpit::pvar(pvar_index);
  if (!v) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_T_ERR_INVALID;
  auto h = std::make_unique<mpit::Handle>(mpit::Handle{s, pvar_index, v->continuous, 0, 0});
  *handle = reinterpret_cast<MPI_T_pvar_handle>(h.get());
  *count = 1;
  s->handles.push_back(std::move(h));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_handle_alloc)

extern "C" int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  LOOM_MPIT_REQUIRE_INIT();
  mpit::Session* s = mpit::toSession(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  if (!handle) return MPI_T_ERR_INVALID;
  auto it = std::find_if(s->handles.begin(), s->handles.end(), [&](const auto& p) {
    return reinterpret_cast<MPI_T_pvar_handle>(p.get()) == *handle;
  });
  if (it == s->handles.end()) return MPI_T_ERR_INVALID_HANDLE;
  s->handles.erase(it);
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_handle_free)

// MPI_T_PVAR_ALL_HANDLES starts every handle of the session that can be
// started (continuous ones are skipped); one continuous handle gives
// MPI_T_ERR_PVAR_NO_STARTSTOP. Starting a started handle does nothing.
namespace {
// start, stop and reset: `act` on one handle, or with MPI_T_PVAR_ALL_HANDLES
// on every handle of the session that `allowed` accepts (the others are
// skipped); a single handle it refuses gives `refused`.
template <class Allowed, class Act>
int onHandles(MPI_T_pvar_session session, MPI_T_pvar_handle handle, Allowed allowed, int refused,
              Act act) {
  mpit::Session* s;
  mpit::Handle* h;
  if (int rc = mpit::lookup(session, handle, &s, &h); rc != MPI_SUCCESS) return rc;
  if (!h) {
    for (auto& x : s->handles)
      if (allowed(mpit::kPvars[x->index])) act(*x);
    return MPI_SUCCESS;
  }
  if (!allowed(mpit::kPvars[h->index])) return refused;
  act(*h);
  return MPI_SUCCESS;
}
}  // namespace

extern "C" int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  LOOM_MPIT_REQUIRE_INIT();
  return onHandles(
      session, handle, [](const auto& v) { return !v.continuous; }, MPI_T_ERR_PVAR_NO_STARTSTOP,
      [](mpit::Handle& x) { mpit::start(x); });
}
LOOM_WEAK_ALIAS(MPI_T_pvar_start)

extern "C" int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  LOOM_MPIT_REQUIRE_INIT();
  return onHandles(
      session, handle, [](const auto& v) { return !v.continuous; }, MPI_T_ERR_PVAR_NO_STARTSTOP,
      [](mpit::Handle& x) { mpit::stop(x); });
}
LOOM_WEAK_ALIAS(MPI_T_pvar_stop)

// buf receives one unsigned long long.
extern "C" int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  LOOM_MPIT_REQUIRE_INIT();
  mpit::Session* s;
  mpit::Handle* h;
  if (int rc = mpit::lookup(session, handle, &s, &h); rc != MPI_SUCCESS) return rc;
  if (!h) return MPI_T_ERR_INVALID_HANDLE;  // MPI_T_PVAR_ALL_HANDLES
  if (!buf) return MPI_T_ERR_INVALID;
  unsigned long long v = mpit::readHandle(*h);
  std::memcpy(buf, &v, sizeof v);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_read)

// No variable can be written.
extern "C" int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                 const void* buf) {
  (void)buf;
  LOOM_MPIT_REQUIRE_INIT();
  mpit::Session* s;
  mpit::Handle* h;
  if (int rc = mpit::lookup(session, handle, &s, &h); rc != MPI_SUCCESS) return rc;
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_T_ERR_PVAR_NO_WRITE;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_write)

// Counters restart from 0, the high-water mark from the current length; a
// read-only variable gives MPI_T_ERR_PVAR_NO_WRITE (with
// MPI_T_PVAR_ALL_HANDLES it is skipped).
extern "C" int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  LOOM_MPIT_REQUIRE_INIT();
  return onHandles(
      session, handle, [](const auto& v) { return !v.readonly; }, MPI_T_ERR_PVAR_NO_WRITE,
      [](mpit::Handle& x) { mpit::reset(x); });
}
LOOM_WEAK_ALIAS(MPI_T_pvar_reset)

extern "C" int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                     void* buf) {
  LOOM_MPIT_REQUIRE_INIT();
  mpit::Session* s;
  mpit::Handle* h;
  if (int rc = mpit::lookup(session, handle, &s, &h); rc != MPI_SUCCESS) return rc;
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  if (mpit::kPvars[h->index].readonly) return MPI_T_ERR_PVAR_NO_WRITE;
  if (!buf) return MPI_T_ERR_INVALID;
  unsigned long long v = mpit::readHandle(*h);
  std::memcpy(buf, &v, sizeof v);
  mpit::reset(*h);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_readreset)
