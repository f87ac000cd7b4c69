// Collectives on an intercommunicator (MPI 5.0 §6.2.2), as schedules on
// the intercommunicator itself: every message goes between the two groups,
// so one schedule runs the whole call, blocking or not, through the one
// engine (coll/schedule.h) and with the communicator's collective tags.
//
// The algorithms are the direct ones, chosen to be obviously right rather
// than fast. With n local and m remote processes:
//   barrier        every process swaps an empty message with every remote
//                  one (n m messages each way, one round)
//   bcast, scatter(v), gather(v), reduce
//                  the root (MPI_ROOT) talks to each remote process; the
//                  other side's processes send to or receive from the root
//                  (one round; reduce adds a local round at the root)
//   allgather(v), alltoall(v,w)
//                  every process swaps its blocks with every remote one
//   allreduce      every process sends its vector to every remote process,
//                  which reduces the m vectors it receives in remote rank
//                  order (so both sides' results are reproducible and equal
//                  across the group): n m messages of the full vector
//   reduce_scatter(_block)
//                  as allreduce, each process reducing only its own block
// A reduction over remote ranks 0..m-1 is y0 op (y1 op (... op y(m-1))),
// the standard's order for non-commutative ops.
//
// MPI_IN_PLACE has no meaning on an intercommunicator; the entry points
// reject it before anything runs here.
#include <memory>

#include "api/coll_common.h"
#include "api/inter_comm.h"
#include "api/inter_internal.h"
#include "api/persistent_coll.h"
#include "coll/op.h"
#include "coll/schedule.h"
#include "coll/selector.h"
#include "core/device_stage.h"
#include "core/log.h"

namespace loom::api {

namespace {

using coll::Collective;
using coll::elemAt;
using coll::Schedule;

// References a pending nonblocking call holds (Request::owner).
struct InterHold {
  Comm* comm = nullptr;
  std::vector<Datatype*> types;
  coll::Op* op = nullptr;
};

void dropHold(InterHold* h) {
  for (Datatype* t : h->types) t->release();
  if (h->op) h->op->release();
  Comm::release(h->comm);
  delete h;
}

void releaseInterHold(Request* r) {
  auto* h = static_cast<InterHold*>(r->owner);
  r->owner = nullptr;
  r->onComplete = nullptr;
  if (h) dropHold(h);
}

InterHold* hold(const InterCall& a) {
  auto* h = new InterHold;
  h->comm = a.comm;
  a.comm->retain();
  auto add = [h](Datatype* t) {
    if (t && !t->isPredefined()) {
      t->retain();
      h->types.push_back(t);
    }
  };
  add(a.stype);
  add(a.rtype);
  for (Datatype* t : a.stypes) add(t);
  for (Datatype* t : a.rtypes) add(t);
  if (a.op && !a.op->isPredefined()) {
    a.op->retain();
    h->op = a.op;
  }
  return h;
}

// Remote rank j's block of a buffer: displacement in elements (v forms,
// or j * count), or in bytes (w form).
const char* blockAt(const void* buf, CountArray displs, int j, int64_t count, const Datatype* t) {
  return elemAt(buf, displs ? displs[j] : j * count, t);
}

// Receives every remote process's `count` elements into scratch, then
// reduces them in remote rank order over elements [off, off + n) into
// `out` (laid out like the user's buffers).
void gatherReduce(Schedule& s, const InterCall& a, int64_t count, int64_t off, int64_t n,
                  void* out) {
  const int m = a.comm->peerSize();
  std::vector<char*> in(m);
  for (int j = 0; j < m; ++j) {
    in[j] = coll::scratchLike(s, count, a.stype);
    s.recv(in[j], count, a.stype, j);
  }
  s.endRound();
  Datatype* t = a.stype;
  coll::Op* op = a.op;
  s.local([in = std::move(in), t, op, off, n, out] {
    // A result buffer on a GPU: reduced in a host twin, its typed bytes
    // copied back (the messages themselves are staged by the p2p engine).
    device::Stage stage;
    stage.setWhat("an intercommunicator reduction");
    void* res = out;
    if (device::active() && device::isDevice(out)) {
      int64_t lo = 0, hi = 0;
      device::typeSpan(n, t, &lo, &hi);
      Status st;
      if (!(res = stage.add(out, lo, hi, false, &st))) {
        log::error("intercommunicator reduction: %s", st.message().c_str());
        return;
      }
      stage.writes(0, n, t);
    }
    const int last = static_cast<int>(in.size()) - 1;
    coll::copyLike(elemAt(in[last], off, t), res, n, t);
    for (int j = last - 1; j >= 0; --j)
      (void)coll::reduceLocal(elemAt(in[j], off, t), res, n, t, op);
    if (Status st = stage.finish(); !st.isOk())
      log::error("intercommunicator reduction: %s", st.message().c_str());
  });
}

Status build(Schedule& s, const InterCall& a) {
  const int m = a.comm->peerSize();
  const bool isRoot = a.root == MPI_ROOT;
  const bool rootless = a.root == MPI_PROC_NULL;
  switch (a.coll) {
    case Collective::kBarrier: {
      static char none;
      for (int j = 0; j < m; ++j) {
        s.send(&none, 0, a.stype, j);
        s.recv(&none, 0, a.stype, j);
      }
      break;
    }
    case Collective::kBcast:
      if (isRoot)
        for (int j = 0; j < m; ++j) s.send(a.sbuf, a.scount, a.stype, j);
      else if (!rootless)
        s.recv(a.rbuf, a.rcount, a.rtype, a.root);
      break;
    case Collective::kGather:
    case Collective::kGatherv:
      if (isRoot)
        for (int j = 0; j < m; ++j)
          s.recv(const_cast<char*>(blockAt(a.rbuf, a.rdispls, j, a.rcount, a.rtype)),
                 a.rcounts ? a.rcounts[j] : a.rcount, a.rtype, j);
      else if (!rootless)
        s.send(a.sbuf, a.scount, a.stype, a.root);
      break;
    case Collective::kScatter:
    case Collective::kScatterv:
      if (isRoot)
        for (int j = 0; j < m; ++j)
          s.send(blockAt(a.sbuf, a.sdispls, j, a.scount, a.stype),
                 a.scounts ? a.scounts[j] : a.scount, a.stype, j);
      else if (!rootless)
        s.recv(a.rbuf, a.rcount, a.rtype, a.root);
      break;
    case Collective::kAllgather:
    case Collective::kAllgatherv:
      for (int j = 0; j < m; ++j) {
        s.send(a.sbuf, a.scount, a.stype, j);
        s.recv(const_cast<char*>(blockAt(a.rbuf, a.rdispls, j, a.rcount, a.rtype)),
               a.rcounts ? a.rcounts[j] : a.rcount, a.rtype, j);
      }
      break;
    case Collective::kAlltoall:
    case Collective::kAlltoallv:
      for (int j = 0; j < m; ++j) {
        s.send(blockAt(a.sbuf, a.sdispls, j, a.scount, a.stype),
               a.scounts ? a.scounts[j] : a.scount, a.stype, j);
        s.recv(const_cast<char*>(blockAt(a.rbuf, a.rdispls, j, a.rcount, a.rtype)),
               a.rcounts ? a.rcounts[j] : a.rcount, a.rtype, j);
      }
      break;
    case Collective::kAlltoallw:
      for (int j = 0; j < m; ++j) {
        s.send(static_cast<const char*>(a.sbuf) + a.sdispls[j], a.scounts[j], a.stypes[j], j);
        s.recv(static_cast<char*>(a.rbuf) + a.rdispls[j], a.rcounts[j], a.rtypes[j], j);
      }
      break;
    case Collective::kReduce:
      if (isRoot)
        gatherReduce(s, a, a.scount, 0, a.scount, a.rbuf);
      else if (!rootless)
        s.send(a.sbuf, a.scount, a.stype, a.root);
      break;
    case Collective::kAllreduce:
      for (int j = 0; j < m; ++j) s.send(a.sbuf, a.scount, a.stype, j);
      gatherReduce(s, a, a.scount, 0, a.scount, a.rbuf);
      break;
    case Collective::kReduceScatter:
    case Collective::kReduceScatterBlock: {
      // scount: the whole vector (the same length on both sides); rcount
      // and offset: this process's block and where it starts.
      for (int j = 0; j < m; ++j) s.send(a.sbuf, a.scount, a.stype, j);
      gatherReduce(s, a, a.scount, a.offset, a.rcount, a.rbuf);
      break;
    }
    default:
      return errorf(MPI_ERR_COMM, "%s is not defined on an intercommunicator",
                    coll::collectiveName(a.coll));
  }
  return Status::ok();
}

}  // namespace

namespace {

// The schedule of one activation of `a` with collective tag `tag`.
Status buildCall(const InterCall& a, int tag, std::unique_ptr<Schedule>* out) {
  auto s = Schedule::make(a.comm, tag);
  // Both sides sign alike: the root's value differs between them by design.
  s->setSignature(coll::callSignature(a.coll, 0, a.op));
  LOOM_TRY(build(*s, a));
  *out = std::move(s);
  return Status::ok();
}

// A persistent collective on an intercommunicator (MPI_*_init): the call
// with its own copies of the count and displacement arrays (the user's may
// change after the init call), references held, and the tag its init call
// drew; each MPI_Start builds and runs the schedule again.
class InterPlan final : public PersistentColl {
 public:
  InterPlan(const InterCall& a, int tag) : a_(a), tag_(tag) {
    const int m = a.comm->peerSize();
    auto keep = [m](CountArray v, std::vector<int64_t>* copy) -> CountArray {
      if (!v) return nullptr;
      for (int j = 0; j < m; ++j) copy->push_back(v[j]);
      return copy->data();
    };
    a_.scounts = keep(a.scounts, &counts_[0]);
    a_.sdispls = keep(a.sdispls, &counts_[1]);
    a_.rcounts = keep(a.rcounts, &counts_[2]);
    a_.rdispls = keep(a.rdispls, &counts_[3]);
    hold_ = hold(a_);
  }
  ~InterPlan() override { dropHold(hold_); }

  Status start(Request* user) override {
    std::unique_ptr<Schedule> s;
    LOOM_TRY(buildCall(a_, tag_, &s));
    Request* inner = nullptr;
    Status st = Schedule::start(std::move(s), &inner);
    if (!st.isOk()) {
      if (inner) Request::release(inner);
      return st;
    }
    completeFrom(inner, user);
    return Status::ok();
  }

 private:
  InterCall a_;
  int tag_;
  std::vector<int64_t> counts_[4];
  InterHold* hold_;
};

}  // namespace

int initInterCall(const InterCall& a, MPI_Request* request, const char* fn) {
  Comm* c = a.comm;
  // The init call is collective: every process draws the same tag here.
  (void)fn;  // the arguments were checked by the caller
  auto* plan = new InterPlan(a, c->nextCollectiveTag());
  *request = toHandle(newPersistentColl(c, plan));
  return MPI_SUCCESS;
}

int runInterCall(const InterCall& a, MPI_Request* request, const char* fn) {
  Comm* c = a.comm;
  std::unique_ptr<Schedule> s;
  Status st = buildCall(a, c->nextCollectiveTag(), &s);
  if (!st.isOk()) return raise(c, st, fn);
  InterHold* h = request ? hold(a) : nullptr;
  Request* r = nullptr;
  st = Schedule::start(std::move(s), &r);
  if (h) {
    if (st.isOk() && r && !r->complete) {
      r->owner = h;
      r->onComplete = releaseInterHold;
    } else {
      dropHold(h);
    }
  }
  if (!st.isOk()) {
    if (r) Request::release(r);
    return raise(c, st, fn);
  }
  if (request) {
    *request = toHandle(r);
    return MPI_SUCCESS;
  }
  return waitCollective(r, c, fn);
}

}  // namespace loom::api
