// Sessions (MPI 5.0 §11.3): MPI_Session_init/finalize, process sets, the
// session's info and error handler.
//
// A session is one more user of the runtime (runtime.h: acquireRuntime /
// releaseRuntime): the first of MPI_Init and MPI_Session_init brings PMIx,
// the transports and the job's communicators up; the last of MPI_Finalize
// and MPI_Session_finalize tears them down. So sessions work alone (the
// sessions model) and next to MPI_Init (the world model), in any order.
// Loom cannot start its runtime a second time in one process: a session
// initialized after everything was finalized fails with MPI_ERR_OTHER.
//
// Process sets: "mpi://WORLD" (every process of the job) and "mpi://SELF"
// (the caller). Names compare case-insensitively, as URIs' schemes do.
//
// A session's error handler is a predefined one or a user function made by
// MPI_Session_create_errhandler (called with the session, the code and the
// failing function's name); the session holds a reference on it.
#include <strings.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "api/bsend.h"
#include "api/comm_internal.h"
#include "api/info_internal.h"
#include "api/runtime.h"
#include "core/handle_pool.h"
#include "core/log.h"

using loom::Errhandler;
using loom::errorf;
using loom::Group;
using loom::Info;
using loom::InfoEntries;
using loom::Status;
using loom::api::raiseNoObject;
using loom::api::rt;

namespace {

class Session : public loom::HandlePool<Session> {
 public:
  static constexpr uint32_t kMagic = 0x53455353;  // "SESS"
  ~Session() { magic = 0; }
  bool valid() const { return magic == kMagic; }

  uint32_t magic = kMagic;
  Errhandler* errhandler = &loom::gErrorsAreFatal;  // a reference held
  InfoEntries info;  // what MPI_Session_get_info returns
  // MPI_Session_attach_buffer's (buffer_api.cc); flushed and freed by
  // MPI_Session_finalize.
  loom::api::SendBuffer* sendBuffer = nullptr;
};

constexpr const char* kPsets[] = {"mpi://WORLD", "mpi://SELF"};
constexpr int kNumPsets = 2;

Session* toSession(MPI_Session handle) {
  auto v = reinterpret_cast<uintptr_t>(handle);
  if (v < 4096 || v % alignof(Session) != 0) return nullptr;
  auto* s = reinterpret_cast<Session*>(handle);
  return s->valid() ? s : nullptr;
}

// Reports through `eh`, the error handler of session `s` (nullptr: none
// yet). MPI_ERRORS_ARE_FATAL / _ABORT end the job; a user handler is called
// and the code returned.
int raiseWith(Errhandler* eh, const Status& st, const char* fn, Session* s = nullptr) {
  const char* cls = loom::errorClassName(st.code());
  std::string text =
      std::string(fn) + ": " + (cls ? cls : "MPI_ERR_UNKNOWN") + ": " + st.message();
  if (eh->kind == Errhandler::Kind::kReturn) {
    loom::log::debug("err", "%s (returned to the caller)", text.c_str());
    return st.code();
  }
  if (eh->kind == Errhandler::Kind::kUser && eh->sessionFn) {
    loom::log::debug("err", "%s (to the user's error handler)", text.c_str());
    MPI_Session handle = reinterpret_cast<MPI_Session>(s);
    int code = st.code();
    eh->retain();  // the handler may replace itself
    if (eh->fortran) {
      MPI_Fint fh = PMPI_Session_toint(handle);
      reinterpret_cast<void (*)(MPI_Fint*, MPI_Fint*)>(eh->sessionFn)(&fh, &code);
    } else {
      eh->sessionFn(&handle, &code, fn);
    }
    Errhandler::release(eh);
    return st.code();
  }
  loom::log::error("%s", text.c_str());
  loom::api::abortJob(st.code(), std::string(eh->name) + " on a session: " + text, true);
}

// A handler a session may take: predefined, or made for sessions.
bool sessionHandler(const Errhandler* eh) {
  return eh && (eh->isPredefined() || eh->sessionFn);
}

int badSession(const char* fn) {
  return raiseNoObject(errorf(MPI_ERR_SESSION, "invalid session"), fn);
}

// Index of the process set `name`, or -1.
int psetIndex(const char* name) {
  for (int i = 0; i < kNumPsets; ++i)
    if (strcasecmp(name, kPsets[i]) == 0) return i;
  return -1;
}

// The job ranks of process set `i`.
std::vector<int> psetMembers(int i) {
  if (i == 1) return {rt().proc.rank};
  std::vector<int> all(rt().proc.size);
  for (int r = 0; r < rt().proc.size; ++r) all[r] = r;
  return all;
}

}  // namespace

namespace loom::api {

SendBuffer** sessionBufferSlot(MPI_Session handle) {
  Session* s = toSession(handle);
  return s ? &s->sendBuffer : nullptr;
}

int raiseOnSession(MPI_Session handle, const Status& st, const char* fn) {
  Session* s = toSession(handle);
  return s ? raiseWith(s->errhandler, st, fn, s) : raiseNoObject(st, fn);
}

}  // namespace loom::api

extern "C" int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  static const char* fn = "MPI_Session_init";
  Errhandler* eh = loom::api::toErrhandler(errhandler);
  if (!sessionHandler(eh))
    return raiseNoObject(errorf(MPI_ERR_ERRHANDLER, "errhandler is neither a predefined error "
                                "handler nor one made by MPI_Session_create_errhandler"),
                         fn);
  if (!session) return raiseWith(eh, errorf(MPI_ERR_ARG, "session is NULL"), fn);
  InfoEntries hints;
  if (info != MPI_INFO_NULL) {
    Info* i = loom::api::toInfo(info);
    if (!i) return raiseWith(eh, errorf(MPI_ERR_INFO, "invalid info object"), fn);
    hints = i->entries();
  }
  int required = MPI_THREAD_SINGLE;
  int k = loom::infoFind(hints, "thread_level");
  if (k >= 0) {
    required = loom::api::threadLevelFromName(hints[k].second.c_str());
    // An unknown level is a hint Loom cannot use: ignored, as hints may be.
    if (required < 0) required = MPI_THREAD_SINGLE;
  }
  Status st = loom::api::acquireRuntime(required);
  if (!st.isOk()) {
    if (rt().phase == loom::api::Phase::kBefore) {
      // Nothing came up, so nobody can be told but this process.
      loom::api::abortJob(st.code(), std::string(fn) + ": " + st.message());
    }
    return raiseWith(eh, st, fn);
  }
  auto* s = new Session();
  eh->retain();
  s->errhandler = eh;
  s->info = std::move(hints);
  loom::infoSet(s->info, "thread_level", loom::api::threadLevelName(rt().threadLevel));
  *session = reinterpret_cast<MPI_Session>(s);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_init)

// Collective over the processes of the job when it is the runtime's last
// user (MPI_Finalize's barrier); otherwise local.
extern "C" int PMPI_Session_finalize(MPI_Session* session) {
  static const char* fn = "MPI_Session_finalize";
  if (!session) return raiseNoObject(errorf(MPI_ERR_ARG, "session is NULL"), fn);
  Session* s = toSession(*session);
  if (!s) return badSession(fn);
  // Buffered sends still in the session's buffer are delivered first.
  delete s->sendBuffer;
  s->sendBuffer = nullptr;
  Status st = loom::api::releaseRuntime();
  if (!st.isOk()) return raiseWith(s->errhandler, st, fn, s);
  Errhandler::release(s->errhandler);
  delete s;
  *session = MPI_SESSION_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_finalize)

extern "C" int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  static const char* fn = "MPI_Session_get_info";
  Session* s = toSession(session);
  if (!s) return badSession(fn);
  if (!info_used) return raiseWith(s->errhandler, errorf(MPI_ERR_ARG, "info_used is NULL"), fn, s);
  *info_used = loom::api::newInfo(s->info);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_get_info)

extern "C" int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info,
                                          int* npset_names) {
  static const char* fn = "MPI_Session_get_num_psets";
  Session* s = toSession(session);
  if (!s) return badSession(fn);
  if (info != MPI_INFO_NULL && !loom::api::toInfo(info))
    return raiseWith(s->errhandler, errorf(MPI_ERR_INFO, "invalid info object"), fn, s);
  if (!npset_names)
    return raiseWith(s->errhandler, errorf(MPI_ERR_ARG, "npset_names is NULL"), fn, s);
  *npset_names = kNumPsets;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_get_num_psets)

// `*pset_len` in: the bytes at `pset_name` (0: only ask for the length);
// out: the name's length plus one. A longer name is truncated.
extern "C" int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n,
                                         int* pset_len, char* pset_name) {
  static const char* fn = "MPI_Session_get_nth_pset";
  Session* s = toSession(session);
  if (!s) return badSession(fn);
  if (info != MPI_INFO_NULL && !loom::api::toInfo(info))
    return raiseWith(s->errhandler, errorf(MPI_ERR_INFO, "invalid info object"), fn, s);
  if (n < 0 || n >= kNumPsets)
    return raiseWith(s->errhandler,
                     errorf(MPI_ERR_ARG, "n = %d is not in 0..%d", n, kNumPsets - 1), fn, s);
  if (!pset_len || *pset_len < 0 || (*pset_len > 0 && !pset_name))
    return raiseWith(s->errhandler,
                     errorf(MPI_ERR_ARG, "pset_len is NULL or negative, or pset_name is NULL"),
                     fn, s);
  size_t len = std::strlen(kPsets[n]);
  if (*pset_len > 0) {
    size_t c = std::min(len, static_cast<size_t>(*pset_len - 1));
    std::memcpy(pset_name, kPsets[n], c);
    pset_name[c] = '\0';
  }
  *pset_len = static_cast<int>(len) + 1;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_get_nth_pset)

// The key the standard requires: "mpi_size", the number of processes.
extern "C" int PMPI_Session_get_pset_info(MPI_Session session, const char* pset_name,
                                          MPI_Info* info) {
  static const char* fn = "MPI_Session_get_pset_info";
  Session* s = toSession(session);
  if (!s) return badSession(fn);
  if (!pset_name || !info)
    return raiseWith(s->errhandler, errorf(MPI_ERR_ARG, "pset_name or info is NULL"), fn, s);
  int i = psetIndex(pset_name);
  if (i < 0)
    return raiseWith(s->errhandler,
                     errorf(MPI_ERR_ARG, "\"%s\" is not a process set (mpi://WORLD, mpi://SELF)",
                            pset_name),
                     fn, s);
  *info = loom::api::newInfo({{"mpi_size", std::to_string(psetMembers(i).size())}});
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_get_pset_info)

extern "C" int PMPI_Group_from_session_pset(MPI_Session session, const char* pset_name,
                                            MPI_Group* newgroup) {
  static const char* fn = "MPI_Group_from_session_pset";
  Session* s = toSession(session);
  if (!s) return badSession(fn);
  if (!pset_name || !newgroup)
    return raiseWith(s->errhandler, errorf(MPI_ERR_ARG, "pset_name or newgroup is NULL"), fn, s);
  int i = psetIndex(pset_name);
  if (i < 0)
    return raiseWith(s->errhandler,
                     errorf(MPI_ERR_ARG, "\"%s\" is not a process set (mpi://WORLD, mpi://SELF)",
                            pset_name),
                     fn, s);
  auto* g = new Group(psetMembers(i));
  g->setSession(s);  // communicators made from it use the session's buffer (bsend.h)
  *newgroup = loom::api::toHandle(g);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Group_from_session_pset)

extern "C" int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
  static const char* fn = "MPI_Session_set_errhandler";
  Session* s = toSession(session);
  if (!s) return badSession(fn);
  Errhandler* eh = loom::api::toErrhandler(errhandler);
  if (!sessionHandler(eh))
    return raiseWith(s->errhandler,
                     errorf(MPI_ERR_ARG, "errhandler is neither a predefined error handler nor "
                            "one made by MPI_Session_create_errhandler"),
                     fn, s);
  eh->retain();
  Errhandler::release(s->errhandler);
  s->errhandler = eh;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_set_errhandler)

extern "C" int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler* errhandler) {
  static const char* fn = "MPI_Session_get_errhandler";
  Session* s = toSession(session);
  if (!s) return badSession(fn);
  if (!errhandler)
    return raiseWith(s->errhandler, errorf(MPI_ERR_ARG, "errhandler is NULL"), fn, s);
  *errhandler = loom::api::newReference(s->errhandler);  // the caller frees it
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_get_errhandler)

// Callable without a session and before MPI_Init: errors go to the caller.
extern "C" int PMPI_Session_create_errhandler(MPI_Session_errhandler_function* session_errhandler_fn,
                                              MPI_Errhandler* errhandler) {
  static const char* fn = "MPI_Session_create_errhandler";
  if (!session_errhandler_fn || !errhandler)
    return raiseNoObject(errorf(MPI_ERR_ARG, "session_errhandler_fn or errhandler is NULL"), fn);
  auto* eh = new Errhandler{Errhandler::Kind::kUser, "a user session error handler"};
  eh->sessionFn = session_errhandler_fn;
  *errhandler = loom::api::toHandle(eh);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_create_errhandler)

// From Fortran (libloom_fortran): the handler takes Fortran handles.
extern "C" int loom_f_session_create_errhandler(void* fortran_fn, MPI_Errhandler* errhandler) {
  int rc = PMPI_Session_create_errhandler(
      reinterpret_cast<MPI_Session_errhandler_function*>(fortran_fn), errhandler);
  if (rc == MPI_SUCCESS) loom::api::toErrhandler(*errhandler)->fortran = true;
  return rc;
}

// Returns MPI_SUCCESS when the handler returns (MPI_ERRORS_RETURN).
extern "C" int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
  static const char* fn = "MPI_Session_call_errhandler";
  Session* s = toSession(session);
  if (!s) return badSession(fn);
  const char* text = loom::errorClassText(errorcode);
  (void)raiseWith(s->errhandler, errorf(errorcode, "%s", text ? text : "user error code"), fn, s);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Session_call_errhandler)
