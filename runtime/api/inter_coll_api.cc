// Argument checks of the collectives on an intercommunicator (MPI 5.0
// §6.2.2); the ordinary entry points (coll_api.cc, coll_move_api.cc,
// coll_reduce_api.cc) hand over here when interOf() finds one.
//
// What the standard makes significant differs from the intracommunicator
// forms: a rooted call's root is MPI_ROOT (the root itself), MPI_PROC_NULL
// (the root's other group members, who take no part) or a rank of the
// remote group (every process of the other side); the root's count and
// displacement arrays have one entry per remote process; an all-to-all
// process's arrays too. MPI_IN_PLACE is an error (MPI_ERR_BUFFER)
// everywhere, and MPI_Scan / MPI_Exscan are not defined (MPI_ERR_COMM).
// Errors carry the classes the intracommunicator forms use.
#include <mpi.h>

#include "api/coll_common.h"
#include "api/handles_datatype.h"
#include "api/inter_comm.h"
#include "api/inter_internal.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "coll/op.h"
#include "coll/selector.h"

namespace loom::api {

namespace {

using coll::Collective;

Status typeOf(MPI_Datatype h, Datatype** out) {
  *out = toDatatype(h);
  if (!*out) return errorf(MPI_ERR_TYPE, "invalid datatype");
  if (!(*out)->isCommitted()) return errorf(MPI_ERR_TYPE, "datatype is not committed");
  return Status::ok();
}

// One (buf, count, type) triple this process sends or receives.
Status dataOf(const void* buf, int64_t count, MPI_Datatype h, Datatype** out) {
  if (count < 0) return errorf(MPI_ERR_COUNT, "count=%lld < 0", static_cast<long long>(count));
  LOOM_TRY(typeOf(h, out));
  if (buf == MPI_IN_PLACE)
    return errorf(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator");
  return checkData(buf, count, *out);
}

// Per-remote-rank counts with a displacement array, the buffer checked for
// each.
Status countsOf(const void* buf, CountArray counts, CountArray displs, MPI_Datatype h, int m,
                Datatype** out) {
  if (!counts || !displs) return errorf(MPI_ERR_ARG, "a count or displacement array is NULL");
  LOOM_TRY(typeOf(h, out));
  for (int j = 0; j < m; ++j) LOOM_TRY(dataOf(buf, counts[j], h, out));
  return Status::ok();
}

Status rootOf(const Comm* c, int root) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->peerSize()))
    return Status::ok();
  return errorf(MPI_ERR_ROOT,
                "root=%d is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the %d-process "
                "remote group",
                root, c->peerSize());
}

Status opOf(MPI_Op h, const Datatype* t, coll::Op** out) {
  *out = coll::toOp(h);
  if (!*out) return errorf(MPI_ERR_OP, "invalid op");
  if (!coll::opValidFor(*out, t))
    return errorf(MPI_ERR_OP, "%s is not defined on %s", (*out)->name(),
                  t->name().empty() ? "this datatype" : t->name().c_str());
  return Status::ok();
}

// Runs the call once `st` says the arguments are fine.
int go(const Status& st, InterCall& a, MPI_Request* request, CollMode mode, const char* fn) {
  if (!st.isOk()) return raise(a.comm, st, fn);
  const bool nb = mode != CollMode::kBlocking;
  if (nb && !request) return raise(a.comm, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  if (mode == CollMode::kPersistent) return initInterCall(a, request, fn);
  return runInterCall(a, nb ? request : nullptr, fn);
}

InterCall callOn(Comm* c, Collective coll) {
  InterCall a;
  a.coll = coll;
  a.comm = c;
  return a;
}

}  // namespace

int interBarrier(Comm* c, MPI_Request* request, CollMode mode, const char* fn) {
  InterCall a = callOn(c, Collective::kBarrier);
  a.stype = toDatatype(MPI_BYTE);
  return go(Status::ok(), a, request, mode, fn);
}

int interBcast(Comm* c, void* buf, int64_t count, MPI_Datatype type, int root, MPI_Request* request,
               CollMode mode, const char* fn) {
  InterCall a = callOn(c, Collective::kBcast);
  Status st = rootOf(c, root);
  if (st.isOk() && root != MPI_PROC_NULL) st = dataOf(buf, count, type, &a.stype);
  a.rtype = a.stype;
  a.sbuf = a.rbuf = buf;
  a.scount = a.rcount = count;
  a.root = root;
  return go(st, a, request, mode, fn);
}

int interGather(Comm* c, const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf,
                int64_t rcount, CountArray rcounts, CountArray displs, MPI_Datatype rtype, int root,
                bool v, MPI_Request* request, CollMode mode, const char* fn) {
  InterCall a = callOn(c, v ? Collective::kGatherv : Collective::kGather);
  Status st = rootOf(c, root);
  if (st.isOk() && root == MPI_ROOT) {
    if (v) {
      st = countsOf(rbuf, rcounts, displs, rtype, c->peerSize(), &a.rtype);
      a.rcounts = rcounts;
      a.rdispls = displs;
    } else {
      st = dataOf(rbuf, rcount, rtype, &a.rtype);
      a.rcount = rcount;
    }
  } else if (st.isOk() && root != MPI_PROC_NULL) {
    st = dataOf(sbuf, scount, stype, &a.stype);
  }
  a.sbuf = sbuf;
  a.scount = scount;
  a.rbuf = rbuf;
  a.root = root;
  return go(st, a, request, mode, fn);
}

int interScatter(Comm* c, const void* sbuf, int64_t scount, CountArray scounts, CountArray displs,
                 MPI_Datatype stype, void* rbuf, int64_t rcount, MPI_Datatype rtype, int root,
                 bool v, MPI_Request* request, CollMode mode, const char* fn) {
  InterCall a = callOn(c, v ? Collective::kScatterv : Collective::kScatter);
  Status st = rootOf(c, root);
  if (st.isOk() && root == MPI_ROOT) {
    if (v) {
      st = countsOf(sbuf, scounts, displs, stype, c->peerSize(), &a.stype);
      a.scounts = scounts;
      a.sdispls = displs;
    } else {
      st = dataOf(sbuf, scount, stype, &a.stype);
      a.scount = scount;
    }
  } else if (st.isOk() && root != MPI_PROC_NULL) {
    st = dataOf(rbuf, rcount, rtype, &a.rtype);
  }
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  a.rcount = rcount;
  a.root = root;
  return go(st, a, request, mode, fn);
}

int interAllgather(Comm* c, const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf,
                   int64_t rcount, CountArray rcounts, CountArray displs, MPI_Datatype rtype,
                   bool v, MPI_Request* request, CollMode mode, const char* fn) {
  InterCall a = callOn(c, v ? Collective::kAllgatherv : Collective::kAllgather);
  Status st = dataOf(sbuf, scount, stype, &a.stype);
  if (st.isOk())
    st = v ? countsOf(rbuf, rcounts, displs, rtype, c->peerSize(), &a.rtype)
           : dataOf(rbuf, rcount, rtype, &a.rtype);
  a.sbuf = sbuf;
  a.scount = scount;
  a.rbuf = rbuf;
  a.rcount = rcount;
  a.rcounts = v ? rcounts : nullptr;
  a.rdispls = v ? displs : nullptr;
  return go(st, a, request, mode, fn);
}

int interAlltoall(Comm* c, const void* sbuf, int64_t scount, CountArray scounts, CountArray sdispls,
                  MPI_Datatype stype, const MPI_Datatype* stypes, void* rbuf, int64_t rcount,
                  CountArray rcounts, CountArray rdispls, MPI_Datatype rtype,
                  const MPI_Datatype* rtypes, char form, MPI_Request* request, CollMode mode,
                  const char* fn) {
  const bool v = form == 'v', w = form == 'w';
  InterCall a = callOn(c, w ? Collective::kAlltoallw
                            : v ? Collective::kAlltoallv
                                : Collective::kAlltoall);
  const int m = c->peerSize();
  Status st;
  if (w) {
    if (!scounts || !sdispls || !stypes || !rcounts || !rdispls || !rtypes)
      st = errorf(MPI_ERR_ARG, "a count, displacement or datatype array is NULL");
    a.stypes.resize(m);
    a.rtypes.resize(m);
    for (int j = 0; j < m && st.isOk(); ++j) {
      st = dataOf(sbuf, scounts[j], stypes[j], &a.stypes[j]);
      if (st.isOk()) st = dataOf(rbuf, rcounts[j], rtypes[j], &a.rtypes[j]);
    }
  } else if (v) {
    st = countsOf(sbuf, scounts, sdispls, stype, m, &a.stype);
    if (st.isOk()) st = countsOf(rbuf, rcounts, rdispls, rtype, m, &a.rtype);
  } else {
    st = dataOf(sbuf, scount, stype, &a.stype);
    if (st.isOk()) st = dataOf(rbuf, rcount, rtype, &a.rtype);
  }
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  a.scount = scount;
  a.rcount = rcount;
  if (v || w) {
    a.scounts = scounts;
    a.sdispls = sdispls;
    a.rcounts = rcounts;
    a.rdispls = rdispls;
  }
  return go(st, a, request, mode, fn);
}

int interReduce(Comm* c, const void* sbuf, void* rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Request* request, CollMode mode, const char* fn) {
  InterCall a = callOn(c, Collective::kReduce);
  Status st = count < 0 ? errorf(MPI_ERR_COUNT, "count=%lld < 0", static_cast<long long>(count))
                        : typeOf(type, &a.stype);
  if (st.isOk()) st = opOf(op, a.stype, &a.op);
  if (st.isOk()) st = rootOf(c, root);
  if (st.isOk() && root == MPI_ROOT) st = dataOf(rbuf, count, type, &a.stype);
  if (st.isOk() && root >= 0) st = dataOf(sbuf, count, type, &a.stype);
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  a.scount = count;
  a.root = root;
  return go(st, a, request, mode, fn);
}

int interAllreduce(Comm* c, const void* sbuf, void* rbuf, int64_t count, MPI_Datatype type,
                   MPI_Op op, MPI_Request* request, CollMode mode, const char* fn) {
  InterCall a = callOn(c, Collective::kAllreduce);
  Status st = dataOf(sbuf, count, type, &a.stype);
  if (st.isOk()) st = opOf(op, a.stype, &a.op);
  if (st.isOk()) st = dataOf(rbuf, count, type, &a.stype);
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  a.scount = count;
  return go(st, a, request, mode, fn);
}

int interReduceScatter(Comm* c, bool block, const void* sbuf, void* rbuf, int64_t rcount,
                       CountArray rcounts, MPI_Datatype type, MPI_Op op, MPI_Request* request,
                       CollMode mode, const char* fn) {
  InterCall a = callOn(c, block ? Collective::kReduceScatterBlock : Collective::kReduceScatter);
  const int n = c->size(), me = c->rank();
  Status st;
  int64_t total = 0;
  if (block) {
    if (rcount < 0)
      st = errorf(MPI_ERR_COUNT, "recvcount=%lld < 0", static_cast<long long>(rcount));
    total = static_cast<int64_t>(rcount) * n;
    a.rcount = rcount;
    a.offset = static_cast<int64_t>(rcount) * me;
  } else if (!rcounts) {
    st = errorf(MPI_ERR_ARG, "recvcounts is NULL");
  } else {
    for (int i = 0; i < n && st.isOk(); ++i) {
      if (rcounts[i] < 0) st = errorf(MPI_ERR_COUNT, "recvcounts[%d]=%lld < 0", i,
                                      static_cast<long long>(rcounts[i]));
      if (i < me) a.offset += rcounts[i];
      total += rcounts[i];
    }
    if (st.isOk()) a.rcount = rcounts[me];
  }
  if (st.isOk()) st = dataOf(sbuf, total, type, &a.stype);
  if (st.isOk()) st = opOf(op, a.stype, &a.op);
  if (st.isOk()) st = dataOf(rbuf, a.rcount, type, &a.stype);
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  a.scount = total;
  return go(st, a, request, mode, fn);
}

int interScan(Comm* c, const char* fn) {
  return raise(c, errorf(MPI_ERR_COMM, "%s is not defined on an intercommunicator", fn), fn);
}

}  // namespace loom::api
