// Stream-ordered collectives (mpi-ext.h): MPIX_Allreduce_enqueue (MPICH's)
// and the others distributed training uses, with the blocking collectives'
// arguments: MPIX_Reduce_enqueue, MPIX_Reduce_scatter(_block)_enqueue,
// MPIX_Allgather(v)_enqueue, MPIX_Alltoall(v)_enqueue, MPIX_Bcast_enqueue,
// MPIX_Barrier_enqueue, and their large-count _c forms.
//
// Each goes through the collective's shared entry helper (coll_entry.h),
// so the checks, their order and error classes are the blocking call's,
// with this function's name in the messages: on a host stream in blocking
// mode (the call runs now), on a GPU stream in persistent mode on the
// calling rank's device buffers (the request is then queued on the stream:
// stream_enqueue.cc; its activations run the device algorithms where the
// rules pick one), or with LOOM_STREAM_TWINS=1 on host twins of them.
//
// Staging (LOOM_STREAM_TWINS=1): every buffer this rank's part of the call reads is copied to
// its twin on the stream first; every buffer it writes is copied back
// after the operation. An output the call writes whole (a contiguous type,
// no gaps between blocks) is not copied in; others are, so the bytes the
// call does not write come back unchanged.
#include <mpi-ext.h>
#include <mpi.h>

#include <functional>

#include "api/coll_entry.h"
#include "api/runtime.h"
#include "api/stream_internal.h"
#include "core/comm.h"

using loom::Comm;
using loom::CountArray;
using loom::Status;
using loom::api::CollMode;
using loom::api::raise;
using loom::api::stream::OpKind;
using loom::api::stream::Staging;
using loom::api::stream::StreamObj;
using loom::coll::Collective;

namespace {

namespace st = loom::api::stream;
namespace ce = loom::api::collentry;

// Buffers as the call sees them: the user's (host stream) or their twins.
using Tr = std::function<void*(const void*)>;
// Calls the entry helper in `mode`, with `tr` applied to every buffer.
using Call = std::function<int(CollMode mode, MPI_Request* req, const Tr& tr)>;

int collective(MPI_Comm comm, const char* fn, const std::function<void(Comm*, Staging&)>& stage,
               const Call& call) {
  Comm* c = nullptr;
  StreamObj* s = nullptr;
  if (int rc = st::front(comm, fn, &c, &s)) return rc;
  const Tr same = [](const void* p) { return const_cast<void*>(p); };
  if (!s->gpu) return call(CollMode::kBlocking, nullptr, same);
  Staging staging;
  if (!st::onTwins()) {
    // On the device buffers: the persistent request's activation runs the
    // device algorithms (or stages inside the call where none takes them).
    MPI_Request inner = MPI_REQUEST_NULL;
    int rc = call(CollMode::kPersistent, &inner, same);
    if (rc != MPI_SUCCESS) return rc;
    Status s2 = st::enqueue(s, c, OpKind::kBlocking, staging, inner, nullptr, fn, nullptr);
    return s2.isOk() ? MPI_SUCCESS : raise(c, s2, fn);
  }
  stage(c, staging);
  Status s2 = staging.commit();
  if (!s2.isOk()) return raise(c, s2, fn);
  MPI_Request inner = MPI_REQUEST_NULL;
  int rc = call(CollMode::kPersistent, &inner,
                [&staging](const void* p) { return staging.translate(p); });
  if (rc != MPI_SUCCESS) return rc;
  s2 = st::enqueue(s, c, OpKind::kBlocking, staging, inner, nullptr, fn, nullptr);
  return s2.isOk() ? MPI_SUCCESS : raise(c, s2, fn);
}

// a * b, or -1 (an empty span: the call's own checks then fail) when the
// product is negative or does not fit.
int64_t times(int64_t a, int64_t b) {
  int64_t r;
  return a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) ? -1 : r;
}

// [lo, hi) of `n` elements of `type`.
struct Span {
  int64_t lo = 0, hi = 0;
};
Span span(int64_t n, MPI_Datatype type) {
  Span s;
  st::typeSpan(n, type, &s.lo, &s.hi);
  return s;
}
Span blocks(int ranks, CountArray counts, CountArray displs, MPI_Datatype type) {
  Span s;
  if (counts && displs)
    st::blocksSpan(
        ranks, [&](int i) { return counts[i]; }, [&](int i) { return displs[i]; }, type, &s.lo,
        &s.hi);
  return s;
}
void in(Staging& g, const void* p, Span s) {
  g.add(p, s.lo, s.hi, Staging::kIn);
}
// An output: written whole when `whole`, else copied in first too.
void out(Staging& g, const void* p, Span s, bool whole) {
  g.add(p, s.lo, s.hi, whole ? Staging::kOut : Staging::kInOut, whole);
}
void inout(Staging& g, const void* p, Span s) {
  g.add(p, s.lo, s.hi, Staging::kInOut);
}

int bcast(void* buf, int64_t count, MPI_Datatype type, int root, MPI_Comm comm, const char* fn) {
  return collective(
      comm, fn,
      [&](Comm* c, Staging& g) {
        if (c->rank() == root)
          in(g, buf, span(count, type));
        else
          out(g, buf, span(count, type), st::contiguous(type));
      },
      [&](CollMode m, MPI_Request* r, const Tr& tr) {
        return ce::bcast(fn, tr(buf), count, type, root, comm, m, r);
      });
}

int reduce(const void* sbuf, void* rbuf, int64_t count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, const char* fn) {
  return collective(
      comm, fn,
      [&](Comm* c, Staging& g) {
        in(g, sbuf, span(count, type));
        if (c->rank() != root) return;
        if (sbuf == MPI_IN_PLACE)
          inout(g, rbuf, span(count, type));
        else
          out(g, rbuf, span(count, type), st::contiguous(type));
      },
      [&](CollMode m, MPI_Request* r, const Tr& tr) {
        return ce::reduce(tr(sbuf), tr(rbuf), count, type, op, root, comm, m, r, fn);
      });
}

int allreduce(const void* sbuf, void* rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, const char* fn) {
  return collective(
      comm, fn,
      [&](Comm*, Staging& g) {
        in(g, sbuf, span(count, type));
        if (sbuf == MPI_IN_PLACE)
          inout(g, rbuf, span(count, type));
        else
          out(g, rbuf, span(count, type), st::contiguous(type));
      },
      [&](CollMode m, MPI_Request* r, const Tr& tr) {
        return ce::allLike(Collective::kAllreduce, tr(sbuf), tr(rbuf), count, type, op, comm, m, r,
                           fn);
      });
}

int reduceScatter(bool block, const void* sbuf, void* rbuf, int64_t rcount, CountArray rcounts,
                  MPI_Datatype type, MPI_Op op, MPI_Comm comm, const char* fn) {
  return collective(
      comm, fn,
      [&](Comm* c, Staging& g) {
        int64_t total = 0, mine = rcount;
        if (block) {
          total = times(rcount, c->size());
        } else {
          if (!rcounts) return;  // the call's checks report it
          for (int i = 0; i < c->size() && total >= 0; ++i)
            if (rcounts[i] < 0 || __builtin_add_overflow(total, rcounts[i], &total)) total = -1;
          mine = rcounts[c->rank()];
        }
        in(g, sbuf, span(total, type));
        // In place, the input is the whole receive buffer; the result is
        // its first block.
        if (sbuf == MPI_IN_PLACE)
          inout(g, rbuf, span(total, type));
        else
          out(g, rbuf, span(mine, type), st::contiguous(type));
      },
      [&](CollMode m, MPI_Request* r, const Tr& tr) {
        return ce::reduceScatter(block, tr(sbuf), tr(rbuf), rcount, rcounts, type, op, comm, m, r,
                                 fn);
      });
}

int allgather(bool v, const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf,
              int64_t rcount, CountArray rcounts, CountArray displs, MPI_Datatype rtype,
              MPI_Comm comm, const char* fn) {
  return collective(
      comm, fn,
      [&](Comm* c, Staging& g) {
        in(g, sbuf, span(scount, stype));
        const Span r =
            v ? blocks(c->size(), rcounts, displs, rtype) : span(times(rcount, c->size()), rtype);
        if (sbuf == MPI_IN_PLACE)
          inout(g, rbuf, r);
        else
          out(g, rbuf, r, !v && st::contiguous(rtype));
      },
      [&](CollMode m, MPI_Request* r, const Tr& tr) {
        return ce::allgather(fn, v ? Collective::kAllgatherv : Collective::kAllgather, tr(sbuf),
                             scount, stype, tr(rbuf), rcount, rcounts, displs, rtype, comm, m, r);
      });
}

int alltoall(const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf, int64_t rcount,
             MPI_Datatype rtype, MPI_Comm comm, const char* fn) {
  return collective(
      comm, fn,
      [&](Comm* c, Staging& g) {
        in(g, sbuf, span(times(scount, c->size()), stype));
        if (sbuf == MPI_IN_PLACE)
          inout(g, rbuf, span(times(rcount, c->size()), rtype));
        else
          out(g, rbuf, span(times(rcount, c->size()), rtype), st::contiguous(rtype));
      },
      [&](CollMode m, MPI_Request* r, const Tr& tr) {
        return ce::alltoall(fn, tr(sbuf), scount, stype, tr(rbuf), rcount, rtype, comm, m, r);
      });
}

int alltoallv(const void* sbuf, CountArray scounts, CountArray sdispls, MPI_Datatype stype,
              void* rbuf, CountArray rcounts, CountArray rdispls, MPI_Datatype rtype, MPI_Comm comm,
              const char* fn) {
  return collective(
      comm, fn,
      [&](Comm* c, Staging& g) {
        in(g, sbuf, blocks(c->size(), scounts, sdispls, stype));
        // Blocks may leave gaps: copied in, so the gaps come back as they were.
        inout(g, rbuf, blocks(c->size(), rcounts, rdispls, rtype));
      },
      [&](CollMode m, MPI_Request* r, const Tr& tr) {
        return ce::alltoallv(fn, tr(sbuf), scounts, sdispls, stype, tr(rbuf), rcounts, rdispls,
                             rtype, comm, m, r);
      });
}

int barrier(MPI_Comm comm) {
  return collective(
      comm, "MPIX_Barrier_enqueue", [](Comm*, Staging&) {},
      [&](CollMode m, MPI_Request* r, const Tr&) {
        return m == CollMode::kBlocking ? PMPI_Barrier(comm)
                                        : PMPI_Barrier_init(comm, MPI_INFO_NULL, r);
      });
}

}  // namespace

// ---- Entry points: each int form, then its _c form ----------------------------

#define LOOM_ENQ(decl, body)                 \
  extern "C" int decl {                      \
    return st::locked([&] { return body; }); \
  }

LOOM_ENQ(PMPIX_Allreduce_enqueue(const void* sendbuf, void* recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
         allreduce(sendbuf, recvbuf, count, datatype, op, comm, "MPIX_Allreduce_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Allreduce_enqueue)
LOOM_ENQ(PMPIX_Allreduce_enqueue_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
         allreduce(sendbuf, recvbuf, count, datatype, op, comm, "MPIX_Allreduce_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Allreduce_enqueue_c)

LOOM_ENQ(PMPIX_Reduce_enqueue(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, int root, MPI_Comm comm),
         reduce(sendbuf, recvbuf, count, datatype, op, root, comm, "MPIX_Reduce_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Reduce_enqueue)
LOOM_ENQ(PMPIX_Reduce_enqueue_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm),
         reduce(sendbuf, recvbuf, count, datatype, op, root, comm, "MPIX_Reduce_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Reduce_enqueue_c)

LOOM_ENQ(PMPIX_Reduce_scatter_enqueue(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
         reduceScatter(false, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm,
                       "MPIX_Reduce_scatter_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Reduce_scatter_enqueue)
LOOM_ENQ(PMPIX_Reduce_scatter_enqueue_c(const void* sendbuf, void* recvbuf,
                                        const MPI_Count recvcounts[], MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm comm),
         reduceScatter(false, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm,
                       "MPIX_Reduce_scatter_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Reduce_scatter_enqueue_c)

LOOM_ENQ(PMPIX_Reduce_scatter_block_enqueue(const void* sendbuf, void* recvbuf, int recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
         reduceScatter(true, sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm,
                       "MPIX_Reduce_scatter_block_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Reduce_scatter_block_enqueue)
LOOM_ENQ(PMPIX_Reduce_scatter_block_enqueue_c(const void* sendbuf, void* recvbuf,
                                              MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                              MPI_Comm comm),
         reduceScatter(true, sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm,
                       "MPIX_Reduce_scatter_block_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Reduce_scatter_block_enqueue_c)

LOOM_ENQ(PMPIX_Allgather_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm),
         allgather(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                   recvtype, comm, "MPIX_Allgather_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Allgather_enqueue)
LOOM_ENQ(PMPIX_Allgather_enqueue_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm),
         allgather(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                   recvtype, comm, "MPIX_Allgather_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Allgather_enqueue_c)

LOOM_ENQ(PMPIX_Allgatherv_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm),
         allgather(true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                   comm, "MPIX_Allgatherv_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Allgatherv_enqueue)
LOOM_ENQ(PMPIX_Allgatherv_enqueue_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm),
         allgather(true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                   comm, "MPIX_Allgatherv_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Allgatherv_enqueue_c)

LOOM_ENQ(PMPIX_Alltoall_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
         alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                  "MPIX_Alltoall_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Alltoall_enqueue)
LOOM_ENQ(PMPIX_Alltoall_enqueue_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm),
         alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                  "MPIX_Alltoall_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Alltoall_enqueue_c)

LOOM_ENQ(PMPIX_Alltoallv_enqueue(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
         alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, "MPIX_Alltoallv_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Alltoallv_enqueue)
LOOM_ENQ(PMPIX_Alltoallv_enqueue_c(const void* sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm),
         alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, "MPIX_Alltoallv_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Alltoallv_enqueue_c)

LOOM_ENQ(PMPIX_Bcast_enqueue(void* buffer, int count, MPI_Datatype datatype, int root,
                             MPI_Comm comm),
         bcast(buffer, count, datatype, root, comm, "MPIX_Bcast_enqueue"))
LOOM_WEAK_ALIAS(MPIX_Bcast_enqueue)
LOOM_ENQ(PMPIX_Bcast_enqueue_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                               MPI_Comm comm),
         bcast(buffer, count, datatype, root, comm, "MPIX_Bcast_enqueue_c"))
LOOM_WEAK_ALIAS(MPIX_Bcast_enqueue_c)

LOOM_ENQ(PMPIX_Barrier_enqueue(MPI_Comm comm), barrier(comm))
LOOM_WEAK_ALIAS(MPIX_Barrier_enqueue)
