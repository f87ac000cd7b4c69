// Reduction collectives: MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter
// (_block), MPI_Scan, MPI_Exscan, their MPI_I* forms, and MPI_Reduce_local;
// the persistent forms (MPI_*_init, persistent_coll_api.cc) share the same
// checks (coll_entry.h).
//
// Each entry point checks its arguments in the order the error classes
// are listed in the man pages (communicator, count, datatype, op and
// op-type match, root, MPI_IN_PLACE misuse, buffers), fills a CollArgs
// and hands it to runCollective (coll_common.h). MPI_IN_PLACE is resolved
// here: an algorithm sees sendbuf == recvbuf and inPlace set.
//
// A nonblocking call also holds a reference on a user op until the
// collective completes, so the user may MPI_Op_free it right away (the
// datatype and communicator are held by runCollective).
#include <mpi.h>

#include "api/coll_common.h"
#include "api/coll_entry.h"
#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/inter_comm.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "coll/op.h"

using loom::Comm;
using loom::CountArray;
using loom::Datatype;
using loom::Request;
using loom::Status;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toComm;
using loom::api::toDatatype;
using loom::coll::Collective;
using loom::coll::CollArgs;
using loom::coll::Op;
using loom::api::CollMode;

namespace {

// Chained onto a pending request's onComplete: runs the previous hook
// (runCollective's), then drops the op reference.
struct OpHold {
  void (*prevFn)(Request*);
  void* prevOwner;
  Op* op;
};

void releaseOpHold(Request* r) {
  auto* h = static_cast<OpHold*>(r->owner);
  r->owner = h->prevOwner;
  r->onComplete = h->prevFn;
  if (h->prevFn) h->prevFn(r);
  h->op->release();
  delete h;
}

int start(CollArgs& a, CollMode mode, MPI_Request* request, const char* fn) {
  if (mode == CollMode::kPersistent) return loom::api::initPersistentCollective(a, request, fn);
  a.blocking = request == nullptr;
  Op* op = a.op;
  const bool hold = request && !op->isPredefined();
  if (hold) op->retain();
  int rc = loom::api::runCollective(a, request, fn);
  if (!hold) return rc;
  Request* r = rc == MPI_SUCCESS ? loom::api::toRequest(*request) : nullptr;
  if (!r || r->complete) {
    op->release();
  } else {
    auto* h = new OpHold{r->onComplete, r->owner, op};
    r->owner = h;
    r->onComplete = releaseOpHold;
  }
  return rc;
}

// The checks every reduction shares: count, datatype, op and their match.
Status checkTypeOp(int64_t count, MPI_Datatype datatype, MPI_Op opHandle, Datatype** t,
                   Op** op) {
  if (count < 0) return errorf(MPI_ERR_COUNT, "count=%lld < 0", static_cast<long long>(count));
  *t = toDatatype(datatype);
  if (!*t) return errorf(MPI_ERR_TYPE, "invalid datatype");
  if (!(*t)->isCommitted()) return errorf(MPI_ERR_TYPE, "datatype is not committed");
  *op = loom::coll::toOp(opHandle);
  if (!*op) return errorf(MPI_ERR_OP, "invalid op");
  if (!loom::coll::opValidFor(*op, *t))
    return errorf(MPI_ERR_OP, "%s is not defined on %s", (*op)->name(),
                  (*t)->name().empty() ? "this datatype" : (*t)->name().c_str());
  return Status::ok();
}

// `aliasCheck`: refuse overlapping send and receive buffers even where the
// receive buffer is not significant (Exscan's rank 0), so that every rank
// of the call fails it alike instead of some starting the collective.
Status checkBuffers(const void* sendbuf, const void* recvbuf, int64_t sendCount,
                    int64_t recvCount, const Datatype* t, bool recvSignificant,
                    bool aliasCheck = false) {
  if (recvbuf == MPI_IN_PLACE) return errorf(MPI_ERR_ARG, "recvbuf is MPI_IN_PLACE");
  if (sendbuf != MPI_IN_PLACE) LOOM_TRY(loom::api::checkData(sendbuf, sendCount, t));
  if (recvSignificant) LOOM_TRY(loom::api::checkData(recvbuf, recvCount, t));
  if ((recvSignificant || aliasCheck) && sendbuf != MPI_IN_PLACE && recvbuf)
    LOOM_TRY(loom::api::disjoint(loom::api::spanOf(sendbuf, 0, sendCount, t),
                                 loom::api::spanOf(recvbuf, 0, recvCount, t)));
  return Status::ok();
}

void fillCommon(CollArgs& a, Collective coll, Comm* c, const void* sendbuf, void* recvbuf,
                int64_t count, Datatype* t, Op* op) {
  a.coll = coll;
  a.comm = c;
  a.inPlace = sendbuf == MPI_IN_PLACE;
  a.sendbuf = a.inPlace ? recvbuf : sendbuf;
  a.recvbuf = recvbuf;
  a.count = count;
  a.type = t;
  a.op = op;
  a.bytes = static_cast<size_t>(count) * static_cast<size_t>(t->size());
}

int reduceImpl(const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype,
               MPI_Op opHandle, int root, MPI_Comm comm, MPI_Request* request, CollMode mode,
               const char* fn) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interReduce(ic, sendbuf, recvbuf, count, datatype, opHandle, root, request,
                                  mode, fn);
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  Datatype* t = nullptr;
  Op* op = nullptr;
  Status st = checkTypeOp(count, datatype, opHandle, &t, &op);
  if (st.isOk() && (root < 0 || root >= c->size()))
    st = errorf(MPI_ERR_ROOT, "root=%d is not in 0..%d", root, c->size() - 1);
  const bool isRoot = c->rank() == root;
  if (st.isOk() && !isRoot && sendbuf == MPI_IN_PLACE)
    st = errorf(MPI_ERR_ARG, "MPI_IN_PLACE as sendbuf on a non-root rank");
  if (st.isOk()) st = checkBuffers(sendbuf, isRoot ? recvbuf : nullptr, count, count, t, isRoot);
  if (st.isOk() && mode != CollMode::kBlocking && !request)
    st = errorf(MPI_ERR_ARG, "request is NULL");
  if (!st.isOk()) return raise(c, st, fn);
  CollArgs a;
  fillCommon(a, Collective::kReduce, c, sendbuf, recvbuf, count, t, op);
  a.root = root;
  return start(a, mode, request, fn);
}

// Allreduce, scan and exscan share their checks.
int allImpl(Collective coll, const void* sendbuf, void* recvbuf, int64_t count,
            MPI_Datatype datatype, MPI_Op opHandle, MPI_Comm comm, MPI_Request* request,
            CollMode mode, const char* fn) {
  if (Comm* ic = loom::api::interOf(comm))
    return coll == Collective::kAllreduce
               ? loom::api::interAllreduce(ic, sendbuf, recvbuf, count, datatype, opHandle,
                                           request, mode, fn)
               : loom::api::interScan(ic, fn);
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  Datatype* t = nullptr;
  Op* op = nullptr;
  Status st = checkTypeOp(count, datatype, opHandle, &t, &op);
  // Exscan's recvbuf on rank 0 is not significant (unless it is also the
  // input, in place).
  const bool recvSig = !(coll == Collective::kExscan && c->rank() == 0 && sendbuf != MPI_IN_PLACE);
  if (st.isOk()) st = checkBuffers(sendbuf, recvbuf, count, count, t, recvSig, true);
  if (st.isOk() && mode != CollMode::kBlocking && !request)
    st = errorf(MPI_ERR_ARG, "request is NULL");
  if (!st.isOk()) return raise(c, st, fn);
  CollArgs a;
  fillCommon(a, coll, c, sendbuf, recvbuf, count, t, op);
  return start(a, mode, request, fn);
}

int reduceScatterImpl(bool block, const void* sendbuf, void* recvbuf, int64_t recvcount,
                      CountArray recvcounts, MPI_Datatype datatype, MPI_Op opHandle,
                      MPI_Comm comm, MPI_Request* request, CollMode mode, const char* fn) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interReduceScatter(ic, block, sendbuf, recvbuf, recvcount, recvcounts,
                                         datatype, opHandle, request, mode, fn);
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  const int p = c->size();
  Status st;
  int64_t total = 0, mine = 0;
  if (block) {
    total = recvcount * p;
    mine = recvcount;
    if (recvcount < 0)
      st = errorf(MPI_ERR_COUNT, "recvcount=%lld < 0", static_cast<long long>(recvcount));
  } else if (!recvcounts) {
    st = errorf(MPI_ERR_ARG, "recvcounts is NULL");
  } else {
    for (int i = 0; i < p && st.isOk(); ++i) {
      if (recvcounts[i] < 0)
        st = errorf(MPI_ERR_COUNT, "recvcounts[%d]=%lld < 0", i,
                    static_cast<long long>(recvcounts[i]));
      total += recvcounts[i];
    }
    mine = recvcounts[c->rank()];
  }
  Datatype* t = nullptr;
  Op* op = nullptr;
  if (st.isOk()) st = checkTypeOp(total, datatype, opHandle, &t, &op);
  if (st.isOk()) st = checkBuffers(sendbuf, recvbuf, total, mine, t, true);
  // In place the input is recvbuf itself: it must hold the whole input.
  if (st.isOk() && sendbuf == MPI_IN_PLACE) st = loom::api::checkData(recvbuf, total, t);
  if (st.isOk() && mode != CollMode::kBlocking && !request)
    st = errorf(MPI_ERR_ARG, "request is NULL");
  if (!st.isOk()) return raise(c, st, fn);
  CollArgs a;
  fillCommon(a, block ? Collective::kReduceScatterBlock : Collective::kReduceScatter, c,
             sendbuf, recvbuf, total, t, op);
  a.recvCount = mine;
  if (!block) a.recvCounts = recvcounts;
  return start(a, mode, request, fn);
}

}  // namespace

// ---- The helpers as the persistent forms call them (coll_entry.h).

namespace loom::api::collentry {

int reduce(const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, CollMode mode, MPI_Request* request, const char* fn) {
  return reduceImpl(sendbuf, recvbuf, count, datatype, op, root, comm, request, mode, fn);
}
int allLike(Collective coll, const void* sendbuf, void* recvbuf, int64_t count,
            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, CollMode mode, MPI_Request* request,
            const char* fn) {
  return allImpl(coll, sendbuf, recvbuf, count, datatype, op, comm, request, mode, fn);
}
int reduceScatter(bool block, const void* sendbuf, void* recvbuf, int64_t recvcount,
                  CountArray recvcounts, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  CollMode mode, MPI_Request* request, const char* fn) {
  return reduceScatterImpl(block, sendbuf, recvbuf, recvcount, recvcounts, datatype, op, comm,
                           request, mode, fn);
}

}  // namespace loom::api::collentry

extern "C" int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm) {
  return reduceImpl(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr,
                    CollMode::kBlocking, "MPI_Reduce");
}
LOOM_WEAK_ALIAS(MPI_Reduce)
LOOM_LARGE_COUNT(Reduce,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm),
                 reduceImpl(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr,
                            CollMode::kBlocking, "MPI_Reduce_c"))

extern "C" int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  return reduceImpl(sendbuf, recvbuf, count, datatype, op, root, comm, request,
                    CollMode::kNonblocking, "MPI_Ireduce");
}
LOOM_WEAK_ALIAS(MPI_Ireduce)
LOOM_LARGE_COUNT(Ireduce,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm, MPI_Request* request),
                 reduceImpl(sendbuf, recvbuf, count, datatype, op, root, comm, request,
                            CollMode::kNonblocking, "MPI_Ireduce_c"))

extern "C" int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return allImpl(Collective::kAllreduce, sendbuf, recvbuf, count, datatype, op, comm, nullptr,
                 CollMode::kBlocking, "MPI_Allreduce");
}
LOOM_WEAK_ALIAS(MPI_Allreduce)
LOOM_LARGE_COUNT(Allreduce,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm),
                 allImpl(Collective::kAllreduce, sendbuf, recvbuf, count, datatype, op, comm,
                         nullptr, CollMode::kBlocking, "MPI_Allreduce_c"))

extern "C" int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request* request) {
  return allImpl(Collective::kAllreduce, sendbuf, recvbuf, count, datatype, op, comm, request,
                 CollMode::kNonblocking, "MPI_Iallreduce");
}
LOOM_WEAK_ALIAS(MPI_Iallreduce)
LOOM_LARGE_COUNT(Iallreduce,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request* request),
                 allImpl(Collective::kAllreduce, sendbuf, recvbuf, count, datatype, op, comm,
                         request, CollMode::kNonblocking, "MPI_Iallreduce_c"))

extern "C" int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm) {
  return allImpl(Collective::kScan, sendbuf, recvbuf, count, datatype, op, comm, nullptr,
                    CollMode::kBlocking, "MPI_Scan");
}
LOOM_WEAK_ALIAS(MPI_Scan)
LOOM_LARGE_COUNT(Scan,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm),
                 allImpl(Collective::kScan, sendbuf, recvbuf, count, datatype, op, comm, nullptr,
                         CollMode::kBlocking, "MPI_Scan_c"))

extern "C" int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return allImpl(Collective::kScan, sendbuf, recvbuf, count, datatype, op, comm, request,
                    CollMode::kNonblocking, "MPI_Iscan");
}
LOOM_WEAK_ALIAS(MPI_Iscan)
LOOM_LARGE_COUNT(Iscan,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request* request),
                 allImpl(Collective::kScan, sendbuf, recvbuf, count, datatype, op, comm, request,
                         CollMode::kNonblocking, "MPI_Iscan_c"))

extern "C" int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  return allImpl(Collective::kExscan, sendbuf, recvbuf, count, datatype, op, comm, nullptr,
                 CollMode::kBlocking, "MPI_Exscan");
}
LOOM_WEAK_ALIAS(MPI_Exscan)
LOOM_LARGE_COUNT(Exscan,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm),
                 allImpl(Collective::kExscan, sendbuf, recvbuf, count, datatype, op, comm, nullptr,
                         CollMode::kBlocking, "MPI_Exscan_c"))

extern "C" int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return allImpl(Collective::kExscan, sendbuf, recvbuf, count, datatype, op, comm, request,
                    CollMode::kNonblocking, "MPI_Iexscan");
}
LOOM_WEAK_ALIAS(MPI_Iexscan)
LOOM_LARGE_COUNT(Iexscan,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request* request),
                 allImpl(Collective::kExscan, sendbuf, recvbuf, count, datatype, op, comm, request,
                         CollMode::kNonblocking, "MPI_Iexscan_c"))

extern "C" int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduceScatterImpl(false, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, nullptr,
                           CollMode::kBlocking, "MPI_Reduce_scatter");
}
LOOM_WEAK_ALIAS(MPI_Reduce_scatter)
LOOM_LARGE_COUNT(Reduce_scatter,
                 (const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                 reduceScatterImpl(false, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm,
                                   nullptr, CollMode::kBlocking, "MPI_Reduce_scatter_c"))

extern "C" int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Request* request) {
  return reduceScatterImpl(false, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, request,
                           CollMode::kNonblocking, "MPI_Ireduce_scatter");
}
LOOM_WEAK_ALIAS(MPI_Ireduce_scatter)
LOOM_LARGE_COUNT(Ireduce_scatter,
                 (const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request),
                 reduceScatterImpl(false, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm,
                                   request, CollMode::kNonblocking, "MPI_Ireduce_scatter_c"))

extern "C" int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduceScatterImpl(true, sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm,
                           nullptr, CollMode::kBlocking, "MPI_Reduce_scatter_block");
}
LOOM_WEAK_ALIAS(MPI_Reduce_scatter_block)
LOOM_LARGE_COUNT(Reduce_scatter_block,
                 (const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm),
                 reduceScatterImpl(true, sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm,
                                   nullptr, CollMode::kBlocking, "MPI_Reduce_scatter_block_c"))

extern "C" int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                          MPI_Request* request) {
  return reduceScatterImpl(true, sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm,
                           request, CollMode::kNonblocking, "MPI_Ireduce_scatter_block");
}
LOOM_WEAK_ALIAS(MPI_Ireduce_scatter_block)
LOOM_LARGE_COUNT(Ireduce_scatter_block,
                 (const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request* request),
                 reduceScatterImpl(true, sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm,
                                   request, CollMode::kNonblocking, "MPI_Ireduce_scatter_block_c"))

namespace {

int reduceLocal(const void* inbuf, void* inoutbuf, int64_t count, MPI_Datatype datatype,
                MPI_Op opHandle, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Datatype* t = nullptr;
  Op* op = nullptr;
  Status st = checkTypeOp(count, datatype, opHandle, &t, &op);
  if (st.isOk() && (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE))
    st = errorf(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in %s", fn);
  if (st.isOk()) st = loom::api::checkData(inbuf, count, t);
  if (st.isOk()) st = loom::api::checkData(inoutbuf, count, t);
  if (st.isOk())
    st = loom::api::disjoint(loom::api::spanOf(inbuf, 0, count, t),
                             loom::api::spanOf(inoutbuf, 0, count, t));
  if (st.isOk()) st = loom::coll::reduceLocal(inbuf, inoutbuf, count, t, op);
  if (!st.isOk()) return raise(nullptr, st, fn);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op) {
  return reduceLocal(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local");
}
LOOM_WEAK_ALIAS(MPI_Reduce_local)
LOOM_LARGE_COUNT(Reduce_local,
                 (const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op),
                 reduceLocal(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c"))
