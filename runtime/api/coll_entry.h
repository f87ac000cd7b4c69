// The collectives' shared entry helpers: one function per collective
// checks the calling rank's arguments, fills coll::CollArgs and then,
// depending on the form of the call,
//   kBlocking     runs the collective and waits (MPI_Bcast),
//   kNonblocking  starts it and returns its request (MPI_Ibcast),
//   kPersistent   builds a persistent plan and returns an inactive request
//                 (MPI_Bcast_init; persistent_coll_api.cc), which each
//                 MPI_Start runs with the same algorithm selection.
// So the three forms share every argument check and error class.
// Defined in coll_move_api.cc (data movement) and coll_reduce_api.cc
// (reductions); the barrier has no arguments to check (coll_api.cc).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "coll/selector.h"
#include "core/count_array.h"

namespace loom::api {

enum class CollMode { kBlocking, kNonblocking, kPersistent };

// The end of a persistent init call whose arguments are checked: a plan
// holding copies of `a`'s arrays and references on its communicator,
// datatypes and op, and the call's collective tag (drawn here: the init
// call is collective, so every rank draws the same). *request becomes the
// inactive persistent request. persistent_coll_api.cc.
int initPersistentCollective(const coll::CollArgs& a, MPI_Request* request, const char* fn);

// Counts are int64_t and per-rank arrays CountArray views, so the int forms
// and the large-count _c forms (MPI_Bcast_init_c, ...) share each helper.
namespace collentry {

int bcast(const char* fn, void* buf, int64_t count, MPI_Datatype type, int root, MPI_Comm comm,
          CollMode mode, MPI_Request* req);
// kGather or kGatherv (rcount for the first, rcounts/displs for the second).
int gather(const char* fn, coll::Collective coll, const void* sbuf, int64_t scount,
           MPI_Datatype stype, void* rbuf, int64_t rcount, CountArray rcounts, CountArray displs,
           MPI_Datatype rtype, int root, MPI_Comm comm, CollMode mode, MPI_Request* req);
int scatter(const char* fn, coll::Collective coll, const void* sbuf, int64_t scount,
            CountArray scounts, CountArray displs, MPI_Datatype stype, void* rbuf, int64_t rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm, CollMode mode, MPI_Request* req);
int allgather(const char* fn, coll::Collective coll, const void* sbuf, int64_t scount,
              MPI_Datatype stype, void* rbuf, int64_t rcount, CountArray rcounts, CountArray displs,
              MPI_Datatype rtype, MPI_Comm comm, CollMode mode, MPI_Request* req);
int alltoall(const char* fn, const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf,
             int64_t rcount, MPI_Datatype rtype, MPI_Comm comm, CollMode mode, MPI_Request* req);
int alltoallv(const char* fn, const void* sbuf, CountArray scounts, CountArray sdispls,
              MPI_Datatype stype, void* rbuf, CountArray rcounts, CountArray rdispls,
              MPI_Datatype rtype, MPI_Comm comm, CollMode mode, MPI_Request* req);
int alltoallw(const char* fn, const void* sbuf, CountArray scounts, CountArray sdispls,
              const MPI_Datatype* stypes, void* rbuf, CountArray rcounts, CountArray rdispls,
              const MPI_Datatype* rtypes, MPI_Comm comm, CollMode mode, MPI_Request* req);

int reduce(const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, CollMode mode, MPI_Request* request, const char* fn);
// kAllreduce, kScan or kExscan.
int allLike(coll::Collective coll, const void* sendbuf, void* recvbuf, int64_t count,
            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, CollMode mode, MPI_Request* request,
            const char* fn);
// `block`: MPI_Reduce_scatter_block (recvcount), else MPI_Reduce_scatter
// (recvcounts).
int reduceScatter(bool block, const void* sendbuf, void* recvbuf, int64_t recvcount,
                  CountArray recvcounts, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  CollMode mode, MPI_Request* request, const char* fn);

}  // namespace collentry
}  // namespace loom::api
