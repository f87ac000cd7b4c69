#include "api/comm_internal.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "api/ctx_agree.h"
#include "api/runtime.h"
#include "core/datatype.h"
#include "core/progress.h"
#include "p2p/p2p.h"

namespace loom::api {

MPI_Comm toHandle(Comm* c) {
  if (!c) return MPI_COMM_NULL;
  if (c == rt().world.get()) return MPI_COMM_WORLD;
  if (c == rt().self.get()) return MPI_COMM_SELF;
  return reinterpret_cast<MPI_Comm>(c);
}

Group* toGroup(MPI_Group handle) {
  if (handle == MPI_GROUP_EMPTY) return Group::empty();
  auto v = reinterpret_cast<uintptr_t>(handle);
  // Predefined handles (MPI_GROUP_NULL among them) are small integers.
  if (v < 4096 || v % alignof(Group) != 0) return nullptr;
  auto* g = reinterpret_cast<Group*>(handle);
  return g->valid() ? g : nullptr;
}

MPI_Group toHandle(Group* g) {
  if (!g) return MPI_GROUP_NULL;
  if (g == Group::empty()) return MPI_GROUP_EMPTY;
  return reinterpret_cast<MPI_Group>(g);
}

namespace {

// The internal collectives move raw bytes.
Datatype* byteType() {
  static Datatype* t = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
  return t;
}

Status finish(Request* r, const char* what) {
  progress::waitUntil([r] { return r->complete; });
  int err = r->statusError;
  Request::release(r);
  if (err != MPI_SUCCESS) return errorf(err, "internal %s failed", what);
  return Status::ok();
}

Status send(const void* buf, size_t bytes, int dest, int tag, Comm* comm) {
  Request* r = nullptr;
  LOOM_TRY(p2p::isend(buf, static_cast<int64_t>(bytes), byteType(), dest, tag, comm,
                      SendMode::kStandard, Channel::kColl, &r));
  return finish(r, "send");
}

Status recv(void* buf, size_t bytes, int src, int tag, Comm* comm) {
  Request* r = nullptr;
  LOOM_TRY(
      p2p::irecv(buf, static_cast<int64_t>(bytes), byteType(), src, tag, comm, Channel::kColl, &r));
  return finish(r, "receive");
}

// Both directions at once, so a ring of exchanges cannot deadlock on a
// transport that holds a send until it is matched.
Status sendrecv(const void* sbuf, size_t sbytes, int dest, void* rbuf, size_t rbytes, int src,
                int tag, Comm* comm) {
  Request* rr = nullptr;
  Request* sr = nullptr;
  LOOM_TRY(p2p::irecv(rbuf, static_cast<int64_t>(rbytes), byteType(), src, tag, comm,
                      Channel::kColl, &rr));
  Status st = p2p::isend(sbuf, static_cast<int64_t>(sbytes), byteType(), dest, tag, comm,
                         SendMode::kStandard, Channel::kColl, &sr);
  if (!st.isOk()) {
    // The receive is posted and cannot be withdrawn safely; the job is in
    // trouble anyway. Report the send's error.
    return st;
  }
  Status a = finish(sr, "send");
  Status b = finish(rr, "receive");
  return a.isOk() ? b : a;
}

}  // namespace

// Bruck's allgather. After the round with distance d, every process holds
// the records of ranks r, r+1, ..., r+2d-1 (mod p) in that order: it sends
// the first min(d, p-d) records it has to r-d and appends what r+d sends.
// A final rotation puts record i at position i.
Status allgatherSmall(Comm* comm, const void* mine, size_t bytes, void* all) {
  const int p = comm->size();
  const int r = comm->rank();
  std::vector<std::byte> tmp(static_cast<size_t>(p) * bytes);
  std::memcpy(tmp.data(), mine, bytes);
  for (int d = 1; d < p; d *= 2) {
    int cnt = std::min(d, p - d);
    LOOM_TRY(sendrecv(tmp.data(), cnt * bytes, (r - d + p) % p, tmp.data() + d * bytes, cnt * bytes,
                      (r + d) % p, kTagAllgather, comm));
  }
  auto* out = static_cast<std::byte*>(all);
  for (int i = 0; i < p; ++i)
    std::memcpy(out + static_cast<size_t>((r + i) % p) * bytes, tmp.data() + i * bytes, bytes);
  return Status::ok();
}

// Binomial tree rooted at 0: in the reduce, rank r receives from r+1, r+2,
// r+4, ... (while below p and below r's lowest set bit), then sends to r
// minus its lowest set bit; the broadcast runs the same tree backwards.
Status allreduceBand(Comm* comm, uint64_t* words, int nwords) {
  const int p = comm->size();
  const int r = comm->rank();
  const size_t bytes = sizeof(uint64_t) * nwords;
  std::vector<uint64_t> in(nwords);
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (r & mask) {
      LOOM_TRY(send(words, bytes, r - mask, kTagReduce, comm));
      break;
    }
    if (r + mask < p) {
      LOOM_TRY(recv(in.data(), bytes, r + mask, kTagReduce, comm));
      for (int i = 0; i < nwords; ++i) words[i] &= in[i];
    }
  }
  // Broadcast: receive from the parent found above (none for rank 0, whose
  // loop ran to the first power of two >= p), then serve the children.
  if (r != 0) LOOM_TRY(recv(words, bytes, r - mask, kTagBcast, comm));
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (r + mask < p) LOOM_TRY(send(words, bytes, r + mask, kTagBcast, comm));
  return Status::ok();
}

// Why the lowest id free on every process of the parent is safe, even when
// disjoint communicators end up with the same id (all colors of one split
// do, and so may creations running concurrently on disjoint parents):
// a message carries only the context id, and it travels between two members
// of one communicator. A process takes an id only for a communicator it is a
// member of and keeps it until that communicator is gone, so at any process
// P a live id names exactly one communicator. If Q sends to P on id c, Q's
// communicator with id c contains P; the id was agreed over a parent that
// contained P, while P held it for nothing else (else its bit would have
// been clear in the AND; with agreements in flight side by side, the check
// round of ctx_agree.cc makes sure P did not give it away between its
// snapshot and the end), and P took it for that same communicator. Two
// communicators with the same id therefore never share a process, so their
// traffic never meets. Ids of freed communicators return to the pool only
// when the last reference (e.g. a pending request) goes.
Status agreeContextId(Comm* parent, uint32_t* id) {
  AgreeSpec spec;
  spec.comm = parent;
  spec.me = parent->rank();
  spec.size = parent->size();
  spec.tag = kTagAgreeBase + parent->nextCollectiveTag();
  LOOM_TRY(agreeBlocking(std::move(spec), id));
  // The caller takes it (members only) before anything else progresses.
  contextIds().give(*id);
  return Status::ok();
}

}  // namespace loom::api
