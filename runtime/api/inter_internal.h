// The agreement the intercommunicator constructors share (inter_comm.cc),
// for inter_comm_api.cc.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/comm.h"
#include "core/count_array.h"
#include "core/datatype.h"
#include "core/status.h"

namespace loom::api {

// Leaders of an existing intercommunicator swap on its collective channel
// with this tag (local rank 0 with remote rank 0).
inline constexpr int kTagInterLeaders = 0x7c0010;

// How a side's leader reaches the other side's: rank `peer` of `via` (on
// via's collective channel), with `tag`.
// `failed`, when set and not ok at the leader, is an error the leader
// found in its own arguments: it skips the swap and fails its side.
struct LeaderLink {
  Comm* via;
  int peer;
  int tag;
  const Status* failed = nullptr;
};

// What joinSides hands every process of a side.
struct Joined {
  uint32_t ctx = 0;         // free on every process of both groups (not taken)
  std::vector<int> remote;  // the other side's job ranks, in its rank order
  int remoteHigh = 0;       // the other leader's `high`
};

// Collective over `local` (an intracommunicator over this side); the
// leader (rank `leader` of local) swaps with the other side's leader
// through `link`. An error found at the leader (failed swap, overlapping
// groups) is returned on every process of its side.
Status joinSides(Comm* local, int leader, const LeaderLink& link, int high, Joined* out);

// The hidden local intracommunicator of a new intercommunicator: local's
// group, a context id agreed over `local` (collective over it).
Status hiddenLocal(Comm* local, Comm** out);

// Takes `ctx` and builds this process's intercommunicator; adopts the
// references to both groups and to `hidden`.
Comm* buildInter(uint32_t ctx, Group* localGroup, int rank, Group* remote, Comm* hidden,
                 Errhandler* eh);

// A send and a receive of raw bytes with `peer` of `via` at once.
Status exchangeBytes(Comm* via, const void* sbuf, size_t sbytes, void* rbuf, size_t rbytes,
                     int peer, int tag);

}  // namespace loom::api

// ---- collectives (inter_coll.cc)

namespace loom::coll {
class Op;
enum class Collective : uint8_t;
}  // namespace loom::coll

namespace loom::api {

// One collective call on an intercommunicator, its arguments checked
// (inter_coll_api.cc). Counts and displacements index the remote group
// where the standard says so; `root` is MPI_ROOT, MPI_PROC_NULL or a
// remote rank.
struct InterCall {
  coll::Collective coll;
  Comm* comm = nullptr;
  const void* sbuf = nullptr;
  void* rbuf = nullptr;
  int64_t scount = 0, rcount = 0;
  Datatype* stype = nullptr;
  Datatype* rtype = nullptr;
  CountArray scounts = nullptr;  // v and w forms
  CountArray sdispls = nullptr;
  CountArray rcounts = nullptr;
  CountArray rdispls = nullptr;
  std::vector<Datatype*> stypes, rtypes;  // w form, one per remote rank
  coll::Op* op = nullptr;
  int root = 0;
  int64_t offset = 0;  // reduce_scatter: where this process's block starts
};

// Builds the call's schedule on the intercommunicator and runs it: waits
// for it (request null) or hands back its request, which holds the
// communicator, the datatypes and the op until it completes.
int runInterCall(const InterCall& a, MPI_Request* request, const char* fn);
// The same call as a persistent collective (MPI_*_init): a new inactive
// request whose every MPI_Start runs it again.
int initInterCall(const InterCall& a, MPI_Request* request, const char* fn);

}  // namespace loom::api
