// Intercommunicators inside the API layer (MPI 5.0 §7.6).
//
// An intercommunicator is a Comm with a remote group (core/comm.h,
// Comm::makeInter): rank() and size() are the local group's, and every
// peer rank (send, receive, probe, a collective's root) names a process of
// the remote group, so point-to-point needs nothing else: the engine maps
// a destination through Comm::worldRank (the remote group) and stamps the
// sender's local rank as the source, which is the receiver's remote rank.
// Both groups use one context id, free on every process of both.
//
// The constructors (inter_comm_api.cc) run on the hidden intracommunicator
// each side holds over its local group (Comm::localComm) and on one leader
// pair. The collectives (inter_coll.cc, inter_coll_api.cc) are schedules on
// the intercommunicator itself.
#pragma once

#include <mpi.h>

#include "api/coll_entry.h"
#include "core/comm.h"
#include "core/count_array.h"
#include "core/status.h"

namespace loom::api {

// The intercommunicator behind `handle`, or nullptr (an intracommunicator,
// an invalid handle, or the library not running: the caller's ordinary
// path then reports what is wrong).
Comm* interOf(MPI_Comm handle);

// What comm_mgmt_api.cc hands over when its parent is an
// intercommunicator. Each is collective over both groups.
// MPI_Comm_dup: same groups, new context ids (the caller copies hints and
// attributes).
Status dupInter(Comm* parent, Comm** out);
// The duplicate of intercommunicator `parent` once its two ids are agreed
// (MPI_Comm_idup): `ctx` free on both sides, `hidden` for each side's
// hidden local communicator. Takes both ids.
Comm* buildDupInter(Comm* parent, uint32_t ctx, uint32_t hidden);
// MPI_Comm_split: the local processes of one color with the remote ones of
// the same color; nullptr (MPI_COMM_NULL) for MPI_UNDEFINED or where either
// side of the color is empty.
Status splitInter(Comm* parent, int color, int key, Comm** out);
// MPI_Comm_create: `group` (a subgroup of the local group, checked by the
// caller) against whatever the remote side passed.
Status createInter(Comm* parent, Group* group, Comm** out);
// MPI_Comm_compare where either side is an intercommunicator.
int compareInter(Comm* a, Comm* b);

// Collective entry points on an intercommunicator (inter_coll_api.cc),
// called by the ordinary entry points once interOf() found one. `nb`: the
// MPI_I* form, whose `request` must not be null.
int interBarrier(Comm* c, MPI_Request* request, CollMode mode, const char* fn);
int interBcast(Comm* c, void* buf, int64_t count, MPI_Datatype type, int root, MPI_Request* request,
               CollMode mode, const char* fn);
// Gather and gatherv (`v`: rcounts and displs).
int interGather(Comm* c, const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf, int64_t rcount,
                CountArray rcounts, CountArray displs, MPI_Datatype rtype, int root, bool v,
                MPI_Request* request, CollMode mode, const char* fn);
int interScatter(Comm* c, const void* sbuf, int64_t scount, CountArray scounts, CountArray displs,
                 MPI_Datatype stype, void* rbuf, int64_t rcount, MPI_Datatype rtype, int root, bool v,
                 MPI_Request* request, CollMode mode, const char* fn);
int interAllgather(Comm* c, const void* sbuf, int64_t scount, MPI_Datatype stype, void* rbuf,
                   int64_t rcount, CountArray rcounts, CountArray displs, MPI_Datatype rtype, bool v,
                   MPI_Request* request, CollMode mode, const char* fn);
// Alltoall (form 'a'), alltoallv ('v') and alltoallw ('w').
int interAlltoall(Comm* c, const void* sbuf, int64_t scount, CountArray scounts, CountArray sdispls,
                  MPI_Datatype stype, const MPI_Datatype* stypes, void* rbuf, int64_t rcount,
                  CountArray rcounts, CountArray rdispls, MPI_Datatype rtype,
                  const MPI_Datatype* rtypes, char form, MPI_Request* request, CollMode mode,
                  const char* fn);
int interReduce(Comm* c, const void* sbuf, void* rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Request* request, CollMode mode, const char* fn);
int interAllreduce(Comm* c, const void* sbuf, void* rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                   MPI_Request* request, CollMode mode, const char* fn);
// Reduce_scatter (rcounts) and reduce_scatter_block (`block`, rcount).
int interReduceScatter(Comm* c, bool block, const void* sbuf, void* rbuf, int64_t rcount,
                       CountArray rcounts, MPI_Datatype type, MPI_Op op, MPI_Request* request,
                       CollMode mode, const char* fn);
// Scan and exscan: not defined on intercommunicators (MPI_ERR_COMM).
int interScan(Comm* c, const char* fn);

}  // namespace loom::api
