// Windows (MPI 5.0 §12.2, §12.6-7 and the window parts of §7.7, §9.3):
// creation in its four flavors, MPI_Win_free, shared-memory query, dynamic
// attachment, group, name, info, attributes and error handlers.
//
// Each window gets a private communicator (a context of its own, over the
// same group) for the messages its operations and synchronisation may need,
// so they never meet the user's traffic. rma::Window (rma/window.h) holds
// the rest; raiseWin reports through the window's error handler.
#include <cstring>

#include "api/attr_store.h"
#include "api/comm_internal.h"
#include "api/error_codes.h"
#include "api/info_internal.h"
#include "api/runtime.h"
#include "api/win_internal.h"
#include "core/log.h"
#include "rma/window.h"

using loom::Comm;
using loom::Errhandler;
using loom::errorf;
using loom::InfoEntries;
using loom::Status;
using loom::api::AttrKind;
using loom::api::raise;
using loom::api::raiseWin;
using loom::api::requireRunning;
using loom::api::toComm;
using loom::rma::Window;
using loom::rma::toWindow;
using Store = loom::api::AttrStore<MPI_Win>;

namespace loom::api {

int raiseWin(rma::Window* w, const Status& status, const char* function) {
  if (!w) return raise(nullptr, status, function);
  Errhandler* eh = w->errhandler();
  if (eh->kind == Errhandler::Kind::kUser && eh->winFn) {
    std::string text = std::string(function) + ": " + errorName(status.code()) + ": " +
                       status.message();
    log::debug("err", "%s (to the window's error handler)", text.c_str());
    eh->retain();
    MPI_Win handle = rma::toHandle(w);
    int code = status.code();
    if (eh->fortran) {
      MPI_Fint fh = PMPI_Win_toint(handle);
      reinterpret_cast<void (*)(MPI_Fint*, MPI_Fint*)>(eh->winFn)(&fh, &code);
    } else {
      eh->winFn(&handle, &code);
    }
    Errhandler::release(eh);
    return status.code();
  }
  // The predefined handlers behave as on a communicator: report through a
  // stand-in with the window's handler (its private communicator).
  Comm* c = w->comm();
  Errhandler* saved = c->errhandler();
  saved->retain();
  c->setErrhandler(eh);
  int rc = raise(c, errorf(status.code(), "%s%s%s", status.message().c_str(),
                           w->name.empty() ? "" : " (window ", w->name.empty() ? "" : (w->name + ")").c_str()),
                 function);
  c->setErrhandler(saved);
  Errhandler::release(saved);
  return rc;
}

int badWin(const char* function) {
  return raise(nullptr, errorf(MPI_ERR_WIN, "invalid window"), function);
}

namespace {

Status allgather(Comm* comm, const void* mine, size_t bytes, void* all) {
  return allgatherSmall(comm, mine, bytes, all);
}

Status barrier(Comm* comm) {
  int rc = PMPI_Barrier(toHandle(comm));
  return rc == MPI_SUCCESS ? Status::ok() : errorf(rc, "the window's barrier failed");
}

}  // namespace

const rma::Collectives& windowCollectives() {
  static const rma::Collectives c{allgather, barrier};
  return c;
}

}  // namespace loom::api

namespace {

bool infoTrue(const InfoEntries& e, const char* key) {
  int i = loom::infoFind(e, key);
  return i >= 0 && e[i].second == "true";
}

// The collective part of every window constructor.
int makeWindow(loom::rma::Flavor flavor, void* base, int64_t size, int64_t dispUnit, MPI_Info info,
               MPI_Comm comm, void* baseptr, MPI_Win* win, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (c->isInter())
    return raise(c, errorf(MPI_ERR_COMM, "windows need an intracommunicator"), fn);
  if (!win) return raise(c, errorf(MPI_ERR_ARG, "win is NULL"), fn);
  if (size < 0) return raise(c, errorf(MPI_ERR_SIZE, "size %lld is negative", (long long)size), fn);
  if (dispUnit <= 0 || dispUnit > INT32_MAX)
    return raise(c, errorf(MPI_ERR_DISP, "disp_unit %lld is not positive", (long long)dispUnit),
                 fn);
  if (flavor == loom::rma::Flavor::kCreate && size > 0 && !base)
    return raise(c, errorf(MPI_ERR_ARG, "base is NULL for a window of %lld bytes",
                           (long long)size), fn);
  if ((flavor == loom::rma::Flavor::kAllocate || flavor == loom::rma::Flavor::kShared) && !baseptr)
    return raise(c, errorf(MPI_ERR_ARG, "baseptr is NULL"), fn);
  InfoEntries hints;
  if (info != MPI_INFO_NULL) {
    loom::Info* in = loom::api::toInfo(info);
    if (!in) return raise(c, errorf(MPI_ERR_INFO, "invalid info object"), fn);
    hints = in->entries();
  }
  uint32_t ctx;
  Status st = loom::api::agreeContextId(c, &ctx);
  if (!st) return raise(c, st, fn);
  loom::contextIds().take(ctx);
  c->group()->retain();
  auto* priv = new Comm(ctx, c->group(), c->rank(), "window");
  priv->setOwnsContextId(true);
  priv->setErrhandler(&loom::gErrorsReturn);
  void* mem = base;
  Window* w = nullptr;
  st = Window::create(priv, flavor, &mem, static_cast<uint64_t>(size), static_cast<int>(dispUnit),
                      infoTrue(hints, "alloc_shared_noncontig"),
                      loom::api::windowCollectives(), &w);
  if (!st) {
    Comm::free(priv);
    *win = MPI_WIN_NULL;
    return raise(c, st, fn);
  }
  w->hints = std::move(hints);
  if (baseptr) *static_cast<void**>(baseptr) = mem;
  *win = loom::rma::toHandle(w);
  return MPI_SUCCESS;
}

#define WIN_OR_FAIL(w, h, fn)                               \
  if (!requireRunning(fn)) return MPI_ERR_OTHER;           \
  Window* w = toWindow(h);                                  \
  if (!w) return loom::api::badWin(fn);

}  // namespace

extern "C" int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                               MPI_Comm comm, MPI_Win* win) {
  return makeWindow(loom::rma::Flavor::kCreate, base, size, disp_unit, info, comm, nullptr, win,
                    "MPI_Win_create");
}
LOOM_WEAK_ALIAS(MPI_Win_create)
extern "C" int PMPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                 MPI_Comm comm, MPI_Win* win) {
  return makeWindow(loom::rma::Flavor::kCreate, base, size, disp_unit, info, comm, nullptr, win,
                    "MPI_Win_create_c");
}
LOOM_WEAK_ALIAS(MPI_Win_create_c)

extern "C" int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                 void* baseptr, MPI_Win* win) {
  return makeWindow(loom::rma::Flavor::kAllocate, nullptr, size, disp_unit, info, comm, baseptr,
                    win, "MPI_Win_allocate");
}
LOOM_WEAK_ALIAS(MPI_Win_allocate)
extern "C" int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                   MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return makeWindow(loom::rma::Flavor::kAllocate, nullptr, size, disp_unit, info, comm, baseptr,
                    win, "MPI_Win_allocate_c");
}
LOOM_WEAK_ALIAS(MPI_Win_allocate_c)

extern "C" int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                                        MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return makeWindow(loom::rma::Flavor::kShared, nullptr, size, disp_unit, info, comm, baseptr,
                    win, "MPI_Win_allocate_shared");
}
LOOM_WEAK_ALIAS(MPI_Win_allocate_shared)
extern "C" int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                          MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return makeWindow(loom::rma::Flavor::kShared, nullptr, size, disp_unit, info, comm, baseptr,
                    win, "MPI_Win_allocate_shared_c");
}
LOOM_WEAK_ALIAS(MPI_Win_allocate_shared_c)

extern "C" int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return makeWindow(loom::rma::Flavor::kDynamic, nullptr, 0, 1, info, comm, nullptr, win,
                    "MPI_Win_create_dynamic");
}
LOOM_WEAK_ALIAS(MPI_Win_create_dynamic)

extern "C" int PMPI_Win_free(MPI_Win* win) {
  const char* fn = "MPI_Win_free";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!win) return raise(nullptr, errorf(MPI_ERR_ARG, "win is NULL"), fn);
  Window* w = toWindow(*win);
  if (!w) return loom::api::badWin(fn);
  Status st = w->free(loom::api::windowCollectives());
  if (!st && st.code() == MPI_ERR_RMA_SYNC) return raiseWin(w, st, fn);
  // The attributes go first (their delete callbacks see a live window).
  Status as = Store::eraseAll(w->attrs, *win);
  // Errors are reported on the window's handler while it still exists.
  int rc = MPI_SUCCESS;
  if (!st) rc = raiseWin(w, st, fn);
  else if (!as) rc = raiseWin(w, as, fn);
  Comm::free(w->comm());
  delete w;
  *win = MPI_WIN_NULL;
  return rc;
}
LOOM_WEAK_ALIAS(MPI_Win_free)

namespace {
int sharedQuery(MPI_Win win, int rank, MPI_Aint* size, int64_t* dispUnit, void* baseptr,
                const char* fn) {
  WIN_OR_FAIL(w, win, fn);
  if (!size || !dispUnit || !baseptr)
    return raiseWin(w, errorf(MPI_ERR_ARG, "size, disp_unit or baseptr is NULL"), fn);
  if (w->flavor() == loom::rma::Flavor::kDynamic)
    return raiseWin(w, errorf(MPI_ERR_RMA_FLAVOR, "a dynamic window has no shared memory"), fn);
  if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size()))
    return raiseWin(w, errorf(MPI_ERR_RANK, "rank %d is not in the window (size %d)", rank,
                              w->size()), fn);
  uint64_t s = 0;
  int d = 1;
  void* p = nullptr;
  w->sharedQuery(rank, &s, &d, &p);
  *size = static_cast<MPI_Aint>(s);
  *dispUnit = d;
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}
}  // namespace

extern "C" int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit,
                                     void* baseptr) {
  int64_t d = 0;
  int rc = sharedQuery(win, rank, size, disp_unit ? &d : nullptr, baseptr,
                       "MPI_Win_shared_query");
  if (rc == MPI_SUCCESS) *disp_unit = static_cast<int>(d);
  return rc;
}
LOOM_WEAK_ALIAS(MPI_Win_shared_query)
extern "C" int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit,
                                       void* baseptr) {
  int64_t d = 0;
  int rc = sharedQuery(win, rank, size, disp_unit ? &d : nullptr, baseptr,
                       "MPI_Win_shared_query_c");
  if (rc == MPI_SUCCESS) *disp_unit = d;
  return rc;
}
LOOM_WEAK_ALIAS(MPI_Win_shared_query_c)

extern "C" int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  const char* fn = "MPI_Win_attach";
  WIN_OR_FAIL(w, win, fn);
  if (w->flavor() != loom::rma::Flavor::kDynamic)
    return raiseWin(w, errorf(MPI_ERR_RMA_FLAVOR, "only dynamic windows take MPI_Win_attach"), fn);
  if (size < 0) return raiseWin(w, errorf(MPI_ERR_SIZE, "size %ld is negative", (long)size), fn);
  if (size > 0 && !base) return raiseWin(w, errorf(MPI_ERR_ARG, "base is NULL"), fn);
  Status st = w->attach(base, static_cast<uint64_t>(size));
  return st ? MPI_SUCCESS : raiseWin(w, st, fn);
}
LOOM_WEAK_ALIAS(MPI_Win_attach)

extern "C" int PMPI_Win_detach(MPI_Win win, const void* base) {
  const char* fn = "MPI_Win_detach";
  WIN_OR_FAIL(w, win, fn);
  if (w->flavor() != loom::rma::Flavor::kDynamic)
    return raiseWin(w, errorf(MPI_ERR_RMA_FLAVOR, "only dynamic windows take MPI_Win_detach"), fn);
  Status st = w->detach(base);
  return st ? MPI_SUCCESS : raiseWin(w, st, fn);
}
LOOM_WEAK_ALIAS(MPI_Win_detach)

extern "C" int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  const char* fn = "MPI_Win_get_group";
  WIN_OR_FAIL(w, win, fn);
  if (!group) return raiseWin(w, errorf(MPI_ERR_ARG, "group is NULL"), fn);
  w->comm()->group()->retain();
  *group = loom::api::toHandle(w->comm()->group());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_get_group)

extern "C" int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  const char* fn = "MPI_Win_set_name";
  WIN_OR_FAIL(w, win, fn);
  if (!win_name) return raiseWin(w, errorf(MPI_ERR_ARG, "win_name is NULL"), fn);
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_set_name)

extern "C" int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  const char* fn = "MPI_Win_get_name";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  // The null handle has a name too, as MPI_COMM_NULL has (what Open MPI and
  // MPICH answer, and mpi4py's suite expects).
  Window* w = win == MPI_WIN_NULL ? nullptr : toWindow(win);
  if (!w && win != MPI_WIN_NULL) return loom::api::badWin(fn);
  if (!win_name || !resultlen) {
    const Status st = errorf(MPI_ERR_ARG, "win_name or resultlen is NULL");
    return w ? raiseWin(w, st, fn) : loom::api::raise(nullptr, st, fn);
  }
  static const std::string kNull = "MPI_WIN_NULL";
  const std::string& n = w ? w->name : kNull;
  std::memcpy(win_name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_get_name)

extern "C" int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  const char* fn = "MPI_Win_set_info";
  WIN_OR_FAIL(w, win, fn);
  if (info == MPI_INFO_NULL) return MPI_SUCCESS;
  loom::Info* in = loom::api::toInfo(info);
  if (!in) return raiseWin(w, errorf(MPI_ERR_INFO, "invalid info object"), fn);
  for (auto& [k, v] : in->entries()) loom::infoSet(w->hints, k, v);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_set_info)

extern "C" int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  const char* fn = "MPI_Win_get_info";
  WIN_OR_FAIL(w, win, fn);
  if (!info_used) return raiseWin(w, errorf(MPI_ERR_ARG, "info_used is NULL"), fn);
  // The hints whose defaults the standard names, then what the user set.
  InfoEntries e{{"no_locks", "false"},
                {"accumulate_ordering", "rar,raw,war,waw"},
                {"accumulate_ops", "same_op_no_op"},
                {"same_size", "false"},
                {"same_disp_unit", "false"}};
  if (w->flavor() == loom::rma::Flavor::kShared) e.push_back({"alloc_shared_noncontig", "false"});
  for (auto& [k, v] : w->hints) loom::infoSet(e, k, v);
  *info_used = loom::api::newInfo(std::move(e));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_get_info)

// ---- Attributes -----------------------------------------------------------

extern "C" int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* copy_fn,
                                      MPI_Win_delete_attr_function* delete_fn, int* win_keyval,
                                      void* extra_state) {
  const char* fn = "MPI_Win_create_keyval";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!win_keyval) return raise(nullptr, errorf(MPI_ERR_ARG, "win_keyval is NULL"), fn);
  *win_keyval = loom::api::createKeyval(AttrKind::kWin, reinterpret_cast<loom::api::AnyFn>(copy_fn),
                                        reinterpret_cast<loom::api::AnyFn>(delete_fn),
                                        extra_state);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_create_keyval)

extern "C" int PMPI_Win_free_keyval(int* win_keyval) {
  const char* fn = "MPI_Win_free_keyval";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!win_keyval) return raise(nullptr, errorf(MPI_ERR_ARG, "win_keyval is NULL"), fn);
  Status st = loom::api::freeKeyval(AttrKind::kWin, *win_keyval);
  if (!st) return raise(nullptr, st, fn);
  *win_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_free_keyval)

namespace {
bool predefinedWinKey(int k) { return k >= MPI_WIN_BASE && k <= MPI_WIN_MODEL; }
}  // namespace

extern "C" int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  const char* fn = "MPI_Win_set_attr";
  WIN_OR_FAIL(w, win, fn);
  if (predefinedWinKey(win_keyval))
    return raiseWin(w, errorf(MPI_ERR_KEYVAL, "keyval %d is predefined and read-only",
                              win_keyval), fn);
  if (!loom::api::isKeyval(AttrKind::kWin, win_keyval))
    return raiseWin(w, errorf(MPI_ERR_KEYVAL, "keyval %d is not a window keyval", win_keyval),
                    fn);
  Status st = Store::set(w->attrs, win, win_keyval, attribute_val);
  return st ? MPI_SUCCESS : raiseWin(w, st, fn);
}
LOOM_WEAK_ALIAS(MPI_Win_set_attr)

extern "C" int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  const char* fn = "MPI_Win_get_attr";
  WIN_OR_FAIL(w, win, fn);
  if (!attribute_val || !flag)
    return raiseWin(w, errorf(MPI_ERR_ARG, "attribute_val or flag is NULL"), fn);
  auto* out = static_cast<void**>(attribute_val);
  *flag = 1;
  switch (win_keyval) {
    case MPI_WIN_BASE: *out = w->base(); return MPI_SUCCESS;
    case MPI_WIN_SIZE: *out = &w->attrSize; return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT: *out = &w->attrDispUnit; return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR: *out = &w->attrFlavor; return MPI_SUCCESS;
    case MPI_WIN_MODEL: *out = &w->attrModel; return MPI_SUCCESS;
    default: break;
  }
  if (!loom::api::isKeyval(AttrKind::kWin, win_keyval, true))
    return raiseWin(w, errorf(MPI_ERR_KEYVAL, "keyval %d is not a window keyval", win_keyval),
                    fn);
  bool found = false;
  void* v = Store::get(w->attrs, win_keyval, &found);
  *flag = found;
  if (found) *out = v;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_get_attr)

extern "C" int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  const char* fn = "MPI_Win_delete_attr";
  WIN_OR_FAIL(w, win, fn);
  if (predefinedWinKey(win_keyval) || !loom::api::isKeyval(AttrKind::kWin, win_keyval, true))
    return raiseWin(w, errorf(MPI_ERR_KEYVAL, "keyval %d is not a user window keyval",
                              win_keyval), fn);
  Status st = Store::erase(w->attrs, win, win_keyval);
  return st ? MPI_SUCCESS : raiseWin(w, st, fn);
}
LOOM_WEAK_ALIAS(MPI_Win_delete_attr)

// ---- Error handlers -------------------------------------------------------

extern "C" int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                                          MPI_Errhandler* errhandler) {
  const char* fn = "MPI_Win_create_errhandler";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!win_errhandler_fn)
    return raise(nullptr, errorf(MPI_ERR_ARG, "the handler function is NULL"), fn);
  if (!errhandler) return raise(nullptr, errorf(MPI_ERR_ARG, "errhandler is NULL"), fn);
  auto* eh = new Errhandler{Errhandler::Kind::kUser, "a user window error handler"};
  eh->winFn = win_errhandler_fn;
  *errhandler = loom::api::toHandle(eh);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_create_errhandler)

extern "C" int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  const char* fn = "MPI_Win_set_errhandler";
  WIN_OR_FAIL(w, win, fn);
  Errhandler* eh = loom::api::toErrhandler(errhandler);
  if (!eh) return raiseWin(w, errorf(MPI_ERR_ARG, "invalid error handler"), fn);
  if (eh->kind == Errhandler::Kind::kUser && !eh->winFn)
    return raiseWin(w, errorf(MPI_ERR_ARG, "not a window error handler (made by "
                              "MPI_Win_create_errhandler)"), fn);
  w->setErrhandler(eh);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_set_errhandler)

extern "C" int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  const char* fn = "MPI_Win_get_errhandler";
  WIN_OR_FAIL(w, win, fn);
  if (!errhandler) return raiseWin(w, errorf(MPI_ERR_ARG, "errhandler is NULL"), fn);
  *errhandler = loom::api::newReference(w->errhandler());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_get_errhandler)

extern "C" int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  const char* fn = "MPI_Win_call_errhandler";
  WIN_OR_FAIL(w, win, fn);
  std::string text;
  if (!loom::api::errorString(errorcode, &text) || text.empty()) text = "a user error code";
  (void)raiseWin(w, errorf(errorcode, "%s", text.c_str()), fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_call_errhandler)

// MPI_Win_create_errhandler from Fortran (libloom_fortran): the handler is
// called as SUBROUTINE(WIN, ERROR_CODE) with the Fortran handle. Exported
// for the bindings only.
extern "C" int loom_f_win_create_errhandler(void* fortran_fn, MPI_Errhandler* errhandler) {
  int rc = PMPI_Win_create_errhandler(
      reinterpret_cast<MPI_Win_errhandler_function*>(fortran_fn), errhandler);
  if (rc == MPI_SUCCESS) loom::api::toErrhandler(*errhandler)->fortran = true;
  return rc;
}
