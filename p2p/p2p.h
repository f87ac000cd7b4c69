// Point-to-point engine: the interface the API and collective layers use.
//
// One matching engine serves every transport (self, shm, ofi); the
// transports only move bytes. Everything here is nonblocking; blocking MPI
// calls are these plus progress::waitUntil(request complete).
//
// Ranks in this interface are communicator ranks; `comm` translates them to
// job ranks, which pick the transport. MPI_PROC_NULL is handled by the API
// layer before calling in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "core/comm.h"
#include "core/request.h"
#include "core/status.h"
#include "p2p/wire.h"

namespace loom::p2p {

struct ProtocolLimits;

// What the engine needs to know about the job at start-up.
struct JobInfo {
  const ProcInfo* proc = nullptr;
  Bootstrap* boot = nullptr;
  std::vector<int> nodeOfRank;  // job rank -> node id
};

// Two-phase start: setup() before the bootstrap fence (creates shared
// segments, publishes addresses with boot->put), connect() after it.
Status setup(const JobInfo& job);
Status connect();
// Measured protocol thresholds (core/tune.h, p2p/tune_run.cc). setup()
// resolves them (environment, cache, defaults) and lets the node's leader
// decide whether this job measures; tuneCalibrate() measures, once, after
// connect() with a communicator of all job ranks in job order (world).
void tuneSetup(const JobInfo& job, bool oversubscribed, ProtocolLimits* L);
void tunePublish();  // after shm setup: the leader's words in the segment's header
void tuneAgree();    // after shm connect: read them
void tuneBeforeBarrier();  // MPI_Finalize, before its barrier: too short a job withdraws
Status tuneCalibrate(Comm* world);
// The CMA window of local rank 0 at start-up, alike on every rank of this
// node (the collective selector's rules for one node use it; they must
// agree). [kNoMax, kNoMax]: none (oversubscribed ranks see none either).
void nodeCmaWindow(size_t* min, size_t* max);

// Whether every record this rank queued has left it (MPI_Finalize
// progresses until it has before its barrier: a rank blocked there cannot
// move the rest, and libfabric's manual progress would leave it queued).
bool drained();
// After the final barrier of MPI_Finalize.
Status finalize();

// Starts a send of `count` elements of `type` from `buf` to comm rank `dest`.
// `sig` (collective channel) is the call's signature: a receive of the same
// tag whose signature differs fails with MPI_ERR_OTHER and the sender's
// signature in Request::peerSig, instead of taking the message (or, when
// the message comes from another source, instead of waiting for ever).
Status isend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm,
             SendMode mode, Channel channel, Request** out, uint16_t sig = 0);

// A blocking standard-mode send's fast path: when the message is contiguous,
// fits the eager limit (or LOOM_SHM_SEND_EAGER_MAX, four times it when
// ranks outnumber cores), goes through shared memory, nothing is queued to that
// peer and the ring has room, it is written into the ring now and true is
// returned (the send is complete, no request involved). False: nothing was
// done, use isend.
bool sendEagerNow(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm);

// Whether a receive of `type` can fold (irecvFold): contiguous, basic
// elements of 1, 2, 4 or 8 bytes (aligned where the transport puts them),
// and every piece the transport delivers a whole number of elements.
bool canFold(const Datatype* type);

// A receive on the collective channel that combines the message into `buf`
// (fold(in, inout, bytes, ctx, type) per piece) instead of overwriting it.
// Only for types canFold() accepts.
Status irecvFold(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm,
                 void (*fold)(const void*, void*, size_t, void*, Datatype*), void* ctx,
                 Request** out, uint16_t sig = 0);

// Posts a receive; `source` may be MPI_ANY_SOURCE and `tag` MPI_ANY_TAG.
Status irecv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm,
             Channel channel, Request** out, uint16_t sig = 0);

// Restarts a persistent request built by the API layer (kind, buffer, peer,
// tag, comm, mode already set).
Status start(Request* req);

// A message that arrived but is not yet received, as probe reports it.
struct ProbeResult {
  int source = 0;
  int tag = 0;
  int64_t bytes = 0;
};

// Is there a matching message? Does not receive it.
Status iprobe(int source, int tag, Comm* comm, bool* found, ProbeResult* result);

// Matched probe: removes the message from matching and returns it as an
// opaque handle for imrecv.
struct Unexpected;
using Message = Unexpected;
Status improbe(int source, int tag, Comm* comm, bool* found, Message** msg,
               ProbeResult* result);
Status imrecv(void* buf, int64_t count, Datatype* type, Message* msg, Request** out);

// A message of collective call `tag` on `comm` that arrived with a
// signature other than `sig` and matched no receive (a peer in another
// call): true, with its source and signature. Collective schedules ask while
// they wait, so a rank whose own receives are all satisfied (a send still
// waits for its receiver) notices a peer that made another call.
bool conflictingMessage(Comm* comm, int tag, uint16_t sig, int* source, uint16_t* theirSig);

// Cancels a posted receive that has not matched yet. True if it was
// cancelled (the request then completes with cancelled set).
bool cancelRecv(Request* req);

// ---- One-sided access between nodes (the rma layer's puts and gets) ----
//
// Where the transport to a rank can write and read memory that rank
// exposed without the rank applying anything (libfabric RMA between
// nodes), the rma layer moves contiguous puts and gets this way instead of
// sending them as messages. The owner's progress still has to run for the
// operation to finish (libfabric's progress is manual here). Ranks in this
// part are job ranks.

// Whether rmaWrite and rmaRead can reach job rank `jobRank` (false for a
// rank of this node, this rank, or a transport without one-sided writes).
bool rmaReaches(int jobRank);
// Makes [addr, addr + bytes) readable and writable by the ranks rmaReaches
// says yes for; they need *key (one for all of them), rmaUnexpose takes
// *handle. False when that is not possible (no transport between nodes,
// no RMA writes, registration refused): then use messages.
bool rmaExpose(void* addr, size_t bytes, RemoteKey* key, void** handle);
// Ends rmaExpose (no operation on the memory may be in flight). A no-op
// after finalize(), which dropped every registration.
void rmaUnexpose(void* handle);
// A one-sided operation has ended: `bytes` moved, or err (an MPI error
// class).
using RmaDoneFn = void (*)(void* ctx, size_t bytes, int err);
// Starts writing `bytes` at `local` to `offset` in the memory job rank
// `jobRank` exposed as `key`. done(ctx, ...) comes from a later progress
// poll once the data is in that rank's memory (or before this returns, if
// the transport finished at once); `local` must stay unchanged until then.
// False: nothing was started (move the data another way).
bool rmaWrite(int jobRank, const RemoteKey& key, uint64_t offset, const void* local, size_t bytes,
              RmaDoneFn done, void* ctx);
// The same, reading from that memory into `local`.
bool rmaRead(int jobRank, const RemoteKey& key, uint64_t offset, void* local, size_t bytes,
             RmaDoneFn done, void* ctx);

// One line on the transports and protocol limits in use (LOOM_DEBUG=p2p).
std::string describe();

// For loom-info: whether the libfabric transport was built, and if so the
// providers libfabric offers here and the one jobs spanning nodes would use
// (loads libfabric: ~300 ms). Lines, each ending in a newline.
std::string describeNetwork();

}  // namespace loom::p2p
