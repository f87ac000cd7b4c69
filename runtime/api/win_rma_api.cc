// One-sided operations and synchronisation (MPI 5.0 §12.3-12.5): MPI_Put,
// MPI_Get, the accumulates, MPI_Compare_and_swap, their request-based
// forms and large-count forms, and fence, post-start-complete-wait and
// passive target. Arguments are checked here; rma::Window does the rest
// and checks epochs and ranges.
#include "api/comm_internal.h"
#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "api/win_internal.h"
#include "coll/op.h"
#include "core/group.h"
#include "rma/ops_util.h"
#include "rma/window.h"

using loom::Datatype;
using loom::errorf;
using loom::Request;
using loom::Status;
using loom::api::raiseWin;
using loom::api::requireRunning;
using loom::rma::Window;
using loom::rma::toWindow;

namespace {

Window* window(MPI_Win h, const char* fn, int* rc) {
  if (!requireRunning(fn)) {
    *rc = MPI_ERR_OTHER;
    return nullptr;
  }
  Window* w = toWindow(h);
  if (!w) *rc = loom::api::badWin(fn);
  return w;
}

// Checks one (count, datatype) pair; nullptr with *rc set when bad.
Datatype* dataArg(Window* w, int64_t count, MPI_Datatype h, const char* what, const char* fn,
                  int* rc) {
  if (count < 0) {
    *rc = raiseWin(w, errorf(MPI_ERR_COUNT, "%s count %lld is negative", what, (long long)count),
                   fn);
    return nullptr;
  }
  Datatype* t = loom::api::toDatatype(h);
  if (!t) {
    *rc = raiseWin(w, errorf(MPI_ERR_TYPE, "invalid %s datatype", what), fn);
    return nullptr;
  }
  if (!t->isPredefined() && !t->isCommitted()) {
    *rc = raiseWin(w, errorf(MPI_ERR_TYPE, "the %s datatype is not committed", what), fn);
    return nullptr;
  }
  return t;
}

// The target rank and displacement; *skip for MPI_PROC_NULL.
bool targetArg(Window* w, int rank, MPI_Aint disp, const char* fn, int* rc, bool* skip) {
  *skip = rank == MPI_PROC_NULL;
  if (*skip) return true;
  if (rank < 0 || rank >= w->size()) {
    *rc = raiseWin(w, errorf(MPI_ERR_RANK, "target rank %d is not in the window (size %d)", rank,
                             w->size()), fn);
    return false;
  }
  if (disp < 0 && w->flavor() != loom::rma::Flavor::kDynamic) {
    *rc = raiseWin(w, errorf(MPI_ERR_DISP, "target_disp %ld is negative", (long)disp), fn);
    return false;
  }
  return true;
}

int finish(Window* w, const Status& st, Request* r, MPI_Request* request, const char* fn) {
  if (!st) return raiseWin(w, st, fn);
  if (request) *request = loom::api::toHandle(r);
  return MPI_SUCCESS;
}

int skipped(MPI_Request* request) {
  if (request) *request = loom::api::toHandle(loom::rma::completedRequest());
  return MPI_SUCCESS;
}

int putGet(bool put, const void* obuf, int64_t ocount, MPI_Datatype otype, int rank,
           MPI_Aint disp, int64_t tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request* request,
           const char* fn) {
  int rc = MPI_SUCCESS;
  Window* w = window(win, fn, &rc);
  if (!w) return rc;
  // The common case in one test; anything else goes through the checks
  // that say what is wrong.
  Datatype* ot = loom::api::toDatatype(otype);
  Datatype* tt = loom::api::toDatatype(ttype);
  if (!(ot && tt && ocount >= 0 && tcount >= 0 && rank >= 0 && rank < w->size() && disp >= 0 &&
        (ot->isPredefined() || ot->isCommitted()) && (tt->isPredefined() || tt->isCommitted()))) {
    if (!(ot = dataArg(w, ocount, otype, "origin", fn, &rc))) return rc;
    if (!(tt = dataArg(w, tcount, ttype, "target", fn, &rc))) return rc;
    bool skip;
    if (!targetArg(w, rank, disp, fn, &rc, &skip)) return rc;
    if (skip) return skipped(request);
  }
  const Window::Target t{rank, static_cast<uint64_t>(disp), tcount, tt};
  Request* r = nullptr;
  Status st = put ? w->put(obuf, ocount, ot, t, request ? &r : nullptr)
                  : w->get(const_cast<void*>(obuf), ocount, ot, t, request ? &r : nullptr);
  return finish(w, st, r, request, fn);
}

loom::coll::Op* accOp(Window* w, MPI_Op op, const char* fn, int* rc) {
  loom::coll::Op* o = loom::coll::toOp(op);
  if (!o) {
    *rc = raiseWin(w, errorf(MPI_ERR_OP, "invalid op"), fn);
    return nullptr;
  }
  if (!o->isPredefined()) {
    *rc = raiseWin(w, errorf(MPI_ERR_OP, "accumulate operations take predefined ops only"), fn);
    return nullptr;
  }
  return o;
}

int accumulate(const void* obuf, int64_t ocount, MPI_Datatype otype, void* rbuf, int64_t rcount,
               MPI_Datatype rtype, bool fetch, int rank, MPI_Aint disp, int64_t tcount,
               MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request* request,
               const char* fn) {
  int rc = MPI_SUCCESS;
  Window* w = window(win, fn, &rc);
  if (!w) return rc;
  loom::coll::Op* o = accOp(w, op, fn, &rc);
  if (!o) return rc;
  const bool noop = o->kind() == loom::coll::Op::Kind::kNoOp;
  auto usable = [](const Datatype* t) { return t && (t->isPredefined() || t->isCommitted()); };
  Datatype* ot = noop ? nullptr : loom::api::toDatatype(otype);
  Datatype* rt = fetch ? loom::api::toDatatype(rtype) : nullptr;
  Datatype* tt = loom::api::toDatatype(ttype);
  // The common case in one test (as putGet).
  if (!((noop || (usable(ot) && ocount >= 0)) && (!fetch || (usable(rt) && rcount >= 0)) &&
        usable(tt) && tcount >= 0 && (fetch || !noop) && rank >= 0 && rank < w->size() &&
        disp >= 0)) {
    if (!noop && !(ot = dataArg(w, ocount, otype, "origin", fn, &rc))) return rc;
    if (fetch && !(rt = dataArg(w, rcount, rtype, "result", fn, &rc))) return rc;
    if (!(tt = dataArg(w, tcount, ttype, "target", fn, &rc))) return rc;
    if (!fetch && noop)
      return raiseWin(w, errorf(MPI_ERR_OP, "MPI_NO_OP is for the fetching accumulates"), fn);
    bool skip;
    if (!targetArg(w, rank, disp, fn, &rc, &skip)) return rc;
    if (skip) return skipped(request);
  }
  const Window::Target t{rank, static_cast<uint64_t>(disp), tcount, tt};
  Request* r = nullptr;
  Status st = w->accumulate(obuf, ocount, ot, fetch ? rbuf : nullptr, rcount, rt, t, o,
                            request ? &r : nullptr);
  return finish(w, st, r, request, fn);
}

}  // namespace

#define PUTGET_PARAMS(COUNT, CONST)                                                            \
  (CONST void* origin_addr, COUNT origin_count, MPI_Datatype origin_datatype, int target_rank, \
   MPI_Aint target_disp, COUNT target_count, MPI_Datatype target_datatype, MPI_Win win)
#define PUTGET_PARAMS_REQ(COUNT, CONST)                                                        \
  (CONST void* origin_addr, COUNT origin_count, MPI_Datatype origin_datatype, int target_rank, \
   MPI_Aint target_disp, COUNT target_count, MPI_Datatype target_datatype, MPI_Win win,        \
   MPI_Request* request)
#define PUTGET_CALL(PUT, REQ, NAME)                                                      \
  putGet(PUT, origin_addr, origin_count, origin_datatype, target_rank, target_disp,     \
         target_count, target_datatype, win, REQ, NAME)

extern "C" int PMPI_Put PUTGET_PARAMS(int, const) {
  return PUTGET_CALL(true, nullptr, "MPI_Put");
}
LOOM_WEAK_ALIAS(MPI_Put)
LOOM_LARGE_COUNT(Put, PUTGET_PARAMS(MPI_Count, const), PUTGET_CALL(true, nullptr, "MPI_Put_c"))
extern "C" int PMPI_Get PUTGET_PARAMS(int, ) { return PUTGET_CALL(false, nullptr, "MPI_Get"); }
LOOM_WEAK_ALIAS(MPI_Get)
LOOM_LARGE_COUNT(Get, PUTGET_PARAMS(MPI_Count, ), PUTGET_CALL(false, nullptr, "MPI_Get_c"))

namespace {
int needRequest(MPI_Request* request, MPI_Win win, const char* fn) {
  if (request) return MPI_SUCCESS;
  return raiseWin(toWindow(win), errorf(MPI_ERR_ARG, "request is NULL"), fn);
}
}  // namespace

#define REQ_CALL(PUT, NAME) \
  (needRequest(request, win, NAME) ?: PUTGET_CALL(PUT, request, NAME))
extern "C" int PMPI_Rput PUTGET_PARAMS_REQ(int, const) { return REQ_CALL(true, "MPI_Rput"); }
LOOM_WEAK_ALIAS(MPI_Rput)
LOOM_LARGE_COUNT(Rput, PUTGET_PARAMS_REQ(MPI_Count, const), REQ_CALL(true, "MPI_Rput_c"))
extern "C" int PMPI_Rget PUTGET_PARAMS_REQ(int, ) { return REQ_CALL(false, "MPI_Rget"); }
LOOM_WEAK_ALIAS(MPI_Rget)
LOOM_LARGE_COUNT(Rget, PUTGET_PARAMS_REQ(MPI_Count, ), REQ_CALL(false, "MPI_Rget_c"))

#define ACC_PARAMS(COUNT, ...)                                                                 \
  (const void* origin_addr, COUNT origin_count, MPI_Datatype origin_datatype, int target_rank, \
   MPI_Aint target_disp, COUNT target_count, MPI_Datatype target_datatype, MPI_Op op,          \
   MPI_Win win __VA_ARGS__)
#define ACC_CALL(REQ, NAME)                                                               \
  accumulate(origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL, \
             false, target_rank, target_disp, target_count, target_datatype, op, win, REQ, NAME)

extern "C" int PMPI_Accumulate ACC_PARAMS(int) { return ACC_CALL(nullptr, "MPI_Accumulate"); }
LOOM_WEAK_ALIAS(MPI_Accumulate)
LOOM_LARGE_COUNT(Accumulate, ACC_PARAMS(MPI_Count), ACC_CALL(nullptr, "MPI_Accumulate_c"))
extern "C" int PMPI_Raccumulate ACC_PARAMS(int, , MPI_Request* request) {
  return needRequest(request, win, "MPI_Raccumulate") ?: ACC_CALL(request, "MPI_Raccumulate");
}
LOOM_WEAK_ALIAS(MPI_Raccumulate)
LOOM_LARGE_COUNT(Raccumulate, ACC_PARAMS(MPI_Count, , MPI_Request* request),
                 needRequest(request, win, "MPI_Raccumulate_c")
                     ?: ACC_CALL(request, "MPI_Raccumulate_c"))

#define GACC_PARAMS(COUNT, ...)                                                                \
  (const void* origin_addr, COUNT origin_count, MPI_Datatype origin_datatype,                  \
   void* result_addr, COUNT result_count, MPI_Datatype result_datatype, int target_rank,       \
   MPI_Aint target_disp, COUNT target_count, MPI_Datatype target_datatype, MPI_Op op,          \
   MPI_Win win __VA_ARGS__)
#define GACC_CALL(REQ, NAME)                                                                  \
  accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,          \
             result_datatype, true, target_rank, target_disp, target_count, target_datatype, \
             op, win, REQ, NAME)

extern "C" int PMPI_Get_accumulate GACC_PARAMS(int) {
  return GACC_CALL(nullptr, "MPI_Get_accumulate");
}
LOOM_WEAK_ALIAS(MPI_Get_accumulate)
LOOM_LARGE_COUNT(Get_accumulate, GACC_PARAMS(MPI_Count), GACC_CALL(nullptr, "MPI_Get_accumulate_c"))
extern "C" int PMPI_Rget_accumulate GACC_PARAMS(int, , MPI_Request* request) {
  return needRequest(request, win, "MPI_Rget_accumulate")
             ?: GACC_CALL(request, "MPI_Rget_accumulate");
}
LOOM_WEAK_ALIAS(MPI_Rget_accumulate)
LOOM_LARGE_COUNT(Rget_accumulate, GACC_PARAMS(MPI_Count, , MPI_Request* request),
                 needRequest(request, win, "MPI_Rget_accumulate_c")
                     ?: GACC_CALL(request, "MPI_Rget_accumulate_c"))

extern "C" int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr,
                                 MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                                 MPI_Op op, MPI_Win win) {
  return accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, true, target_rank,
                    target_disp, 1, datatype, op, win, nullptr, "MPI_Fetch_and_op");
}
LOOM_WEAK_ALIAS(MPI_Fetch_and_op)

extern "C" int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                                     void* result_addr, MPI_Datatype datatype, int target_rank,
                                     MPI_Aint target_disp, MPI_Win win) {
  const char* fn = "MPI_Compare_and_swap";
  int rc = MPI_SUCCESS;
  Window* w = window(win, fn, &rc);
  if (!w) return rc;
  Datatype* t = loom::api::toDatatype(datatype);
  if (!t && !(t = dataArg(w, 1, datatype, "", fn, &rc))) return rc;
  using K = loom::BasicKind;
  const K k = t->kind();
  // MPI_CHAR too, as an 8-bit integer, as the reductions take it (coll/op.cc
  // classOf; MPICH accepts it here as well).
  const bool cchar = k == K::kChar && t->abiValue() == reinterpret_cast<uintptr_t>(MPI_CHAR);
  const bool integral = (k >= K::kInt8 && k <= K::kUint64) || k == K::kBool ||
                        k == K::kLogical || k == K::kByte || cchar;
  if (!t->isPredefined() || !integral || t->size() > 16)
    return raiseWin(w, errorf(MPI_ERR_TYPE, "MPI_Compare_and_swap takes a predefined integer, "
                              "logical or byte type"), fn);
  if (!origin_addr || !compare_addr || !result_addr)
    return raiseWin(w, errorf(MPI_ERR_BUFFER, "a buffer is NULL"), fn);
  if (target_rank < 0 || target_rank >= w->size() || target_disp < 0) {
    bool skip;
    if (!targetArg(w, target_rank, target_disp, fn, &rc, &skip)) return rc;
    if (skip) return MPI_SUCCESS;
  }
  Status st = w->compareAndSwap(origin_addr, compare_addr, result_addr, t, target_rank,
                                static_cast<uint64_t>(target_disp));
  return st ? MPI_SUCCESS : raiseWin(w, st, fn);
}
LOOM_WEAK_ALIAS(MPI_Compare_and_swap)

// ---- Synchronisation --------------------------------------------------------

namespace {

constexpr int kAsserts = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT |
                         MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;

int checkAssert(Window* w, int assert, const char* fn) {
  if (assert & ~kAsserts)
    return raiseWin(w, errorf(MPI_ERR_ASSERT, "assert %#x has bits that are not MPI_MODE_* "
                              "assertions for windows", assert), fn);
  return MPI_SUCCESS;
}

int done(Window* w, const Status& st, const char* fn) {
  return st ? MPI_SUCCESS : raiseWin(w, st, fn);
}

int groupSync(MPI_Group group, int assert, MPI_Win win, bool post, const char* fn) {
  int rc = MPI_SUCCESS;
  Window* w = window(win, fn, &rc);
  if (!w) return rc;
  if ((rc = checkAssert(w, assert, fn))) return rc;
  loom::Group* g = loom::api::toGroup(group);
  if (!g) return raiseWin(w, errorf(MPI_ERR_GROUP, "invalid group"), fn);
  return done(w, post ? w->post(g, assert) : w->start(g, assert), fn);
}

[[gnu::cold, gnu::noinline]] int badRank(Window* w, int rank, const char* fn) {
  return raiseWin(w, errorf(MPI_ERR_RANK, "rank %d is not in the window (size %d)", rank,
                            w->size()), fn);
}
inline int rankArg(Window* w, int rank, const char* fn) {
  if (rank < 0 || rank >= w->size()) [[unlikely]]
    return badRank(w, rank, fn);
  return MPI_SUCCESS;
}

}  // namespace

#define WIN_ENTRY(w, fn)          \
  int rc = MPI_SUCCESS;           \
  Window* w = window(win, fn, &rc); \
  if (!w) return rc;

extern "C" int PMPI_Win_fence(int assert, MPI_Win win) {
  const char* fn = "MPI_Win_fence";
  WIN_ENTRY(w, fn);
  if ((rc = checkAssert(w, assert, fn))) return rc;
  return done(w, w->fence(assert, loom::api::windowCollectives()), fn);
}
LOOM_WEAK_ALIAS(MPI_Win_fence)

extern "C" int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  return groupSync(group, assert, win, true, "MPI_Win_post");
}
LOOM_WEAK_ALIAS(MPI_Win_post)

extern "C" int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  return groupSync(group, assert, win, false, "MPI_Win_start");
}
LOOM_WEAK_ALIAS(MPI_Win_start)

extern "C" int PMPI_Win_complete(MPI_Win win) {
  WIN_ENTRY(w, "MPI_Win_complete");
  return done(w, w->complete(), "MPI_Win_complete");
}
LOOM_WEAK_ALIAS(MPI_Win_complete)

extern "C" int PMPI_Win_wait(MPI_Win win) {
  WIN_ENTRY(w, "MPI_Win_wait");
  return done(w, w->wait(), "MPI_Win_wait");
}
LOOM_WEAK_ALIAS(MPI_Win_wait)

extern "C" int PMPI_Win_test(MPI_Win win, int* flag) {
  const char* fn = "MPI_Win_test";
  WIN_ENTRY(w, fn);
  if (!flag) return raiseWin(w, errorf(MPI_ERR_ARG, "flag is NULL"), fn);
  bool d = false;
  Status st = w->test(&d);
  *flag = d;
  return done(w, st, fn);
}
LOOM_WEAK_ALIAS(MPI_Win_test)

extern "C" int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  const char* fn = "MPI_Win_lock";
  WIN_ENTRY(w, fn);
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
    return raiseWin(w, errorf(MPI_ERR_LOCKTYPE, "lock_type %d is neither MPI_LOCK_SHARED nor "
                              "MPI_LOCK_EXCLUSIVE", lock_type), fn);
  if ((rc = checkAssert(w, assert, fn))) return rc;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if ((rc = rankArg(w, rank, fn))) return rc;
  return done(w, w->lock(lock_type, rank, assert), fn);
}
LOOM_WEAK_ALIAS(MPI_Win_lock)

extern "C" int PMPI_Win_unlock(int rank, MPI_Win win) {
  const char* fn = "MPI_Win_unlock";
  WIN_ENTRY(w, fn);
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if ((rc = rankArg(w, rank, fn))) return rc;
  return done(w, w->unlock(rank), fn);
}
LOOM_WEAK_ALIAS(MPI_Win_unlock)

extern "C" int PMPI_Win_lock_all(int assert, MPI_Win win) {
  const char* fn = "MPI_Win_lock_all";
  WIN_ENTRY(w, fn);
  if ((rc = checkAssert(w, assert, fn))) return rc;
  return done(w, w->lockAll(assert), fn);
}
LOOM_WEAK_ALIAS(MPI_Win_lock_all)

extern "C" int PMPI_Win_unlock_all(MPI_Win win) {
  WIN_ENTRY(w, "MPI_Win_unlock_all");
  return done(w, w->unlockAll(), "MPI_Win_unlock_all");
}
LOOM_WEAK_ALIAS(MPI_Win_unlock_all)

namespace {
[[gnu::always_inline]] inline int flushRank(int rank, MPI_Win win, const char* fn) {
  WIN_ENTRY(w, fn);
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if ((rc = rankArg(w, rank, fn))) return rc;
  return done(w, w->flush(rank), fn);
}
int flushAll(MPI_Win win, const char* fn) {
  WIN_ENTRY(w, fn);
  return done(w, w->flush(-1), fn);
}
}  // namespace

// Local completion is not cheaper than remote completion here (operations
// by message are packed at the call, so their buffers are free at once; a
// get completes only when its data is in): the local forms are the same.
extern "C" int PMPI_Win_flush(int rank, MPI_Win win) { return flushRank(rank, win, "MPI_Win_flush"); }
LOOM_WEAK_ALIAS(MPI_Win_flush)
extern "C" int PMPI_Win_flush_local(int rank, MPI_Win win) {
  return flushRank(rank, win, "MPI_Win_flush_local");
}
LOOM_WEAK_ALIAS(MPI_Win_flush_local)
extern "C" int PMPI_Win_flush_all(MPI_Win win) { return flushAll(win, "MPI_Win_flush_all"); }
LOOM_WEAK_ALIAS(MPI_Win_flush_all)
extern "C" int PMPI_Win_flush_local_all(MPI_Win win) {
  return flushAll(win, "MPI_Win_flush_local_all");
}
LOOM_WEAK_ALIAS(MPI_Win_flush_local_all)

extern "C" int PMPI_Win_sync(MPI_Win win) {
  WIN_ENTRY(w, "MPI_Win_sync");
  w->sync();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Win_sync)
