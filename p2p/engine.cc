// The point-to-point engine: matching plus the protocols, over whichever
// transport reaches the peer (self, shm on the node, ofi between nodes).
//
// Send side, per protocol (see protocol.h):
//   inline/eager   reserve a record, pack the data into it, commit; done
//                  (a synchronous send then waits for the receiver's kAck)
//   rndv-get       expose the buffer, send kRtsGet {remote key}; the receiver
//                  reads it (CMA, or RMA reads in pieces, several in flight)
//                  and answers kFin; done
//   rndv-pipeline  send kRtsPipeline; on the receiver's kCts stream kData
//                  chunks (packed straight into the ring); done when the last
//                  chunk is in the ring
//   rndv-ipc       a device buffer on this node: send kRtsIpc {IPC handle};
//                  the receiver copies from it and answers kFin (or kCts:
//                  then as rndv-pipeline). Device paths: device_path.h
// A record that does not fit (ring full) waits in the peer's outgoing queue,
// which progress drains in order, so messages to a peer never overtake.
//
// Receive side: an arriving message matches the oldest posted receive that
// accepts it, else waits as "unexpected" (eager data copied aside, a
// rendezvous only as its request) until a receive or probe takes it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>

#include "core/device_stage.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "p2p/copy.h"
#include "p2p/counters.h"
#include "p2p/device_path.h"
#include "p2p/dtview.h"
#include "p2p/engine_state.h"
#include "p2p/match.h"
#include "p2p/p2p.h"
#include "p2p/protocol.h"
#include "p2p/routes.h"
#include "p2p/shm/shm_transport.h"
#include "p2p/stream_choice.h"
#if LOOM_HAVE_OFI
#include "p2p/ofi/ofi_transport.h"
#endif

namespace loom::p2p {

namespace {

enum Stage : uint8_t { kStart = 0, kWaitReply = 1, kStreaming = 2 };

using engine::E;
using engine::NtMode;
using engine::OutItem;

// Receive-side hint bit (never sent): this receive's cost feeds E.choice.
constexpr uint8_t kHintMeasured = 0x80;
// (0x40 is dev::kHintDevice: a device buffer on a native path.)
using dev::kHintDevice;

uint32_t contextOf(const Comm* comm, Channel ch) {
  return comm->contextId() * kChannels + static_cast<uint32_t>(ch);
}

size_t capacityOf(const Request* r) {
  return static_cast<size_t>(r->count) * typeSize(r->type);
}

const Transport* transportTo(int job) { return E.route[job]; }

// A send is done with its exposed buffer (kFin, or streamed instead).
void releaseExposed(Request* r) {
  if (r->scratch) {
    transportTo(r->remoteRank)->unexpose(r->scratch);
    r->scratch = nullptr;
  }
}

void queueOut(int job, OutItem item) {
  if (E.outq[job].empty()) E.busy.push_back(job);
  E.outq[job].push_back(item);
}

void onRecord(int srcJob, const MsgHeader& h, const void* payload, size_t n);

// Sends a control record now if possible, else queues it.
void sendCtl(int job, Kind kind, uint64_t target, uint64_t extra, uint8_t flags = 0) {
  MsgHeader h{};
  h.kind = kind;
  h.flags = flags;
  h.sreq = target;
  h.size = extra;
  if (job == E.me) {
    onRecord(job, h, nullptr, 0);
    return;
  }
  const Transport* t = transportTo(job);
  if (E.outq[job].empty() && t->reserve(job, 0)) {
    t->commit(job, h, 0);
    return;
  }
  queueOut(job, OutItem{nullptr, h});
}

MsgHeader headerOf(const Request* r, Kind kind) {
  MsgHeader h{};
  h.ctx = contextOf(r->comm, r->channel);
  h.src = r->comm->rank();
  h.tag = r->tag;
  h.kind = kind;
  h.flags = r->mode == SendMode::kSync ? kFlagSync : 0;
  h.sig = r->sig;
  h.size = r->total;
  h.sreq = r->id();
  return h;
}

// Moves a send as far as the transport allows; true when nothing of it
// needs the outgoing queue any more.
bool pushSend(Request* r) {
  const int job = r->remoteRank;
  const Transport* t = transportTo(job);
  const Kind kind = static_cast<Kind>(r->protocol);
  if (r->stage == kStart) {
    if (kind == Kind::kInline || kind == Kind::kEager) {
      const void* src = contiguousBase(r->type, r->buf);
      if (src && t == E.shm) {  // one step: reserve, copy, publish
        if (!shm::send(job, headerOf(r, kind), src, r->total)) return false;
      } else {
        void* p = t->reserve(job, r->total);
        if (!p) return false;
        packTo(r->type, r->buf, r->count, 0, p, r->total);
        t->commit(job, headerOf(r, kind), r->total);
      }
      countSent(t == E.shm ? kViaShm : kViaOfi, r->total);
      r->transferred = r->total;
      if (r->mode == SendMode::kSync) {
        r->stage = kWaitReply;
      } else {
        r->finish();
      }
      return true;
    }
    const bool ipc = kind == Kind::kRtsIpc;
    auto* rts = static_cast<RtsBody*>(t->reserve(job, ipc ? sizeof(dev::IpcRts) : sizeof(RtsBody)));
    if (!rts) return false;
    rts->remote = RemoteKey{};
    Kind sent = kind;
    size_t body = sizeof(RtsBody);
    if (kind == Kind::kRtsGet && !t->expose(job, contiguousBase(r->type, r->buf), r->total,
                                            kExposeRead, &rts->remote, &r->scratch))
      sent = Kind::kRtsPipeline;  // the receiver asks for the data instead
    else if (ipc)
      sent = dev::fillIpcRts(r, rts, &body);  // refused: kRtsPipeline, likewise
    t->commit(job, headerOf(r, sent), body);
    countSent(t == E.shm ? kViaShm : kViaOfi, r->total);
    r->stage = kWaitReply;
    return true;
  }
  // kStreaming: the receiver matched; pack chunks straight into the ring.
  const size_t maxChunk = std::min(E.chunk, t->maxPayload());
  if (r->hint & kHintDevice) [[unlikely]] {  // a device buffer, through pinned slots
    if (!dev::streamSend(r, *t, maxChunk)) return false;
  }
  const char* stream = r->hint & kFlagStream ? static_cast<const char*>(contiguousBase(r->type, r->buf))
                                              : nullptr;
  while (r->transferred < r->total) {
    size_t n = std::min(maxChunk, r->total - r->transferred);
    void* p = t->reserve(job, n);
    if (!p) return false;
    if (stream) {
      copyStream(p, stream + r->transferred, n);
      streamFence();  // the chunk is in memory before its sequence number
    } else {
      packTo(r->type, r->buf, r->count, r->transferred, p, n);
    }
    MsgHeader h{};
    h.kind = Kind::kData;
    h.sreq = r->remoteId;
    h.size = r->transferred;
    t->commit(job, h, n);
    r->transferred += n;
  }
  releaseExposed(r);
  r->finish();
  return true;
}

int drainOutgoing() {
  int events = 0;
  for (size_t i = 0; i < E.busy.size();) {
    int job = E.busy[i];
    auto& q = E.outq[job];
    const Transport* t = transportTo(job);
    while (!q.empty()) {
      OutItem& item = q.front();
      if (item.req) {
        if (!pushSend(item.req)) break;
      } else {
        if (!t->reserve(job, 0)) break;
        t->commit(job, item.ctl, 0);
      }
      q.pop_front();
      ++events;
    }
    if (q.empty()) {
      E.busy[i] = E.busy.back();
      E.busy.pop_back();
    } else {
      ++i;
    }
  }
  return events;
}

void setMatchedStatus(Request* r, const MsgHeader& h) {
  r->statusSource = h.src;
  r->statusTag = h.tag;
  r->total = h.size;
  if (h.size > capacityOf(r)) r->statusError = MPI_ERR_TRUNCATE;
  if (r->sig && h.sig && r->sig != h.sig) [[unlikely]] {
    r->statusError = MPI_ERR_OTHER;  // another call of the same tag: see p2p.h
    r->peerSig = h.sig;
  }
}

// A collective receive that can never get its message: a peer's message of
// the same call (tag) says the peer made another call (signature).
void failMismatched(Request* r, const MsgHeader& theirs) {
  r->statusError = MPI_ERR_OTHER;
  r->peerSig = theirs.sig;
  r->statusSource = theirs.src;
  r->statusTag = r->tag;
  r->finish();
}

// Received bytes [offset, offset + bytes) of a receive land in its buffer:
// folded into it (irecvFold), streamed past the caches (kFlagStream, see
// copy.h), or copied (unpacked).
inline void land(Request* r, const void* in, size_t bytes, size_t offset) {
  if (r->hint & kHintDevice) [[unlikely]] {
    dev::land(r, in, bytes, offset);
  } else if (r->fold) [[unlikely]] {
    if (bytes) r->fold(in, static_cast<char*>(contiguousBase(r->type, r->buf)) + offset, bytes,
                       r->foldCtx, r->type);
  } else if ((r->hint & kFlagStream) && r->type->isContiguous()) {
    copyStream(static_cast<char*>(contiguousBase(r->type, r->buf)) + offset, in, bytes);
  } else {
    unpackFrom(r->type, in, bytes, r->buf, r->count, offset);
  }
}

// A receive meets an eager message (from the transport or unexpected).
void deliverEager(Request* r, const MsgHeader& h, int srcJob, const void* data) {
  setMatchedStatus(r, h);
  size_t m = std::min<size_t>(h.size, capacityOf(r));
  land(r, data, m, 0);
  r->bytes = static_cast<int64_t>(m);
  if (h.flags & kFlagSync) sendCtl(srcJob, Kind::kAck, h.sreq, 0);
  r->finish();
}

// Starts reads of a rendezvous-get receive until its transport's depth of
// pieces is in flight; finishes the receive (kFin to the sender) once every
// byte landed. False when the transport declined the first read (the
// receiver then asks for the pipeline).
void onReadDone(void* ctx, size_t bytes, int err);

bool issueReads(Request* r) {
  const Transport* t = transportTo(r->remoteRank);
  const ProtocolLimits& L = *t->limits;
  const size_t m = static_cast<size_t>(r->bytes);
  const size_t piece = L.readChunk ? L.readChunk : m;
  char* dst = static_cast<char*>(contiguousBase(r->type, r->buf));
  const RemoteKey key{r->remoteAddr, r->remoteKey};
  while (r->issued < m && (r->issued - r->transferred + piece - 1) / piece <
                              static_cast<size_t>(std::max(1, L.readDepth))) {
    const size_t n = std::min(piece, m - r->issued);
    OneSidedResult res = t->read(r->remoteRank, key, r->issued, dst + r->issued, n, onReadDone, r);
    if (res == OneSidedResult::kUnavailable) {
      if (r->issued == 0) return false;
      // A later piece failed where the first worked: nothing can finish
      // this receive correctly any more.
      r->statusError = MPI_ERR_OTHER;
      res = OneSidedResult::kDone;
    }
    r->issued += n;
    if (res == OneSidedResult::kDone) r->transferred += n;
  }
  if (r->transferred == m) {
    sendCtl(r->remoteRank, Kind::kFin, r->remoteId, 0);
    r->finish();
  }
  return true;
}

// A read that issueReads started has ended (from the transport's poll).
void onReadDone(void* ctx, size_t bytes, int err) {
  auto* r = static_cast<Request*>(ctx);
  if (err != MPI_SUCCESS) r->statusError = err;
  r->transferred += bytes;
  (void)issueReads(r);
}

// A receive meets a rendezvous request (`body`: RtsBody, or dev::IpcRts).
void deliverRts(Request* r, const MsgHeader& h, int srcJob, const void* body) {
  setMatchedStatus(r, h);
  r->remoteRank = srcJob;
  r->remoteId = h.sreq;
  size_t m = std::min<size_t>(h.size, capacityOf(r));
  const Transport* t = transportTo(srcJob);
  const bool onDevice = r->hint & kHintDevice;
  const Take take = selectTake(h.kind, r->type->isContiguous() && !r->fold,
                               onDevice ? device::MemKind::kDevice : device::MemKind::kHost);
  if (take == Take::kGet) {
    RtsBody rts;
    std::memcpy(&rts, body, sizeof rts);
    r->remoteAddr = rts.remote.addr;
    r->remoteKey = rts.remote.key;
    r->bytes = static_cast<int64_t>(m);
    r->transferred = 0;
    r->issued = 0;
    if (issueReads(r)) return;
  } else if (take == Take::kIpc && dev::ipcTake(r, srcJob, body, m)) {
    return;  // dev::poll completes it (onIpcDone)
  }
  r->transferred = 0;
  // Large messages may be streamed past the caches on both sides (copy.h,
  // stream_choice.h); the receiver decides and tells the sender in the kCts.
  // A folding receive reduces each piece into its cached result: for it only
  // the sender streams (the ring then comes from memory, not from the other
  // cache), and only when measured cheaper (auto).
  r->hint &= kHintDevice;
  if (onDevice) [[unlikely]] {
    dev::prepareLanding(r, m, *t->limits);  // pinned slots, copied to the device as they fill
  } else if (E.ntMin && h.size >= E.ntMin && t == E.shm) {
    if (E.ntMode == NtMode::kAuto) {
      r->startTicks = ticks();
      r->hint = (E.choice[srcJob].pick(h.size, r->startTicks) ? kFlagStream : 0) | kHintMeasured;
    } else if (E.ntMode == NtMode::kAlways && !r->fold) {
      r->hint = kFlagStream;
    }
  }
  sendCtl(srcJob, Kind::kCts, h.sreq, r->id(), r->hint & kFlagStream);
}

void onData(Request* r, const MsgHeader& h, const void* payload, size_t n) {
  if (h.flags & kFlagFailed) [[unlikely]]
    dev::senderFailed(r);
  size_t offset = h.size;
  size_t cap = capacityOf(r);
  if (offset < cap) land(r, payload, std::min(n, cap - offset), offset);
  r->transferred += n;
  if (r->transferred >= r->total) {
    if (r->hint & kFlagStream) streamFence();
    if (r->hint & kHintMeasured)
      E.choice[r->remoteRank].finished(r->total, r->hint & kFlagStream, r->startTicks, ticks());
    r->bytes = static_cast<int64_t>(std::min(r->total, cap));
    r->finish();
  }
}

void onRecord(int srcJob, const MsgHeader& h, const void* payload, size_t n) {
  switch (h.kind) {
    case Kind::kInline:
    case Kind::kEager:
    case Kind::kRtsGet:
    case Kind::kRtsPipeline:
    case Kind::kRtsIpc: {
      countReceived(h.size);
      if (Request* r = E.match.takePosted(h)) {
        if (h.kind == Kind::kInline || h.kind == Kind::kEager)
          deliverEager(r, h, srcJob, payload);
        else
          deliverRts(r, h, srcJob, payload);
        return;
      }
      if (h.sig) [[unlikely]] {
        if (Request* r = E.match.takeConflictingPosted(h.ctx, h.tag, h.sig))
          failMismatched(r, h);
      }
      auto u = std::make_unique<Unexpected>();
      u->hdr = h;
      u->srcJob = srcJob;
      if (h.kind == Kind::kRtsGet || h.kind == Kind::kRtsPipeline) {
        u->rts = *static_cast<const RtsBody*>(payload);
      } else if (n > 0) {
        u->payload = allocPayload(n);
        std::memcpy(u->payload.get(), payload, n);
        u->payloadBytes = n;
      }
      E.match.addUnexpected(std::move(u));
      return;
    }
    case Kind::kAck:
      Request::fromId(h.sreq)->finish();
      return;
    case Kind::kFin: {
      Request* r = Request::fromId(h.sreq);
      releaseExposed(r);
      r->finish();
      return;
    }
    case Kind::kCts: {
      Request* r = Request::fromId(h.sreq);
      r->remoteId = h.size;
      r->hint = (r->hint & kHintDevice) | (h.flags & kFlagStream);
      r->stage = kStreaming;
      if (E.outq[r->remoteRank].empty() && pushSend(r)) return;
      queueOut(r->remoteRank, OutItem{r, {}});
      return;
    }
    case Kind::kData:
      onData(Request::fromId(h.sreq), h, payload, n);
      return;
  }
  log::error("p2p: record of unknown kind %d from rank %d", static_cast<int>(h.kind), srcJob);
}

void deliverUnexpected(Request* r, Unexpected* u) {
  if (u->hdr.kind == Kind::kRtsGet || u->hdr.kind == Kind::kRtsPipeline)
    deliverRts(r, u->hdr, u->srcJob, &u->rts);
  else if (u->hdr.kind == Kind::kRtsIpc)
    deliverRts(r, u->hdr, u->srcJob, u->payload.get());
  else
    deliverEager(r, u->hdr, u->srcJob, u->payload.get());
  delete u;
}

// A send to oneself: no transport, the data is handed over directly (or
// copied aside when no receive is posted yet).
void sendSelf(Request* r) {
  countSent(kViaSelf, r->total);
  countReceived(r->total);
  MsgHeader h = headerOf(r, Kind::kEager);
  Request* posted = E.match.takePosted(h);
  Payload packed;
  const void* data = contiguousBase(r->type, r->buf);
  if (!r->type->isContiguous() && r->total > 0) {
    packed = allocPayload(r->total);
    packTo(r->type, r->buf, r->count, 0, packed.get(), r->total);
    data = packed.get();
  }
  if (posted) {
    h.flags = 0;  // matched now: a synchronous send completes with it
    deliverEager(posted, h, E.me, data);
    r->finish();
    return;
  }
  auto u = std::make_unique<Unexpected>();
  u->hdr = h;
  u->srcJob = E.me;
  if (r->total > 0) {
    if (!packed) {
      packed = allocPayload(r->total);
      std::memcpy(packed.get(), data, r->total);
    }
    u->payload = std::move(packed);
    u->payloadBytes = r->total;
  }
  E.match.addUnexpected(std::move(u));
  // Standard sends are buffered; a synchronous one waits for the kAck the
  // matching receive sends to ourselves.
  if (r->mode == SendMode::kSync)
    r->stage = kWaitReply;
  else
    r->finish();
}

constexpr Handlers kHandlers{onRecord};

}  // namespace

namespace engine {

Engine E;

// An IPC copy into a receive finished (dev::poll): the sender may go.
void onIpcDone(Request* r) {
  sendCtl(r->remoteRank, Kind::kFin, r->remoteId, 0);
  r->finish();
}

int poll(void*) {
  int events = 0;
  if (E.shm) events += shm::poll(onRecord);
  if (E.ofi) events += E.ofi->poll(kHandlers);
  if (!E.busy.empty()) events += drainOutgoing();
  return events;
}

}  // namespace engine

bool sendEagerNow(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  if (!type->isContiguous()) return false;
  const size_t bytes = static_cast<size_t>(count) * typeSize(type);
  // (An empty message is not asked about: its pointer may be none.)
  if (device::active() && bytes && device::isDevice(buf)) [[unlikely]]
    return false;  // start() stages it
  Kind kind = selectProtocol(bytes, true, *E.shmLim);
  // A measured CMA window below the eager limit: the read is the faster way.
  if (kind == Kind::kRtsGet && bytes <= E.shmLim->eagerMax) return false;
  if (kind != Kind::kInline && kind != Kind::kEager) {
    if (bytes > std::min(E.sendEagerMax, E.shmLim->maxPayload)) return false;
    kind = Kind::kEager;
  }
  const int job = comm->worldRank(dest);
  if (E.route[job] != E.shm || !E.shm || !E.outq[job].empty()) return false;
  MsgHeader h{};
  h.ctx = contextOf(comm, Channel::kPt2pt);
  h.src = comm->rank();
  h.tag = tag;
  h.kind = kind;
  h.size = bytes;
  // No request: a standard-mode eager send is complete once in the ring, and
  // the receiver never answers it (sreq stays 0).
  if (!shm::send(job, h, static_cast<const char*>(buf) + type->trueLb(), bytes)) return false;
  countSent(kViaShm, bytes);
  return true;
}

Status isend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm,
             SendMode mode, Channel channel, Request** out, uint16_t sig) {
  Request* r = Request::alloc(ReqKind::kSend);
  r->sig = sig;
  r->buf = const_cast<void*>(buf);
  r->count = count;
  r->type = type;
  r->peer = dest;
  r->tag = tag;
  r->comm = comm;
  r->mode = mode;
  r->channel = channel;
  *out = r;
  return start(r);
}

namespace {
Request* newRecv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm,
                 Channel channel, uint16_t sig) {
  Request* r = Request::alloc(ReqKind::kRecv);
  r->sig = sig;
  r->buf = buf;
  r->count = count;
  r->type = type;
  r->peer = source;
  r->tag = tag;
  r->comm = comm;
  r->channel = channel;
  return r;
}
}  // namespace

Status irecv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm,
             Channel channel, Request** out, uint16_t sig) {
  *out = newRecv(buf, count, type, source, tag, comm, channel, sig);
  return start(*out);
}

bool canFold(const Datatype* type) {
  const size_t size = typeSize(type);
  if (!type->isContiguous() || (size != 1 && size != 2 && size != 4 && size != 8)) return false;
  // The pipeline's pieces: min(chunk, largest record of any transport);
  // eager messages come whole. Payloads start 8-byte aligned in every
  // transport's records.
  const size_t piece = E.foldPiece ? E.foldPiece : E.chunk;
  return piece % size == 0 && type->trueLb() % static_cast<int64_t>(size) == 0;
}

Status irecvFold(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm,
                 void (*fold)(const void*, void*, size_t, void*, Datatype*), void* ctx,
                 Request** out, uint16_t sig) {
  Request* r = newRecv(buf, count, type, source, tag, comm, Channel::kColl, sig);
  r->fold = fold;
  r->foldCtx = ctx;
  *out = r;
  return start(r);
}

Status start(Request* r) {
  r->complete = false;
  r->active = true;
  r->cancelled = false;
  r->stage = kStart;
  r->hint = 0;
  r->statusError = MPI_SUCCESS;
  r->peerSig = 0;
  r->transferred = 0;
  r->bytes = 0;
  if (!r->holdsRefs) {
    if (r->comm) r->comm->retain();
    if (r->type && !r->type->isPredefined()) r->type->retain();
    r->holdsRefs = true;
  }
  // Device buffers (any caller: MPI_Send, persistent and partitioned
  // requests, schedules) take a native path (device_path.h) or a host twin.
  if (r->kind == ReqKind::kRecv) {
    if (device::active()) [[unlikely]]
      LOOM_TRY(dev::prepareRecv(r));
    r->statusSource = MPI_ANY_SOURCE;
    r->statusTag = MPI_ANY_TAG;
    uint32_t ctx = contextOf(r->comm, r->channel);
    if (Unexpected* u = E.match.findUnexpected(ctx, r->peer, r->tag, true)) {
      deliverUnexpected(r, u);
    } else if (const Unexpected* c = r->sig ? E.match.conflictingUnexpected(ctx, r->tag, r->sig)
                                            : nullptr) [[unlikely]] {
      failMismatched(r, c->hdr);
    } else {
      E.match.post(ctx, r);
    }
    return Status::ok();
  }
  r->total = static_cast<size_t>(r->count) * typeSize(r->type);
  r->remoteRank = r->comm->worldRank(r->peer);
  if (r->remoteRank == E.me) {
    if (device::active()) [[unlikely]]
      LOOM_TRY(device::stageRequest(r, true));  // handed over on the host
    sendSelf(r);
    return Status::ok();
  }
  const Transport* t = transportTo(r->remoteRank);
  if (!t) return errorf(MPI_ERR_INTERN, "no transport reaches rank %d", r->remoteRank);
  r->scratch = nullptr;
  if (device::active()) [[unlikely]]
    LOOM_TRY(dev::prepareSend(r, *t->limits));  // sets r->protocol by memory kind
  else
    r->protocol = static_cast<uint8_t>(
        selectProtocol(r->total, r->type->isContiguous(), *t->limits));
  if (E.outq[r->remoteRank].empty() && pushSend(r)) return Status::ok();
  queueOut(r->remoteRank, OutItem{r, {}});
  return Status::ok();
}

Status iprobe(int source, int tag, Comm* comm, bool* found, ProbeResult* result) {
  Unexpected* u = E.match.findUnexpected(contextOf(comm, Channel::kPt2pt), source, tag, false);
  *found = u != nullptr;
  if (u) *result = ProbeResult{u->hdr.src, u->hdr.tag, static_cast<int64_t>(u->hdr.size)};
  return Status::ok();
}

Status improbe(int source, int tag, Comm* comm, bool* found, Message** msg,
               ProbeResult* result) {
  Unexpected* u = E.match.findUnexpected(contextOf(comm, Channel::kPt2pt), source, tag, true);
  *found = u != nullptr;
  if (u) {
    *result = ProbeResult{u->hdr.src, u->hdr.tag, static_cast<int64_t>(u->hdr.size)};
    *msg = u;
  }
  return Status::ok();
}

Status imrecv(void* buf, int64_t count, Datatype* type, Message* msg, Request** out) {
  Request* r = Request::alloc(ReqKind::kRecv);
  r->buf = buf;
  r->count = count;
  r->type = type;
  r->active = true;
  *out = r;
  // A device buffer without host memory to stage it: the receive fails, the message is lost.
  if (Status st = device::active() ? dev::prepareRecv(r) : Status(); !st.isOk()) {
    r->statusError = st.code();
    r->error = std::move(st);
    delete msg;
    r->finish();
    return Status::ok();
  }
  deliverUnexpected(r, msg);
  return Status::ok();
}

bool conflictingMessage(Comm* comm, int tag, uint16_t sig, int* source, uint16_t* theirSig) {
  const Unexpected* u = E.match.conflictingUnexpected(contextOf(comm, Channel::kColl), tag, sig);
  if (!u) return false;
  *source = u->hdr.src;
  *theirSig = u->hdr.sig;
  return true;
}

bool cancelRecv(Request* r) {
  // Not after p2p::finalize (a communicator destroyed at exit).
  if (!E.ready || r->kind != ReqKind::kRecv || r->complete) return false;
  if (!E.match.removePosted(contextOf(r->comm, r->channel), r)) return false;
  r->cancelled = true;
  r->finish();
  return true;
}

}  // namespace loom::p2p
