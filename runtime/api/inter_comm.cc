// How the two sides of an intercommunicator agree (inter_comm.h).
//
// joinSides is the one agreement every constructor runs, on each side: the
// side ANDs its free-context-id masks over its local intracommunicator
// (allreduceBand), its leader swaps that mask and the side's job ranks with
// the other side's leader, and the leader broadcasts the AND of both masks,
// the other side's job ranks and any error it found to its side. Every
// process of both groups then sees the same AND, so the lowest id free in
// it is free on every process of both: the intercommunicator's context id
// (comm_internal.cc says why agreeing on ids that other, disjoint
// communicators may also use is safe). Cost: the local allreduce (2 ceil(log2
// n) rounds of 512 bytes), one leader swap, a binomial broadcast.
//
// Each side also gets a hidden intracommunicator over its local group (a
// context of its own, agreed over the local side only): the next
// constructor on the intercommunicator (dup, split, create, merge) runs its
// local steps there, never on a communicator the user holds.
#include "api/inter_comm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "api/comm_internal.h"
#include "api/ctx_agree.h"
#include "api/inter_internal.h"
#include "api/runtime.h"
#include "core/datatype.h"
#include "core/progress.h"
#include "p2p/p2p.h"

namespace loom::api {

namespace {

// Internal tags on the collective channel (clear of kCollTagSpan and of
// comm_internal.h's 0x7c0001..3).
constexpr int kTagInterBcast = 0x7c0011;  // local broadcasts of joinSides
constexpr int kTagInterSplit = 0x7c0012;  // leaders swap colors (split)

Datatype* byteType() {
  static Datatype* t = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
  return t;
}

Status finish(Request* r, const char* what) {
  progress::waitUntil([r] { return r->complete; });
  int err = r->statusError;
  Request::release(r);
  if (err != MPI_SUCCESS)
    return errorf(err, "internal %s of an intercommunicator constructor failed", what);
  return Status::ok();
}

// Binomial broadcast from `root` over `c` (ranks relative to the root).
Status bcastBytes(Comm* c, int root, void* buf, size_t bytes) {
  const int p = c->size();
  const int rel = (c->rank() - root + p) % p;
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (rel & mask) {
      Request* r = nullptr;
      LOOM_TRY(p2p::irecv(buf, static_cast<int64_t>(bytes), byteType(), (rel - mask + root) % p,
                          kTagInterBcast, c, Channel::kColl, &r));
      LOOM_TRY(finish(r, "receive"));
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rel + mask < p) {
      Request* r = nullptr;
      LOOM_TRY(p2p::isend(buf, static_cast<int64_t>(bytes), byteType(), (rel + mask + root) % p,
                          kTagInterBcast, c, SendMode::kStandard, Channel::kColl, &r));
      LOOM_TRY(finish(r, "send"));
    }
  }
  return Status::ok();
}

// What a leader tells the other leader, then its own side.
struct SideHeader {
  int32_t err;   // an MPI error class the leader found (broadcast only)
  int32_t size;  // the sending side's group size
  int32_t high;  // MPI_Intercomm_merge's flag
  int32_t pad;
  uint64_t words[ContextIdMask::kWords];
};

// A new communicator's context id: taken by this process, returned with
// the Comm.
Comm* newComm(uint32_t ctx, Group* g, int rank, Errhandler* eh) {
  contextIds().take(ctx);
  auto* c = new Comm(ctx, g, rank, "");
  c->setOwnsContextId(true);
  c->setErrhandler(eh);
  return c;
}

}  // namespace

Status exchangeBytes(Comm* via, const void* sbuf, size_t sbytes, void* rbuf, size_t rbytes,
                     int peer, int tag) {
  Request* rr = nullptr;
  Request* sr = nullptr;
  LOOM_TRY(p2p::irecv(rbuf, static_cast<int64_t>(rbytes), byteType(), peer, tag, via,
                      Channel::kColl, &rr));
  LOOM_TRY(p2p::isend(sbuf, static_cast<int64_t>(sbytes), byteType(), peer, tag, via,
                      SendMode::kStandard, Channel::kColl, &sr));
  Status a = finish(sr, "send");
  Status b = finish(rr, "receive");
  return a.isOk() ? b : a;
}

Status joinSides(Comm* local, int leader, const LeaderLink& link, int high, Joined* out) {
  // From the snapshot until the caller takes the id (right after this
  // returns), no agreement in flight may take one here (ctx_agree.h).
  HoldAgreements hold;
  SideHeader h{};
  std::memcpy(h.words, contextIds().words(), sizeof h.words);
  if (local->size() > 1) LOOM_TRY(allreduceBand(local, h.words, ContextIdMask::kWords));
  std::vector<int> remote;
  Status found;
  if (local->rank() == leader) {
    SideHeader theirs{};
    h.size = local->size();
    h.high = high;
    if (link.failed) found = *link.failed;
    if (found.isOk())
      found = exchangeBytes(link.via, &h, sizeof h, &theirs, sizeof theirs, link.peer, link.tag);
    if (found.isOk()) {
      remote.resize(theirs.size);
      const std::vector<int>& mine = local->group()->jobRanks();
      found = exchangeBytes(link.via, mine.data(), mine.size() * sizeof(int), remote.data(),
                            remote.size() * sizeof(int), link.peer, link.tag);
    }
    if (found.isOk()) {
      for (int i = 0; i < ContextIdMask::kWords; ++i) h.words[i] &= theirs.words[i];
      h.size = theirs.size;
      h.high = theirs.high;
      // Both leaders see the same two lists, so both sides fail alike.
      for (int j : remote)
        if (local->group()->rankOf(j) != MPI_UNDEFINED) {
          found = errorf(MPI_ERR_COMM,
                         "the local and remote groups overlap (job rank %d is in both)", j);
          break;
        }
    }
    h.err = found.code();
  }
  LOOM_TRY(bcastBytes(local, leader, &h, sizeof h));
  if (h.err != MPI_SUCCESS) {
    if (!found.isOk()) return found;
    return errorf(h.err, "the local leader (rank %d) failed to reach the remote leader", leader);
  }
  remote.resize(h.size);
  LOOM_TRY(bcastBytes(local, leader, remote.data(), remote.size() * sizeof(int)));
  int lowest = ContextIdMask::lowestFree(h.words);
  if (lowest < 0)
    return errorf(MPI_ERR_INTERN,
                  "no context id is free on every process of both groups: more than %d "
                  "communicators are alive",
                  ContextIdMask::kIds - 3);
  out->ctx = static_cast<uint32_t>(lowest);
  out->remote = std::move(remote);
  out->remoteHigh = h.high;
  return Status::ok();
}

Status hiddenLocal(Comm* local, Comm** out) {
  uint32_t id = 0;
  LOOM_TRY(agreeContextId(local, &id));
  local->group()->retain();
  *out = newComm(id, local->group(), local->rank(), &gErrorsReturn);
  (*out)->setName("loom intercommunicator local side");
  return Status::ok();
}

Comm* buildInter(uint32_t ctx, Group* localGroup, int rank, Group* remote, Comm* hidden,
                 Errhandler* eh) {
  Comm* c = newComm(ctx, localGroup, rank, eh);
  c->makeInter(remote, hidden);
  return c;
}

Comm* interOf(MPI_Comm handle) {
  if (rt().phase != Phase::kRunning) return nullptr;
  Comm* c = toComm(handle);
  return c && c->isInter() ? c : nullptr;
}

Status dupInter(Comm* parent, Comm** out) {
  Joined j;
  LOOM_TRY(joinSides(parent->localComm(), 0, LeaderLink{parent, 0, kTagInterLeaders}, 0, &j));
  contextIds().take(j.ctx);  // so that the hidden id differs from it
  Comm* hidden = nullptr;
  Status st = hiddenLocal(parent->localComm(), &hidden);
  contextIds().give(j.ctx);
  LOOM_TRY(std::move(st));
  parent->group()->retain();
  parent->remoteGroup()->retain();
  *out = buildInter(j.ctx, parent->group(), parent->rank(), parent->remoteGroup(), hidden,
                    parent->errhandler());
  return Status::ok();
}

Comm* buildDupInter(Comm* parent, uint32_t ctx, uint32_t hid) {
  parent->group()->retain();
  Comm* hidden = newComm(hid, parent->group(), parent->rank(), &gErrorsReturn);
  hidden->setName("loom intercommunicator local side");
  parent->group()->retain();
  parent->remoteGroup()->retain();
  return buildInter(ctx, parent->group(), parent->rank(), parent->remoteGroup(), hidden,
                    parent->errhandler());
}

Status splitInter(Comm* parent, int color, int key, Comm** out) {
  struct Record {
    int color, key;
  };
  Comm* local = parent->localComm();
  const int n = parent->size(), m = parent->remoteGroup()->size();
  Record mine{color, key};
  std::vector<Record> ours(n), theirs(m);
  LOOM_TRY(allgatherSmall(local, &mine, sizeof mine, ours.data()));
  Status st;
  if (parent->rank() == 0)
    st = exchangeBytes(parent, ours.data(), n * sizeof(Record), theirs.data(), m * sizeof(Record),
                       0, kTagInterSplit);
  // A failed swap is reported after joinSides, which the leader still runs
  // (it tells its side that it failed) so that no one waits for it.
  LOOM_TRY(bcastBytes(local, 0, theirs.data(), m * sizeof(Record)));
  Joined j;
  Status joined = joinSides(local, 0, LeaderLink{parent, 0, kTagInterLeaders}, 0, &j);
  LOOM_TRY(std::move(st));
  LOOM_TRY(std::move(joined));
  // Members of this color on each side, by key, ties by rank.
  auto members = [color](const std::vector<Record>& recs) {
    std::vector<int> r;
    if (color == MPI_UNDEFINED) return r;
    for (int i = 0; i < static_cast<int>(recs.size()); ++i)
      if (recs[i].color == color) r.push_back(i);
    std::stable_sort(r.begin(), r.end(), [&](int a, int b) { return recs[a].key < recs[b].key; });
    return r;
  };
  std::vector<int> l = members(ours), r = members(theirs);
  const bool joins = !l.empty() && !r.empty();
  // Every local process agrees on the hidden id, members or not.
  if (joins) contextIds().take(j.ctx);
  uint32_t hid = 0;
  st = agreeContextId(local, &hid);
  if (joins) contextIds().give(j.ctx);
  LOOM_TRY(std::move(st));
  if (!joins) {
    *out = nullptr;
    return Status::ok();
  }
  std::vector<int> lj, rj;
  for (int i : l) lj.push_back(parent->group()->jobRank(i));
  for (int i : r) rj.push_back(parent->remoteGroup()->jobRank(i));
  auto* lg = new Group(std::move(lj));
  const int me = lg->rankOf(rt().proc.rank);
  lg->retain();
  Comm* hidden = newComm(hid, lg, me, &gErrorsReturn);
  hidden->setName("loom intercommunicator local side");
  *out = buildInter(j.ctx, lg, me, new Group(std::move(rj)), hidden, parent->errhandler());
  return Status::ok();
}

Status createInter(Comm* parent, Group* group, Comm** out) {
  const int r = group->rankOf(rt().proc.rank);
  return splitInter(parent, r == MPI_UNDEFINED ? MPI_UNDEFINED : 0, r, out);
}

int compareInter(Comm* a, Comm* b) {
  if (a == b) return MPI_IDENT;
  if (!a->isInter() || !b->isInter()) return MPI_UNEQUAL;
  int l = groupCompare(*a->group(), *b->group());
  int r = groupCompare(*a->remoteGroup(), *b->remoteGroup());
  if (l == MPI_IDENT && r == MPI_IDENT) return MPI_CONGRUENT;
  if (l != MPI_UNEQUAL && r != MPI_UNEQUAL) return MPI_SIMILAR;
  return MPI_UNEQUAL;
}

}  // namespace loom::api
