// Device buffers in collective calls: which buffers of a call hold data on
// this rank, and staging them through host memory (core/device_stage.h)
// for the algorithms that run on host memory (all but the device forms of
// coll/device_pipe.h, which take device buffers as they are).
//
// Each significant buffer is staged once per call, as the span of every
// block the call reads or writes on this rank (counts, displacements and
// per-rank types as the collective defines them; MPI_IN_PLACE makes the
// receive buffer an input too). Inputs are copied to the host before the
// call starts; at completion only the blocks the call writes go back, typed
// bytes only, so the gaps between displaced blocks and the holes of derived
// types stay as the device had them. Buffers a rank does not use (a
// non-root's receive buffer) are left alone: no algorithm touches them.
#include "coll/coll_stage.h"

#include <vector>

#include "coll/op.h"
#include "core/comm.h"
#include "core/datatype.h"

namespace loom::coll {

namespace {

// One block of a buffer: `count` elements of `type` at byte offset `off`.
struct Block {
  int64_t off;
  int64_t count;
  const Datatype* type;
};

// A buffer as this rank's part of the call uses it.
struct Use {
  const void* p = nullptr;
  std::vector<Block> blocks;
  bool in = false;             // read by the call
  bool out = false;            // written by the call
  std::vector<Block> written;  // what it writes, when not all of `blocks`
};

void add(Use& u, int64_t off, int64_t count, const Datatype* t) {
  if (t && count > 0 && t->size() > 0) u.blocks.push_back(Block{off, count, t});
}

// `p` blocks of `count` elements, the standard's i * count * extent apart.
void addRegular(Use& u, int p, int64_t count, const Datatype* t) {
  for (int i = 0; i < p; ++i) add(u, i * count * t->extent(), count, t);
}

// The v forms: counts and displacements (in elements of `t`).
void addDisplaced(Use& u, int p, const CountArray& counts, const CountArray& displs,
                  const Datatype* t) {
  for (int i = 0; i < p; ++i) add(u, displs[i] * t->extent(), counts[i], t);
}

// The w form: displacements in bytes, a type per rank.
void addTyped(Use& u, int p, const CountArray& counts, const CountArray& displs,
              Datatype* const* types) {
  for (int i = 0; i < p; ++i) add(u, displs[i], counts[i], types[i]);
}

// What the call does with this rank's buffers: (send use, receive use).
void usesOf(const CollArgs& a, Use* s, Use* r) {
  const int p = a.comm->size(), me = a.comm->rank();
  const bool root = me == a.root;
  s->p = a.sendbuf;
  s->in = true;
  r->p = a.recvbuf;
  r->out = true;
  r->in = a.inPlace;
  switch (a.coll) {
    case Collective::kBarrier:
      break;
    case Collective::kBcast:  // sendbuf == recvbuf: the root's input, the others' output
      if (root)
        add(*s, 0, a.count, a.type);
      else
        add(*r, 0, a.count, a.type);
      break;
    case Collective::kReduce:
      if (!(a.inPlace && root)) add(*s, 0, a.count, a.type);
      if (root) add(*r, 0, a.count, a.type);
      break;
    case Collective::kAllreduce:
    case Collective::kScan:
      if (!a.inPlace) add(*s, 0, a.count, a.type);
      add(*r, 0, a.count, a.type);
      break;
    case Collective::kExscan:
      if (!a.inPlace) add(*s, 0, a.count, a.type);
      add(*r, 0, a.count, a.type);
      // Rank 0's result is undefined and may not be written at all: keep
      // what the device had rather than copy back an unset twin.
      if (me == 0) r->in = true;
      break;
    case Collective::kGather:
    case Collective::kGatherv:
      if (!a.inPlace) add(*s, 0, a.count, a.type);
      if (root) {
        if (a.coll == Collective::kGather)
          addRegular(*r, p, a.recvCount, a.recvType);
        else
          addDisplaced(*r, p, a.recvCounts, a.recvDispls, a.recvType);
      }
      break;
    case Collective::kScatter:
    case Collective::kScatterv:
      if (root) {
        if (a.coll == Collective::kScatter)
          addRegular(*s, p, a.count, a.type);
        else
          addDisplaced(*s, p, a.sendCounts, a.sendDispls, a.type);
      }
      if (!a.inPlace) add(*r, 0, a.recvCount, a.recvType);
      r->in = false;  // in place, the root's receive buffer is not used at all
      break;
    case Collective::kAllgather:
    case Collective::kAllgatherv:
      if (!a.inPlace) add(*s, 0, a.count, a.type);
      if (a.coll == Collective::kAllgather)
        addRegular(*r, p, a.recvCount, a.recvType);
      else
        addDisplaced(*r, p, a.recvCounts, a.recvDispls, a.recvType);
      break;
    case Collective::kReduceScatter:
    case Collective::kReduceScatterBlock:
      // count: the whole input; recvCount: this rank's block. In place the
      // input is the receive buffer, and the result its first block.
      if (!a.inPlace) add(*s, 0, a.count, a.type);
      add(*r, 0, a.inPlace ? a.count : a.recvCount, a.type);
      if (a.inPlace && a.recvCount > 0) r->written.push_back(Block{0, a.recvCount, a.type});
      break;
    case Collective::kAlltoall:
      if (!a.inPlace) addRegular(*s, p, a.count, a.type);
      addRegular(*r, p, a.recvCount, a.recvType);
      break;
    case Collective::kAlltoallv:
      if (!a.inPlace) addDisplaced(*s, p, a.sendCounts, a.sendDispls, a.type);
      addDisplaced(*r, p, a.recvCounts, a.recvDispls, a.recvType);
      break;
    case Collective::kAlltoallw:
      if (!a.inPlace) addTyped(*s, p, a.sendCounts, a.sendDispls, a.sendTypes);
      addTyped(*r, p, a.recvCounts, a.recvDispls, a.recvTypes);
      break;
    default:
      break;
  }
}

bool onDevice(const Use& u) {
  return u.p && !u.blocks.empty() && device::isDevice(u.p);
}

// Stages one buffer: the span of its blocks; what it writes goes back.
Status stageUse(const Use& u, device::Stage* st, const void** twin) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Block& b : u.blocks) {
    int64_t l = 0, h = 0;
    device::typeSpan(b.count, b.type, &l, &h);
    lo = std::min(lo, b.off + l);
    hi = std::max(hi, b.off + h);
  }
  Status s;
  void* host = st->add(u.p, lo, hi, u.in, &s);
  if (!host) return s;
  if (u.out)
    for (const Block& b : u.written.empty() ? u.blocks : u.written)
      st->writes(b.off, b.count, b.type);
  *twin = host;
  return Status::ok();
}

}  // namespace

bool touchesDevice(const CollArgs& a) {
  // Host calls on a machine with a GPU: two answers from the kind cache,
  // no allocation. (A device pointer the call does not use, a non-root's
  // receive buffer, takes the path below and stages nothing.)
  if (!device::isDevice(a.sendbuf) && !device::isDevice(a.recvbuf)) return false;
  Use s, r;
  usesOf(a, &s, &r);
  return onDevice(s) || onDevice(r);
}

bool allOnDevice(const CollArgs& a) {
  Use s, r;
  usesOf(a, &s, &r);
  const bool sUsed = s.p && !s.blocks.empty(), rUsed = r.p && !r.blocks.empty();
  return (sUsed || rUsed) && (!sUsed || device::isDevice(s.p)) && (!rUsed || device::isDevice(r.p));
}

Status stageCall(const CollArgs& a, CollArgs* staged, std::unique_ptr<device::Stage>* out) {
  Use s, r;
  usesOf(a, &s, &r);
  *staged = a;
  auto st = std::make_unique<device::Stage>();
  st->setWhat(collectiveName(a.coll));
  // The receive buffer first: in place, sendbuf lies in it (reductions pass
  // sendbuf == recvbuf) and takes its twin from it; so does a bcast's one
  // buffer, whichever role it has here.
  const void* twin = nullptr;
  if (onDevice(r)) LOOM_TRY(stageUse(r, st.get(), &twin));
  if (onDevice(s) && st->translate(s.p) == s.p) LOOM_TRY(stageUse(s, st.get(), &twin));
  staged->sendbuf = st->translate(a.sendbuf);
  staged->recvbuf = st->translate(a.recvbuf);
  staged->mem = device::MemKind::kHost;
  *out = std::move(st);
  return Status::ok();
}

}  // namespace loom::coll
