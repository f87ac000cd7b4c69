// Entry points of the data-movement collectives: MPI_Bcast, (all)gather(v),
// scatter(v), alltoall(v,w) and their MPI_I* twins; the persistent forms
// (MPI_*_init, persistent_coll_api.cc) share the same checks (coll_entry.h).
//
// Each checks the arguments significant at the calling rank (the standard
// leaves the others, e.g. a non-root's receive buffer in a gather, unread),
// fills coll::CollArgs (coll/selector.h) and starts the collective through
// runCollective (coll_common.h), which waits for the blocking form. Errors
// go through the communicator's error handler with the class the standard
// names: MPI_ERR_COMM, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_ROOT,
// MPI_ERR_BUFFER (NULL buffer with data, MPI_IN_PLACE as a receive buffer
// or on a rank that may not pass it), MPI_ERR_ARG (NULL request or arrays).
#include <mpi.h>

#include <algorithm>
#include <vector>

#include "api/coll_common.h"
#include "api/coll_entry.h"
#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/inter_comm.h"
#include "api/runtime.h"
#include "api/status_util.h"

using loom::Comm;
using loom::CountArray;
using loom::Datatype;
using loom::Status;
using loom::errorf;
using loom::coll::CollArgs;
using loom::coll::Collective;
using loom::api::CollMode;

namespace {

const void* const kInPlace = MPI_IN_PLACE;

Status checkType(MPI_Datatype h, Datatype** out) {
  *out = loom::api::toDatatype(h);
  if (!*out) return errorf(MPI_ERR_TYPE, "invalid datatype");
  if (!(*out)->isCommitted()) return errorf(MPI_ERR_TYPE, "datatype is not committed");
  return Status::ok();
}

// One (buf, count, type) triple the calling rank sends or receives.
Status checkData(const void* buf, int64_t count, MPI_Datatype h, Datatype** out) {
  if (count < 0) return errorf(MPI_ERR_COUNT, "count=%lld < 0", static_cast<long long>(count));
  if (count == 0 && h == MPI_DATATYPE_NULL)
    *out = loom::api::typeOrEmpty(nullptr, h, count);  // an empty buffer
  else
    LOOM_TRY(checkType(h, out));
  if (buf == kInPlace) return errorf(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed here");
  return loom::api::checkData(buf, count, *out);
}

Status checkRoot(int root, const Comm* c) {
  if (root < 0 || root >= c->size())
    return errorf(MPI_ERR_ROOT, "root=%d is not a rank of a %d-rank communicator", root, c->size());
  return Status::ok();
}

Status checkArray(CountArray a, const char* what) {
  if (!a) return errorf(MPI_ERR_ARG, "%s is NULL", what);
  return Status::ok();
}

// Per-rank counts of a v variant, with the buffer checked for each.
Status checkCounts(const void* buf, CountArray counts, CountArray displs, MPI_Datatype h,
                   int p, const char* what, Datatype** out) {
  LOOM_TRY(checkArray(counts, what));
  LOOM_TRY(checkArray(displs, "displacements"));
  for (int i = 0; i < p; ++i) LOOM_TRY(checkData(buf, counts[i], h, out));
  if (p == 0) LOOM_TRY(checkType(h, out));
  return Status::ok();
}

size_t blockBytes(int64_t count, const Datatype* t) { return t ? t->packedSize(count) : 0; }

using loom::api::Span;
using loom::api::spanOf;

// No block of one side overlaps a block of the other: na blocks spanA(i),
// nb blocks spanB(i). The hulls first, without allocating (the usual
// answer: separate buffers), then the blocks sorted and swept, remembering
// the furthest end of each side so far: a block starting before the other
// side's furthest end overlaps it.
template <class A, class B>
Status disjointBlocks(int na, A spanA, int nb, B spanB) {
  auto hull = [](int n, auto& at) {
    Span h;
    for (int i = 0; i < n; ++i) {
      const Span s = at(i);
      if (s.empty()) continue;
      h = h.empty() ? s : Span{std::min(h.lo, s.lo), std::max(h.hi, s.hi)};
    }
    return h;
  };
  if (!loom::api::overlap(hull(na, spanA), hull(nb, spanB))) return Status::ok();
  auto sorted = [](int n, auto& at) {
    std::vector<Span> v;
    for (int i = 0; i < n; ++i)
      if (const Span s = at(i); !s.empty()) v.push_back(s);
    std::sort(v.begin(), v.end(), [](const Span& x, const Span& y) { return x.lo < y.lo; });
    return v;
  };
  const std::vector<Span> a = sorted(na, spanA), b = sorted(nb, spanB);
  const __int128 kNone = -(static_cast<__int128>(1) << 126);  // below every address
  __int128 endA = kNone, endB = kNone;
  for (size_t i = 0, j = 0; i < a.size() || j < b.size();) {
    if (j == b.size() || (i < a.size() && a[i].lo <= b[j].lo)) {
      if (a[i].lo < endB) return loom::api::overlapError();
      endA = std::max(endA, a[i++].hi);
    } else {
      if (b[j].lo < endA) return loom::api::overlapError();
      endB = std::max(endB, b[j++].hi);
    }
  }
  return Status::ok();
}

// Block i of a v buffer (displacements in elements) or a w buffer
// (`types`, displacements in bytes).
Span blockSpan(const void* buf, CountArray counts, CountArray displs, const Datatype* type,
               Datatype* const* types, int i) {
  if (!types) return spanOf(buf, displs[i], counts[i], type);
  Span s = spanOf(buf, 0, counts[i], types[i]);
  if (!s.empty()) s = {s.lo + displs[i], s.hi + displs[i]};
  return s;
}

// This rank's own block against the p blocks of the other buffer of a
// rooted collective or an allgather: fixed-size blocks (`counts` null) or
// a v buffer.
Status apart(const Span& mine, const void* buf, int64_t count, CountArray counts,
             CountArray displs, const Datatype* t, int p) {
  if (!counts) return loom::api::disjoint(mine, spanOf(buf, 0, count * p, t));
  return disjointBlocks(1, [&](int) { return mine; }, p,
                        [&](int i) { return blockSpan(buf, counts, displs, t, nullptr, i); });
}

// The common frame: running library, valid communicator, request; then
// `fill` checks the rest and fills the args; then the collective runs.
template <class Fill>
int entry(const char* fn, MPI_Comm comm, CollMode mode, MPI_Request* request, Collective coll,
          Fill&& fill) {
  const bool nonblocking = mode != CollMode::kBlocking;
  if (!loom::api::requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = loom::api::toComm(comm);
  if (!c) return loom::api::raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (nonblocking && !request)
    return loom::api::raise(c, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  CollArgs a;
  a.coll = coll;
  a.comm = c;
  a.blocking = !nonblocking;
  Status st = fill(a);
  if (!st.isOk()) return loom::api::raise(c, st, fn);
  if (mode == CollMode::kPersistent) return loom::api::initPersistentCollective(a, request, fn);
  return loom::api::runCollective(a, nonblocking ? request : nullptr, fn);
}

// ---- bcast

int bcast(const char* fn, void* buf, int64_t count, MPI_Datatype type, int root, MPI_Comm comm,
          CollMode mode, MPI_Request* req) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interBcast(ic, buf, count, type, root, req, mode, fn);
  return entry(fn, comm, mode, req, Collective::kBcast, [&](CollArgs& a) -> Status {
    LOOM_TRY(checkRoot(root, a.comm));
    LOOM_TRY(checkData(buf, count, type, &a.type));
    a.sendbuf = a.recvbuf = buf;
    a.count = count;
    a.root = root;
    a.bytes = blockBytes(count, a.type);
    return Status::ok();
  });
}

// ---- gather, gatherv

int gather(const char* fn, Collective coll, const void* sbuf, int64_t scount, MPI_Datatype stype,
           void* rbuf, int64_t rcount, CountArray rcounts, CountArray displs, MPI_Datatype rtype,
           int root, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interGather(ic, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype,
                                  root, coll == Collective::kGatherv, req, mode, fn);
  return entry(fn, comm, mode, req, coll, [&](CollArgs& a) -> Status {
    LOOM_TRY(checkRoot(root, a.comm));
    const bool isRoot = a.comm->rank() == root;
    a.root = root;
    a.inPlace = sbuf == kInPlace;
    if (a.inPlace && !isRoot)
      return errorf(MPI_ERR_BUFFER, "MPI_IN_PLACE is the root's send buffer only");
    if (!a.inPlace) {
      LOOM_TRY(checkData(sbuf, scount, stype, &a.type));
      a.sendbuf = sbuf;
      a.count = scount;
    }
    if (isRoot) {
      if (coll == Collective::kGatherv) {
        LOOM_TRY(checkCounts(rbuf, rcounts, displs, rtype, a.comm->size(), "recvcounts",
                             &a.recvType));
        a.recvCounts = rcounts;
        a.recvDispls = displs;
      } else {
        LOOM_TRY(checkData(rbuf, rcount, rtype, &a.recvType));
        a.recvCount = rcount;
      }
      a.recvbuf = rbuf;
      if (!a.inPlace)
        LOOM_TRY(apart(spanOf(sbuf, 0, scount, a.type), rbuf, rcount,
                       coll == Collective::kGatherv ? rcounts : nullptr, displs, a.recvType,
                       a.comm->size()));
    }
    if (coll == Collective::kGatherv) {
      size_t m = blockBytes(a.count, a.type);
      if (isRoot)
        for (int i = 0; i < a.comm->size(); ++i)
          m = std::max(m, blockBytes(rcounts[i], a.recvType));
      a.bytes = m;
    } else {
      a.bytes = isRoot ? blockBytes(rcount, a.recvType) : blockBytes(scount, a.type);
    }
    return Status::ok();
  });
}

// ---- scatter, scatterv

int scatter(const char* fn, Collective coll, const void* sbuf, int64_t scount, CountArray scounts,
            CountArray displs, MPI_Datatype stype, void* rbuf, int64_t rcount, MPI_Datatype rtype,
            int root, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interScatter(ic, sbuf, scount, scounts, displs, stype, rbuf, rcount, rtype,
                                   root, coll == Collective::kScatterv, req, mode, fn);
  return entry(fn, comm, mode, req, coll, [&](CollArgs& a) -> Status {
    LOOM_TRY(checkRoot(root, a.comm));
    const bool isRoot = a.comm->rank() == root;
    a.root = root;
    a.inPlace = rbuf == kInPlace;
    if (a.inPlace && !isRoot)
      return errorf(MPI_ERR_BUFFER, "MPI_IN_PLACE is the root's receive buffer only");
    if (isRoot) {
      if (sbuf == kInPlace) return errorf(MPI_ERR_BUFFER, "MPI_IN_PLACE is not a send buffer here");
      if (coll == Collective::kScatterv) {
        LOOM_TRY(checkCounts(sbuf, scounts, displs, stype, a.comm->size(), "sendcounts", &a.type));
        a.sendCounts = scounts;
        a.sendDispls = displs;
      } else {
        LOOM_TRY(checkData(sbuf, scount, stype, &a.type));
        a.count = scount;
      }
      a.sendbuf = sbuf;
    }
    if (!a.inPlace) {
      LOOM_TRY(checkData(rbuf, rcount, rtype, &a.recvType));
      a.recvbuf = rbuf;
      a.recvCount = rcount;
      if (isRoot)
        LOOM_TRY(apart(spanOf(rbuf, 0, rcount, a.recvType), sbuf, scount,
                       coll == Collective::kScatterv ? scounts : nullptr, displs, a.type,
                       a.comm->size()));
    }
    if (coll == Collective::kScatterv) {
      size_t m = blockBytes(a.recvCount, a.recvType);
      if (isRoot)
        for (int i = 0; i < a.comm->size(); ++i) m = std::max(m, blockBytes(scounts[i], a.type));
      a.bytes = m;
    } else {
      a.bytes = isRoot ? blockBytes(scount, a.type) : blockBytes(rcount, a.recvType);
    }
    return Status::ok();
  });
}

// ---- allgather, allgatherv

int allgather(const char* fn, Collective coll, const void* sbuf, int64_t scount,
              MPI_Datatype stype, void* rbuf, int64_t rcount, CountArray rcounts,
              CountArray displs, MPI_Datatype rtype,
              MPI_Comm comm, CollMode mode, MPI_Request* req) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interAllgather(ic, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype,
                                     coll == Collective::kAllgatherv, req, mode, fn);
  return entry(fn, comm, mode, req, coll, [&](CollArgs& a) -> Status {
    a.inPlace = sbuf == kInPlace;
    if (!a.inPlace) {
      LOOM_TRY(checkData(sbuf, scount, stype, &a.type));
      a.sendbuf = sbuf;
      a.count = scount;
    }
    a.recvbuf = rbuf;
    if (coll == Collective::kAllgatherv) {
      LOOM_TRY(checkCounts(rbuf, rcounts, displs, rtype, a.comm->size(), "recvcounts",
                           &a.recvType));
      a.recvCounts = rcounts;
      a.recvDispls = displs;
      size_t m = 0;
      for (int i = 0; i < a.comm->size(); ++i) m = std::max(m, blockBytes(rcounts[i], a.recvType));
      a.bytes = m;
    } else {
      LOOM_TRY(checkData(rbuf, rcount, rtype, &a.recvType));
      a.recvCount = rcount;
      a.bytes = blockBytes(rcount, a.recvType);
    }
    if (!a.inPlace)
      LOOM_TRY(apart(spanOf(sbuf, 0, scount, a.type), rbuf, rcount,
                     coll == Collective::kAllgatherv ? rcounts : nullptr, displs, a.recvType,
                     a.comm->size()));
    return Status::ok();
  });
}

// ---- alltoall, alltoallv, alltoallw

int alltoall(const char* fn, const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf,
             int64_t rcount, MPI_Datatype rtype, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interAlltoall(ic, sbuf, scount, nullptr, nullptr, stype, nullptr, rbuf,
                                    rcount, nullptr, nullptr, rtype, nullptr, 'a', req, mode, fn);
  return entry(fn, comm, mode, req, Collective::kAlltoall, [&](CollArgs& a) -> Status {
    a.inPlace = sbuf == kInPlace;
    LOOM_TRY(checkData(rbuf, rcount, rtype, &a.recvType));
    a.recvbuf = rbuf;
    a.recvCount = rcount;
    if (!a.inPlace) {
      LOOM_TRY(checkData(sbuf, scount, stype, &a.type));
      a.sendbuf = sbuf;
      a.count = scount;
      const int p = a.comm->size();
      LOOM_TRY(loom::api::disjoint(spanOf(sbuf, 0, scount * p, a.type),
                                   spanOf(rbuf, 0, rcount * p, a.recvType)));
    }
    a.bytes = blockBytes(rcount, a.recvType);
    return Status::ok();
  });
}

int alltoallv(const char* fn, const void* sbuf, CountArray scounts, CountArray sdispls,
              MPI_Datatype stype, void* rbuf, CountArray rcounts, CountArray rdispls,
              MPI_Datatype rtype, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interAlltoall(ic, sbuf, 0, scounts, sdispls, stype, nullptr, rbuf, 0, rcounts,
                                    rdispls, rtype, nullptr, 'v', req, mode, fn);
  return entry(fn, comm, mode, req, Collective::kAlltoallv, [&](CollArgs& a) -> Status {
    const int p = a.comm->size();
    a.inPlace = sbuf == kInPlace;
    LOOM_TRY(checkCounts(rbuf, rcounts, rdispls, rtype, p, "recvcounts", &a.recvType));
    a.recvbuf = rbuf;
    a.recvCounts = rcounts;
    a.recvDispls = rdispls;
    size_t m = 0;
    for (int i = 0; i < p; ++i) m = std::max(m, blockBytes(rcounts[i], a.recvType));
    if (!a.inPlace) {
      LOOM_TRY(checkCounts(sbuf, scounts, sdispls, stype, p, "sendcounts", &a.type));
      a.sendbuf = sbuf;
      a.sendCounts = scounts;
      a.sendDispls = sdispls;
      for (int i = 0; i < p; ++i) m = std::max(m, blockBytes(scounts[i], a.type));
      LOOM_TRY(disjointBlocks(
          p, [&](int i) { return blockSpan(sbuf, scounts, sdispls, a.type, nullptr, i); }, p,
          [&](int i) { return blockSpan(rbuf, rcounts, rdispls, a.recvType, nullptr, i); }));
    }
    a.bytes = m;
    return Status::ok();
  });
}

// The per-rank types of alltoallw, translated; they must outlive the call
// to runCollective (the schedule is built from them there).
Status checkTypesW(const void* buf, CountArray counts, CountArray displs,
                   const MPI_Datatype* types, int p, const char* what,
                   std::vector<Datatype*>* out, size_t* maxBytes) {
  LOOM_TRY(checkArray(counts, what));
  LOOM_TRY(checkArray(displs, "displacements"));
  if (!types) return errorf(MPI_ERR_ARG, "the datatype array is NULL");
  out->resize(p);
  for (int i = 0; i < p; ++i) {
    LOOM_TRY(checkData(buf, counts[i], types[i], &(*out)[i]));
    *maxBytes = std::max(*maxBytes, blockBytes(counts[i], (*out)[i]));
  }
  return Status::ok();
}

int alltoallw(const char* fn, const void* sbuf, CountArray scounts, CountArray sdispls,
              const MPI_Datatype* stypes, void* rbuf, CountArray rcounts, CountArray rdispls,
              const MPI_Datatype* rtypes, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  if (Comm* ic = loom::api::interOf(comm))
    return loom::api::interAlltoall(ic, sbuf, 0, scounts, sdispls, MPI_DATATYPE_NULL, stypes, rbuf,
                                    0, rcounts, rdispls, MPI_DATATYPE_NULL, rtypes, 'w', req, mode,
                                    fn);
  std::vector<Datatype*> st, rt;
  return entry(fn, comm, mode, req, Collective::kAlltoallw, [&](CollArgs& a) -> Status {
    const int p = a.comm->size();
    a.inPlace = sbuf == kInPlace;
    size_t m = 0;
    LOOM_TRY(checkTypesW(rbuf, rcounts, rdispls, rtypes, p, "recvcounts", &rt, &m));
    a.recvbuf = rbuf;
    a.recvCounts = rcounts;
    a.recvDispls = rdispls;
    a.recvTypes = rt.data();
    if (!a.inPlace) {
      LOOM_TRY(checkTypesW(sbuf, scounts, sdispls, stypes, p, "sendcounts", &st, &m));
      a.sendbuf = sbuf;
      a.sendCounts = scounts;
      a.sendDispls = sdispls;
      a.sendTypes = st.data();
      LOOM_TRY(disjointBlocks(
          p, [&](int i) { return blockSpan(sbuf, scounts, sdispls, nullptr, st.data(), i); }, p,
          [&](int i) { return blockSpan(rbuf, rcounts, rdispls, nullptr, rt.data(), i); }));
    }
    a.bytes = m;
    return Status::ok();
  });
}

}  // namespace

// ---- The helpers as the persistent forms call them (coll_entry.h).

namespace loom::api::collentry {

int bcast(const char* fn, void* buf, int64_t count, MPI_Datatype type, int root, MPI_Comm comm,
          CollMode mode, MPI_Request* req) {
  return ::bcast(fn, buf, count, type, root, comm, mode, req);
}
int gather(const char* fn, Collective coll, const void* sbuf, int64_t scount, MPI_Datatype stype,
           void* rbuf, int64_t rcount, CountArray rcounts, CountArray displs, MPI_Datatype rtype,
           int root, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  return ::gather(fn, coll, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype, root, comm,
                  mode, req);
}
int scatter(const char* fn, Collective coll, const void* sbuf, int64_t scount, CountArray scounts,
            CountArray displs, MPI_Datatype stype, void* rbuf, int64_t rcount, MPI_Datatype rtype,
            int root, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  return ::scatter(fn, coll, sbuf, scount, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
                   mode, req);
}
int allgather(const char* fn, Collective coll, const void* sbuf, int64_t scount, MPI_Datatype stype,
              void* rbuf, int64_t rcount, CountArray rcounts, CountArray displs, MPI_Datatype rtype,
              MPI_Comm comm, CollMode mode, MPI_Request* req) {
  return ::allgather(fn, coll, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype, comm,
                     mode, req);
}
int alltoall(const char* fn, const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf,
             int64_t rcount, MPI_Datatype rtype, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  return ::alltoall(fn, sbuf, scount, stype, rbuf, rcount, rtype, comm, mode, req);
}
int alltoallv(const char* fn, const void* sbuf, CountArray scounts, CountArray sdispls,
              MPI_Datatype stype, void* rbuf, CountArray rcounts, CountArray rdispls,
              MPI_Datatype rtype, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  return ::alltoallv(fn, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, mode,
                     req);
}
int alltoallw(const char* fn, const void* sbuf, CountArray scounts, CountArray sdispls,
              const MPI_Datatype* stypes, void* rbuf, CountArray rcounts, CountArray rdispls,
              const MPI_Datatype* rtypes, MPI_Comm comm, CollMode mode, MPI_Request* req) {
  return ::alltoallw(fn, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, mode,
                     req);
}

}  // namespace loom::api::collentry

// ---- The entry points.

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
                          MPI_Comm comm) {
  return bcast("MPI_Bcast", buffer, count, datatype, root, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Bcast)
LOOM_LARGE_COUNT(Bcast,
                 (void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm),
                 bcast("MPI_Bcast_c", buffer, count, datatype, root, comm, CollMode::kBlocking,
                       nullptr))

extern "C" int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root,
                           MPI_Comm comm, MPI_Request* request) {
  return bcast("MPI_Ibcast", buffer, count, datatype, root, comm,
                 CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Ibcast)
LOOM_LARGE_COUNT(Ibcast,
                 (void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request* request),
                 bcast("MPI_Ibcast_c", buffer, count, datatype, root, comm, CollMode::kNonblocking,
                       request))

extern "C" int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm) {
  return gather("MPI_Gather", Collective::kGather, sendbuf, sendcount, sendtype, recvbuf,
                recvcount, nullptr, nullptr, recvtype, root, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Gather)
LOOM_LARGE_COUNT(Gather,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                 gather("MPI_Gather_c", Collective::kGather, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, nullptr, nullptr, recvtype, root, comm, CollMode::kBlocking,
                        nullptr))

extern "C" int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request* request) {
  return gather("MPI_Igather", Collective::kGather, sendbuf, sendcount, sendtype, recvbuf,
                recvcount, nullptr, nullptr, recvtype, root, comm,
                 CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Igather)
LOOM_LARGE_COUNT(Igather,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request),
                 gather("MPI_Igather_c", Collective::kGather, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, nullptr, nullptr, recvtype, root, comm, CollMode::kNonblocking,
                        request))

extern "C" int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gather("MPI_Gatherv", Collective::kGatherv, sendbuf, sendcount, sendtype, recvbuf, 0,
                recvcounts, displs, recvtype, root, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Gatherv)
LOOM_LARGE_COUNT(Gatherv,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  int root, MPI_Comm comm),
                 gather("MPI_Gatherv_c", Collective::kGatherv, sendbuf, sendcount, sendtype,
                        recvbuf, 0, recvcounts, displs, recvtype, root, comm, CollMode::kBlocking,
                        nullptr))

extern "C" int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request* request) {
  return gather("MPI_Igatherv", Collective::kGatherv, sendbuf, sendcount, sendtype, recvbuf, 0,
                recvcounts, displs, recvtype, root, comm,
                 CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Igatherv)
LOOM_LARGE_COUNT(Igatherv,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request),
                 gather("MPI_Igatherv_c", Collective::kGatherv, sendbuf, sendcount, sendtype,
                        recvbuf, 0, recvcounts, displs, recvtype, root, comm,
                        CollMode::kNonblocking, request))

extern "C" int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  return scatter("MPI_Scatter", Collective::kScatter, sendbuf, sendcount, nullptr, nullptr,
                 sendtype, recvbuf, recvcount, recvtype, root, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Scatter)
LOOM_LARGE_COUNT(Scatter,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                 scatter("MPI_Scatter_c", Collective::kScatter, sendbuf, sendcount, nullptr,
                         nullptr, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         CollMode::kBlocking, nullptr))

extern "C" int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request* request) {
  return scatter("MPI_Iscatter", Collective::kScatter, sendbuf, sendcount, nullptr, nullptr,
                 sendtype, recvbuf, recvcount, recvtype, root, comm,
                 CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Iscatter)
LOOM_LARGE_COUNT(Iscatter,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request),
                 scatter("MPI_Iscatter_c", Collective::kScatter, sendbuf, sendcount, nullptr,
                         nullptr, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         CollMode::kNonblocking, request))

extern "C" int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatter("MPI_Scatterv", Collective::kScatterv, sendbuf, 0, sendcounts, displs, sendtype,
                 recvbuf, recvcount, recvtype, root, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Scatterv)
LOOM_LARGE_COUNT(Scatterv,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                  MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm),
                 scatter("MPI_Scatterv_c", Collective::kScatterv, sendbuf, 0, sendcounts, displs,
                         sendtype, recvbuf, recvcount, recvtype, root, comm, CollMode::kBlocking,
                         nullptr))

extern "C" int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request) {
  return scatter("MPI_Iscatterv", Collective::kScatterv, sendbuf, 0, sendcounts, displs,
                 sendtype, recvbuf, recvcount, recvtype, root, comm,
                 CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Iscatterv)
LOOM_LARGE_COUNT(Iscatterv,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                  MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request),
                 scatter("MPI_Iscatterv_c", Collective::kScatterv, sendbuf, 0, sendcounts, displs,
                         sendtype, recvbuf, recvcount, recvtype, root, comm, CollMode::kNonblocking,
                         request))

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return allgather("MPI_Allgather", Collective::kAllgather, sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, nullptr, nullptr, recvtype, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Allgather)
LOOM_LARGE_COUNT(Allgather,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                 allgather("MPI_Allgather_c", Collective::kAllgather, sendbuf, sendcount, sendtype,
                           recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                           CollMode::kBlocking, nullptr))

extern "C" int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request* request) {
  return allgather("MPI_Iallgather", Collective::kAllgather, sendbuf, sendcount, sendtype,
                   recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                   CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Iallgather)
LOOM_LARGE_COUNT(Iallgather,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request),
                 allgather("MPI_Iallgather_c", Collective::kAllgather, sendbuf, sendcount, sendtype,
                           recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                           CollMode::kNonblocking, request))

extern "C" int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather("MPI_Allgatherv", Collective::kAllgatherv, sendbuf, sendcount, sendtype,
                   recvbuf, 0, recvcounts, displs, recvtype, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Allgatherv)
LOOM_LARGE_COUNT(Allgatherv,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  MPI_Comm comm),
                 allgather("MPI_Allgatherv_c", Collective::kAllgatherv, sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm,
                           CollMode::kBlocking, nullptr))

extern "C" int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return allgather("MPI_Iallgatherv", Collective::kAllgatherv, sendbuf, sendcount, sendtype,
                   recvbuf, 0, recvcounts, displs, recvtype, comm,
                   CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Iallgatherv)
LOOM_LARGE_COUNT(Iallgatherv,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Request* request),
                 allgather("MPI_Iallgatherv_c", Collective::kAllgatherv, sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm,
                           CollMode::kNonblocking, request))

extern "C" int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Alltoall)
LOOM_LARGE_COUNT(Alltoall,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                 alltoall("MPI_Alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm, CollMode::kBlocking, nullptr))

extern "C" int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  return alltoall("MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Ialltoall)
LOOM_LARGE_COUNT(Ialltoall,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request),
                 alltoall("MPI_Ialltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm, CollMode::kNonblocking, request))

extern "C" int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallv("MPI_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                   rdispls, recvtype, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Alltoallv)
LOOM_LARGE_COUNT(Alltoallv,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                  const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
                 alltoallv("MPI_Alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                           recvcounts, rdispls, recvtype, comm, CollMode::kBlocking, nullptr))

extern "C" int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return alltoallv("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                   rdispls, recvtype, comm,
                   CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Ialltoallv)
LOOM_LARGE_COUNT(Ialltoallv,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                  const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                  MPI_Request* request),
                 alltoallv("MPI_Ialltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                           recvcounts, rdispls, recvtype, comm, CollMode::kNonblocking, request))

extern "C" int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf,
                              const int recvcounts[], const int rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                   rdispls, recvtypes, comm, CollMode::kBlocking, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Alltoallw)
LOOM_LARGE_COUNT(Alltoallw,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
                 alltoallw("MPI_Alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                           recvcounts, rdispls, recvtypes, comm, CollMode::kBlocking, nullptr))

extern "C" int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request* request) {
  return alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                   recvcounts, rdispls, recvtypes, comm, CollMode::kNonblocking, request);
}
LOOM_WEAK_ALIAS(MPI_Ialltoallw)
LOOM_LARGE_COUNT(Ialltoallw,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                  MPI_Request* request),
                 alltoallw("MPI_Ialltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                           recvcounts, rdispls, recvtypes, comm, CollMode::kNonblocking, request))
