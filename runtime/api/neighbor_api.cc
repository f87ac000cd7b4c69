// Neighbourhood collectives (MPI 5.0 §8.6-8.8): MPI_Neighbor_allgather(v)
// and MPI_Neighbor_alltoall(v,w), in blocking, nonblocking (MPI_Ineighbor_*)
// and persistent (MPI_Neighbor_*_init) form, on communicators with a
// Cartesian, graph or distributed-graph topology.
//
// Each call is one round of point-to-point messages on the communicator's
// collective channel (a coll::Schedule of one round: every receive, then
// every send), tagged with the call's collective tag, so neither user
// messages nor another collective's can match them. Cost: one message per
// neighbour each way, all in flight at once; no algorithm to choose.
//
// Which block goes where (core/proc_topo.h): receive block i comes from
// inNeighbors[i], send block j goes to outNeighbors[j]; MPI_PROC_NULL
// neighbours (the edges of a non-periodic grid) are skipped, so their
// blocks stay untouched. Repeated neighbours are paired by order: between
// two processes, messages of one call match in the order they were posted
// (MPI's non-overtaking rule), so the k-th send to a neighbour meets the
// k-th receive from it. For a graph or distributed graph that order is the
// standard's (both ends list the edges between them in the same order). A
// Cartesian dimension of extent 1 or 2 with wraparound names the same
// neighbour in both directions; there the standard pairs the send towards
// +1 with the receive from -1, so sends are posted per dimension +1 first,
// receives -1 first.
//
// Persistent form: the init call checks everything, captures the blocks and
// draws the call's tag once (it is collective, so every process draws the
// same one); each MPI_Start runs the same round again (persistent_coll.h).
// One tag for every activation is safe: an activation starts only after the
// previous one completed on this process, and the non-overtaking rule keeps
// a fast peer's next-round message behind the previous one.
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "api/coll_common.h"
#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/persistent_coll.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "api/topo_internal.h"
#include "coll/schedule.h"

using loom::Comm;
using loom::CountArray;
using loom::Datatype;
using loom::errorf;
using loom::ProcTopology;
using loom::Request;
using loom::Status;
using loom::api::raise;

namespace {

// One message of the exchange.
struct Block {
  char* buf;
  int64_t count;
  Datatype* type;
  int peer;  // may be MPI_PROC_NULL
};

struct Exchange {
  Comm* comm = nullptr;
  std::vector<Block> recvs;  // in posting order
  std::vector<Block> sends;  // in posting order

  std::vector<Datatype*> userTypes() const {
    std::vector<Datatype*> v;
    for (const auto* list : {&recvs, &sends})
      for (const Block& b : *list)
        if (!b.type->isPredefined()) v.push_back(b.type);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }
};

Status startExchange(const Exchange& x, int tag, Request** out) {
  auto s = std::make_unique<loom::coll::Schedule>(x.comm, tag);
  for (const Block& b : x.recvs)
    if (b.peer != MPI_PROC_NULL) s->recv(b.buf, b.count, b.type, b.peer);
  for (const Block& b : x.sends)
    if (b.peer != MPI_PROC_NULL) s->send(b.buf, b.count, b.type, b.peer);
  return loom::coll::Schedule::start(std::move(s), out);
}

// The persistent plan: the exchange, its tag, and references on the
// communicator and the user's datatypes for as long as the request lives.
class NeighborPlan final : public loom::api::PersistentColl {
 public:
  NeighborPlan(Exchange x, int tag) : x_(std::move(x)), tag_(tag) {
    hold_.comm = x_.comm;
    x_.comm->retain();
    hold_.types = x_.userTypes();
    for (Datatype* t : hold_.types) t->retain();
  }
  ~NeighborPlan() override { hold_.release(); }

  Status start(Request* user) override {
    Request* inner = nullptr;
    Status st = startExchange(x_, tag_, &inner);
    if (!st.isOk()) {
      if (inner) Request::release(inner);
      return st;
    }
    loom::api::completeFrom(inner, user);
    return Status::ok();
  }

 private:
  Exchange x_;
  int tag_;
  loom::api::CollHold hold_;
};

enum class Mode { kBlocking, kNonblocking, kPersistent };

int runExchange(Exchange x, Mode mode, MPI_Request* request, const char* fn) {
  Comm* c = x.comm;
  if (mode == Mode::kPersistent) {
    auto* plan = new NeighborPlan(std::move(x), c->nextCollectiveTag());
    *request = loom::api::toHandle(loom::api::newPersistentColl(c, plan));
    return MPI_SUCCESS;
  }
  const int tag = c->nextCollectiveTag();
  Request* r = nullptr;
  Status st = startExchange(x, tag, &r);
  if (!st.isOk()) {
    if (r) Request::release(r);
    return raise(c, st, fn);
  }
  if (mode == Mode::kBlocking) return loom::api::waitCollective(r, c, fn);
  // Nonblocking: the communicator and datatypes stay alive until it is done
  // (the user may free them as soon as this returns).
  if (!r->complete) {
    auto* hold = new loom::api::CollHold;
    hold->comm = c;
    c->retain();
    hold->types = x.userTypes();
    for (Datatype* t : hold->types) t->retain();
    r->owner = hold;
    r->onComplete = loom::api::releaseCollHold;
  }
  *request = loom::api::toHandle(r);
  return MPI_SUCCESS;
}

// ---- Argument checks --------------------------------------------------------

Status checkType(MPI_Datatype h, Datatype** out) {
  *out = loom::api::toDatatype(h);
  if (!*out) return errorf(MPI_ERR_TYPE, "invalid datatype");
  if (!(*out)->isCommitted()) return errorf(MPI_ERR_TYPE, "datatype is not committed");
  return Status::ok();
}

// One (buf, count, type) of the call; the buffer only matters when some
// neighbour uses it (`used`).
Status checkBlock(const void* buf, int64_t count, MPI_Datatype h, bool used, Datatype** out) {
  if (count < 0) return errorf(MPI_ERR_COUNT, "count=%lld < 0", static_cast<long long>(count));
  LOOM_TRY(checkType(h, out));
  if (buf == MPI_IN_PLACE)
    return errorf(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in neighbourhood collectives");
  if (used) LOOM_TRY(loom::api::checkData(buf, count, *out));
  return Status::ok();
}

// The v and w forms check each block at its own address (MPI_BOTTOM plus a
// displacement), so MPI_IN_PLACE is refused on the base buffers first.
Status notInPlace(const void* sbuf, const void* rbuf) {
  if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
    return errorf(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in neighbourhood collectives");
  return Status::ok();
}

// `a` and `b`: pointers or CountArray views (NULL when not given).
template <class A, class B>
Status checkArrays(size_t degree, const A& a, const B& b, const char* what) {
  if (degree > 0 && (!a || !b)) return errorf(MPI_ERR_ARG, "%s is NULL", what);
  return Status::ok();
}

// Where each send block is posted: block order, except that a Cartesian
// dimension posts its +1 block before its -1 block (see the file comment).
std::vector<size_t> sendOrder(const ProcTopology& t, size_t n) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (t.kind == ProcTopology::Kind::kCart)
    for (size_t i = 0; i + 1 < n; i += 2) std::swap(order[i], order[i + 1]);
  return order;
}

char* at(const void* buf, int64_t bytes) {
  return static_cast<char*>(const_cast<void*>(buf)) + bytes;
}

// The common frame: running library, valid communicator, request, a
// topology; then `fill` checks the rest and lists the blocks.
template <class Fill>
int entry(const char* fn, MPI_Comm comm, Mode mode, MPI_Request* request, Fill&& fill) {
  if (!loom::api::requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = loom::api::toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (mode != Mode::kBlocking && !request)
    return raise(c, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  const ProcTopology* t;
  Status st = loom::api::needTopo(c, &t);
  Exchange x;
  x.comm = c;
  if (st.isOk()) {
    const std::vector<int> in = t->inNeighbors(c->rank());
    const std::vector<int> out = t->outNeighbors(c->rank());
    st = fill(in, out, sendOrder(*t, out.size()), x);
  }
  if (!st.isOk()) return raise(c, st, fn);
  return runExchange(std::move(x), mode, request, fn);
}

using Peers = std::vector<int>;
using Order = std::vector<size_t>;

// ---- The five collectives ----------------------------------------------------

int allgather(const char* fn, Mode mode, const void* sbuf, int64_t scount, MPI_Datatype stype,
              void* rbuf, int64_t rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return entry(fn, comm, mode, req, [&](const Peers& in, const Peers& out, const Order& order,
                                        Exchange& x) -> Status {
    Datatype *st, *rt;
    LOOM_TRY(checkBlock(sbuf, scount, stype, !out.empty(), &st));
    LOOM_TRY(checkBlock(rbuf, rcount, rtype, !in.empty(), &rt));
    for (size_t i = 0; i < in.size(); ++i)
      x.recvs.push_back({at(rbuf, static_cast<int64_t>(i) * rcount * rt->extent()), rcount, rt,
                         in[i]});
    for (size_t j : order) x.sends.push_back({at(sbuf, 0), scount, st, out[j]});
    return Status::ok();
  });
}

int allgatherv(const char* fn, Mode mode, const void* sbuf, int64_t scount, MPI_Datatype stype,
               void* rbuf, CountArray rcounts, CountArray displs, MPI_Datatype rtype,
               MPI_Comm comm, MPI_Request* req) {
  return entry(fn, comm, mode, req, [&](const Peers& in, const Peers& out, const Order& order,
                                        Exchange& x) -> Status {
    LOOM_TRY(notInPlace(sbuf, rbuf));
    Datatype *st, *rt;
    LOOM_TRY(checkBlock(sbuf, scount, stype, !out.empty(), &st));
    LOOM_TRY(checkArrays(in.size(), rcounts, displs, "recvcounts or displs"));
    LOOM_TRY(checkType(rtype, &rt));
    for (size_t i = 0; i < in.size(); ++i) {
      // The block's own address is checked: MPI_BOTTOM plus a displacement.
      LOOM_TRY(checkBlock(at(rbuf, displs[i] * rt->extent()), rcounts[i], rtype, true, &rt));
      x.recvs.push_back({at(rbuf, displs[i] * rt->extent()), rcounts[i], rt, in[i]});
    }
    for (size_t j : order) x.sends.push_back({at(sbuf, 0), scount, st, out[j]});
    return Status::ok();
  });
}

int alltoall(const char* fn, Mode mode, const void* sbuf, int64_t scount, MPI_Datatype stype,
             void* rbuf, int64_t rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return entry(fn, comm, mode, req, [&](const Peers& in, const Peers& out, const Order& order,
                                        Exchange& x) -> Status {
    Datatype *st, *rt;
    LOOM_TRY(checkBlock(sbuf, scount, stype, !out.empty(), &st));
    LOOM_TRY(checkBlock(rbuf, rcount, rtype, !in.empty(), &rt));
    for (size_t i = 0; i < in.size(); ++i)
      x.recvs.push_back({at(rbuf, static_cast<int64_t>(i) * rcount * rt->extent()), rcount, rt,
                         in[i]});
    for (size_t j : order)
      x.sends.push_back({at(sbuf, static_cast<int64_t>(j) * scount * st->extent()), scount, st,
                         out[j]});
    return Status::ok();
  });
}

int alltoallv(const char* fn, Mode mode, const void* sbuf, CountArray scounts, CountArray sdispls,
              MPI_Datatype stype, void* rbuf, CountArray rcounts, CountArray rdispls,
              MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return entry(fn, comm, mode, req, [&](const Peers& in, const Peers& out, const Order& order,
                                        Exchange& x) -> Status {
    LOOM_TRY(notInPlace(sbuf, rbuf));
    Datatype *st, *rt;
    LOOM_TRY(checkArrays(out.size(), scounts, sdispls, "sendcounts or sdispls"));
    LOOM_TRY(checkArrays(in.size(), rcounts, rdispls, "recvcounts or rdispls"));
    LOOM_TRY(checkType(stype, &st));
    LOOM_TRY(checkType(rtype, &rt));
    for (size_t i = 0; i < in.size(); ++i) {
      LOOM_TRY(checkBlock(at(rbuf, rdispls[i] * rt->extent()), rcounts[i], rtype, true, &rt));
      x.recvs.push_back({at(rbuf, rdispls[i] * rt->extent()), rcounts[i], rt, in[i]});
    }
    for (size_t j = 0; j < out.size(); ++j)
      LOOM_TRY(checkBlock(at(sbuf, sdispls[j] * st->extent()), scounts[j], stype, true, &st));
    for (size_t j : order)
      x.sends.push_back({at(sbuf, sdispls[j] * st->extent()), scounts[j], st, out[j]});
    return Status::ok();
  });
}

int alltoallw(const char* fn, Mode mode, const void* sbuf, CountArray scounts,
              const MPI_Aint* sdispls, const MPI_Datatype* stypes, void* rbuf, CountArray rcounts,
              const MPI_Aint* rdispls, const MPI_Datatype* rtypes, MPI_Comm comm,
              MPI_Request* req) {
  return entry(fn, comm, mode, req, [&](const Peers& in, const Peers& out, const Order& order,
                                        Exchange& x) -> Status {
    LOOM_TRY(notInPlace(sbuf, rbuf));
    LOOM_TRY(checkArrays(out.size(), scounts, sdispls, "sendcounts or sdispls"));
    LOOM_TRY(checkArrays(out.size(), stypes, stypes, "sendtypes"));
    LOOM_TRY(checkArrays(in.size(), rcounts, rdispls, "recvcounts or rdispls"));
    LOOM_TRY(checkArrays(in.size(), rtypes, rtypes, "recvtypes"));
    for (size_t i = 0; i < in.size(); ++i) {
      Datatype* rt;
      LOOM_TRY(checkBlock(at(rbuf, rdispls[i]), rcounts[i], rtypes[i], true, &rt));
      x.recvs.push_back({at(rbuf, rdispls[i]), rcounts[i], rt, in[i]});
    }
    std::vector<Datatype*> st(out.size());
    for (size_t j = 0; j < out.size(); ++j)
      LOOM_TRY(checkBlock(at(sbuf, sdispls[j]), scounts[j], stypes[j], true, &st[j]));
    for (size_t j : order) x.sends.push_back({at(sbuf, sdispls[j]), scounts[j], st[j], out[j]});
    return Status::ok();
  });
}

}  // namespace

// ---- Entry points ---------------------------------------------------------------
// Each MPI_Foo is followed by its large-count MPI_Foo_c (MPI_Count counts,
// MPI_Aint displacements), a call into the same helper (api/large_count.h).
// The info argument of the _init forms carries no hint Loom uses.

#define NB_ALLGATHER_ARGS                                                                  \
  const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, \
      MPI_Datatype recvtype, MPI_Comm comm
#define NB_ALLGATHER_ARGS_C                                                       \
  const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, \
      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm
#define NB_ALLGATHER_PASS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm

extern "C" int PMPI_Neighbor_allgather(NB_ALLGATHER_ARGS) {
  return allgather("MPI_Neighbor_allgather", Mode::kBlocking, NB_ALLGATHER_PASS, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_allgather)
LOOM_LARGE_COUNT(Neighbor_allgather, (NB_ALLGATHER_ARGS_C),
                 (allgather("MPI_Neighbor_allgather_c", Mode::kBlocking, NB_ALLGATHER_PASS,
                            nullptr)))

extern "C" int PMPI_Ineighbor_allgather(NB_ALLGATHER_ARGS, MPI_Request* request) {
  return allgather("MPI_Ineighbor_allgather", Mode::kNonblocking, NB_ALLGATHER_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Ineighbor_allgather)
LOOM_LARGE_COUNT(Ineighbor_allgather, (NB_ALLGATHER_ARGS_C, MPI_Request* request),
                 (allgather("MPI_Ineighbor_allgather_c", Mode::kNonblocking, NB_ALLGATHER_PASS,
                            request)))

extern "C" int PMPI_Neighbor_allgather_init(NB_ALLGATHER_ARGS, MPI_Info info,
                                            MPI_Request* request) {
  (void)info;
  return allgather("MPI_Neighbor_allgather_init", Mode::kPersistent, NB_ALLGATHER_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_allgather_init)
LOOM_LARGE_COUNT(Neighbor_allgather_init,
                 (NB_ALLGATHER_ARGS_C, MPI_Info info, MPI_Request* request),
                 ((void)info, allgather("MPI_Neighbor_allgather_init_c", Mode::kPersistent,
                                        NB_ALLGATHER_PASS, request)))

extern "C" int PMPI_Neighbor_alltoall(NB_ALLGATHER_ARGS) {
  return alltoall("MPI_Neighbor_alltoall", Mode::kBlocking, NB_ALLGATHER_PASS, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_alltoall)
LOOM_LARGE_COUNT(Neighbor_alltoall, (NB_ALLGATHER_ARGS_C),
                 (alltoall("MPI_Neighbor_alltoall_c", Mode::kBlocking, NB_ALLGATHER_PASS, nullptr)))

extern "C" int PMPI_Ineighbor_alltoall(NB_ALLGATHER_ARGS, MPI_Request* request) {
  return alltoall("MPI_Ineighbor_alltoall", Mode::kNonblocking, NB_ALLGATHER_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Ineighbor_alltoall)
LOOM_LARGE_COUNT(Ineighbor_alltoall, (NB_ALLGATHER_ARGS_C, MPI_Request* request),
                 (alltoall("MPI_Ineighbor_alltoall_c", Mode::kNonblocking, NB_ALLGATHER_PASS,
                           request)))

extern "C" int PMPI_Neighbor_alltoall_init(NB_ALLGATHER_ARGS, MPI_Info info, MPI_Request* request) {
  (void)info;
  return alltoall("MPI_Neighbor_alltoall_init", Mode::kPersistent, NB_ALLGATHER_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_alltoall_init)
LOOM_LARGE_COUNT(Neighbor_alltoall_init, (NB_ALLGATHER_ARGS_C, MPI_Info info, MPI_Request* request),
                 ((void)info, alltoall("MPI_Neighbor_alltoall_init_c", Mode::kPersistent,
                                       NB_ALLGATHER_PASS, request)))
#undef NB_ALLGATHER_ARGS
#undef NB_ALLGATHER_ARGS_C
#undef NB_ALLGATHER_PASS

#define NB_ALLGATHERV_ARGS                                                  \
  const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, \
      const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm
#define NB_ALLGATHERV_ARGS_C                                                      \
  const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, \
      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm
#define NB_ALLGATHERV_PASS sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm

extern "C" int PMPI_Neighbor_allgatherv(NB_ALLGATHERV_ARGS) {
  return allgatherv("MPI_Neighbor_allgatherv", Mode::kBlocking, NB_ALLGATHERV_PASS, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_allgatherv)
LOOM_LARGE_COUNT(Neighbor_allgatherv, (NB_ALLGATHERV_ARGS_C),
                 (allgatherv("MPI_Neighbor_allgatherv_c", Mode::kBlocking, NB_ALLGATHERV_PASS,
                             nullptr)))

extern "C" int PMPI_Ineighbor_allgatherv(NB_ALLGATHERV_ARGS, MPI_Request* request) {
  return allgatherv("MPI_Ineighbor_allgatherv", Mode::kNonblocking, NB_ALLGATHERV_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Ineighbor_allgatherv)
LOOM_LARGE_COUNT(Ineighbor_allgatherv, (NB_ALLGATHERV_ARGS_C, MPI_Request* request),
                 (allgatherv("MPI_Ineighbor_allgatherv_c", Mode::kNonblocking, NB_ALLGATHERV_PASS,
                             request)))

extern "C" int PMPI_Neighbor_allgatherv_init(NB_ALLGATHERV_ARGS, MPI_Info info,
                                             MPI_Request* request) {
  (void)info;
  return allgatherv("MPI_Neighbor_allgatherv_init", Mode::kPersistent, NB_ALLGATHERV_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_allgatherv_init)
LOOM_LARGE_COUNT(Neighbor_allgatherv_init,
                 (NB_ALLGATHERV_ARGS_C, MPI_Info info, MPI_Request* request),
                 ((void)info, allgatherv("MPI_Neighbor_allgatherv_init_c", Mode::kPersistent,
                                         NB_ALLGATHERV_PASS, request)))
#undef NB_ALLGATHERV_ARGS
#undef NB_ALLGATHERV_ARGS_C
#undef NB_ALLGATHERV_PASS

#define NB_ALLTOALLV_ARGS                                                                  \
  const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, \
      void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,   \
      MPI_Comm comm
#define NB_ALLTOALLV_ARGS_C                                                    \
  const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], \
      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],      \
      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm
#define NB_ALLTOALLV_PASS \
  sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm

extern "C" int PMPI_Neighbor_alltoallv(NB_ALLTOALLV_ARGS) {
  return alltoallv("MPI_Neighbor_alltoallv", Mode::kBlocking, NB_ALLTOALLV_PASS, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_alltoallv)
LOOM_LARGE_COUNT(Neighbor_alltoallv, (NB_ALLTOALLV_ARGS_C),
                 (alltoallv("MPI_Neighbor_alltoallv_c", Mode::kBlocking, NB_ALLTOALLV_PASS,
                            nullptr)))

extern "C" int PMPI_Ineighbor_alltoallv(NB_ALLTOALLV_ARGS, MPI_Request* request) {
  return alltoallv("MPI_Ineighbor_alltoallv", Mode::kNonblocking, NB_ALLTOALLV_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Ineighbor_alltoallv)
LOOM_LARGE_COUNT(Ineighbor_alltoallv, (NB_ALLTOALLV_ARGS_C, MPI_Request* request),
                 (alltoallv("MPI_Ineighbor_alltoallv_c", Mode::kNonblocking, NB_ALLTOALLV_PASS,
                            request)))

extern "C" int PMPI_Neighbor_alltoallv_init(NB_ALLTOALLV_ARGS, MPI_Info info,
                                            MPI_Request* request) {
  (void)info;
  return alltoallv("MPI_Neighbor_alltoallv_init", Mode::kPersistent, NB_ALLTOALLV_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_alltoallv_init)
LOOM_LARGE_COUNT(Neighbor_alltoallv_init,
                 (NB_ALLTOALLV_ARGS_C, MPI_Info info, MPI_Request* request),
                 ((void)info, alltoallv("MPI_Neighbor_alltoallv_init_c", Mode::kPersistent,
                                        NB_ALLTOALLV_PASS, request)))
#undef NB_ALLTOALLV_ARGS
#undef NB_ALLTOALLV_ARGS_C
#undef NB_ALLTOALLV_PASS

#define NB_ALLTOALLW_ARGS                                                    \
  const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],     \
      const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], \
      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm
#define NB_ALLTOALLW_ARGS_C                                                        \
  const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],     \
      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], \
      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm
#define NB_ALLTOALLW_PASS \
  sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm

extern "C" int PMPI_Neighbor_alltoallw(NB_ALLTOALLW_ARGS) {
  return alltoallw("MPI_Neighbor_alltoallw", Mode::kBlocking, NB_ALLTOALLW_PASS, nullptr);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_alltoallw)
LOOM_LARGE_COUNT(Neighbor_alltoallw, (NB_ALLTOALLW_ARGS_C),
                 (alltoallw("MPI_Neighbor_alltoallw_c", Mode::kBlocking, NB_ALLTOALLW_PASS,
                            nullptr)))

extern "C" int PMPI_Ineighbor_alltoallw(NB_ALLTOALLW_ARGS, MPI_Request* request) {
  return alltoallw("MPI_Ineighbor_alltoallw", Mode::kNonblocking, NB_ALLTOALLW_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Ineighbor_alltoallw)
LOOM_LARGE_COUNT(Ineighbor_alltoallw, (NB_ALLTOALLW_ARGS_C, MPI_Request* request),
                 (alltoallw("MPI_Ineighbor_alltoallw_c", Mode::kNonblocking, NB_ALLTOALLW_PASS,
                            request)))

extern "C" int PMPI_Neighbor_alltoallw_init(NB_ALLTOALLW_ARGS, MPI_Info info,
                                            MPI_Request* request) {
  (void)info;
  return alltoallw("MPI_Neighbor_alltoallw_init", Mode::kPersistent, NB_ALLTOALLW_PASS, request);
}
LOOM_WEAK_ALIAS(MPI_Neighbor_alltoallw_init)
LOOM_LARGE_COUNT(Neighbor_alltoallw_init,
                 (NB_ALLTOALLW_ARGS_C, MPI_Info info, MPI_Request* request),
                 ((void)info, alltoallw("MPI_Neighbor_alltoallw_init_c", Mode::kPersistent,
                                        NB_ALLTOALLW_PASS, request)))
#undef NB_ALLTOALLW_ARGS
#undef NB_ALLTOALLW_ARGS_C
#undef NB_ALLTOALLW_PASS
