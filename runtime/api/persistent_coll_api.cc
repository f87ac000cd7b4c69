// Persistent collectives (MPI 5.0 §6.13): MPI_Barrier_init, MPI_Bcast_init,
// MPI_(All)gather(v)_init, MPI_Scatter(v)_init, MPI_Alltoall(v,w)_init,
// MPI_(All)reduce_init, MPI_Reduce_scatter(_block)_init, MPI_(Ex)scan_init,
// and their large-count _c forms (all but the barrier).
//
// An init call goes through the same helper as the blocking and MPI_I*
// forms (coll_entry.h): the same argument checks, in the same order, with
// the same error classes. Where those forms would start the collective, the
// persistent form builds a plan (CollPlan below) from the checked CollArgs
// and returns an inactive request (persistent_coll.h). Each MPI_Start hands
// the plan's CollArgs to coll::run, which selects the algorithm for it and
// starts its schedule, exactly as for MPI_I*; the schedule's completion
// completes the user's request.
//
// Tags. The init call is collective, so it draws the communicator's next
// collective tag, the same on every rank, and every activation of the
// request uses it. Activations of different persistent requests, and other
// collectives on the communicator, therefore never exchange messages with
// one another, whatever order the ranks start them in. One tag for every
// activation of one request is safe: a rank starts activation k+1 only after
// its activation k completed, so it sent every message of k first, and
// messages between two ranks do not overtake one another. (The tag space
// wraps after 2^22 collective calls; a request that lives that long shares
// its tag with a later call.) Because activations are not ordered with the
// communicator's other calls, only message-based algorithms run them: the
// shared-memory ones keep step with the communicator's call sequence
// (CollArgs::persistent).
//
// Lifetimes. The plan holds the communicator, every user datatype and a user
// op until MPI_Request_free, and copies of the count, displacement and type
// arrays (the standard forbids changing them while the request exists; a
// copy costs little and makes that harmless). Buffers are the user's: their
// contents are read at each MPI_Start, so data changed between activations
// is what the next one moves.
#include <mpi.h>

#include <vector>

#include "api/coll_common.h"
#include "api/coll_entry.h"
#include "api/large_count.h"
#include "api/inter_comm.h"
#include "api/persistent_coll.h"
#include "api/runtime.h"
#include "coll/op.h"

using loom::Comm;
using loom::Datatype;
using loom::Request;
using loom::Status;
using loom::errorf;
using loom::api::CollMode;
using loom::api::raise;
using loom::coll::CollArgs;
using loom::coll::Collective;

namespace {

// The count/displacement arrays widened to int64_t (the int and the _c
// forms alike): the user's arrays may change after the init call.
std::vector<int64_t> copyCounts(loom::CountArray a, int n) {
  std::vector<int64_t> v;
  if (a)
    for (int i = 0; i < n; ++i) v.push_back(a[i]);
  return v;
}
std::vector<Datatype*> copyTypes(Datatype* const* a, int n) {
  return a ? std::vector<Datatype*>(a, a + n) : std::vector<Datatype*>();
}
template <class T>
const T* dataOrNull(const std::vector<T>& v) {
  return v.empty() ? nullptr : v.data();
}

class CollPlan final : public loom::api::PersistentColl {
 public:
  CollPlan(const CollArgs& a, int tag)
      : args_(a),
        sendCounts_(copyCounts(a.sendCounts, a.comm->size())),
        sendDispls_(copyCounts(a.sendDispls, a.comm->size())),
        recvCounts_(copyCounts(a.recvCounts, a.comm->size())),
        recvDispls_(copyCounts(a.recvDispls, a.comm->size())),
        sendTypes_(copyTypes(a.sendTypes, a.comm->size())),
        recvTypes_(copyTypes(a.recvTypes, a.comm->size())) {
    // Point at the copies; an array the caller passed stays non-null even
    // for a zero-rank count (there is none: size >= 1).
    if (a.sendCounts) args_.sendCounts = sendCounts_.data();
    if (a.sendDispls) args_.sendDispls = sendDispls_.data();
    if (a.recvCounts) args_.recvCounts = recvCounts_.data();
    if (a.recvDispls) args_.recvDispls = recvDispls_.data();
    if (a.sendTypes) args_.sendTypes = sendTypes_.data();
    if (a.recvTypes) args_.recvTypes = recvTypes_.data();
    args_.blocking = false;
    args_.persistent = true;
    args_.tag = tag;
    args_.call = 0;
    hold_ = loom::api::holdCollArgs(args_);
    if (args_.op && !args_.op->isPredefined()) args_.op->retain();
  }
  ~CollPlan() override {
    if (args_.op && !args_.op->isPredefined()) args_.op->release();
    hold_->release();
    delete hold_;
  }

  Status start(Request* user) override {
    Request* inner = nullptr;
    Status st = loom::coll::run(args_, &inner);
    if (!st.isOk()) {
      if (inner) Request::release(inner);
      return st;
    }
    if (!inner) return errorf(MPI_ERR_INTERN, "the collective returned no request");
    loom::api::completeFrom(inner, user);
    return Status::ok();
  }

 private:
  CollArgs args_;
  std::vector<int64_t> sendCounts_, sendDispls_, recvCounts_, recvDispls_;
  std::vector<Datatype*> sendTypes_, recvTypes_;
  loom::api::CollHold* hold_ = nullptr;
};

}  // namespace

namespace loom::api {

int initPersistentCollective(const CollArgs& a, MPI_Request* request, const char* fn) {
  (void)fn;
  auto* plan = new CollPlan(a, a.comm->nextCollectiveTag());
  *request = toHandle(newPersistentColl(a.comm, plan));
  return MPI_SUCCESS;
}

}  // namespace loom::api

// ---- Entry points -------------------------------------------------------------
// The info argument carries no hint Loom uses; it is accepted and ignored.
// Each MPI_Foo_init is followed by its large-count MPI_Foo_init_c (MPI_Count
// counts, MPI_Aint displacements): a call into the same helper
// (api/large_count.h), whose plan keeps the arrays as int64_t either way.

namespace ce = loom::api::collentry;
constexpr CollMode kP = CollMode::kPersistent;

extern "C" int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  (void)info;
  const char* fn = "MPI_Barrier_init";
  if (!loom::api::requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = loom::api::toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (!request) return raise(c, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  if (c->isInter()) return loom::api::interBarrier(c, request, CollMode::kPersistent, fn);
  CollArgs a;
  a.coll = Collective::kBarrier;
  a.comm = c;
  return loom::api::initPersistentCollective(a, request, fn);
}
LOOM_WEAK_ALIAS(MPI_Barrier_init)

extern "C" int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root,
                               MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::bcast("MPI_Bcast_init", buffer, count, datatype, root, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Bcast_init)
LOOM_LARGE_COUNT(Bcast_init,
                 (void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Info info, MPI_Request* request),
                 ((void)info,
                  ce::bcast("MPI_Bcast_init_c", buffer, count, datatype, root, comm, kP, request)))

extern "C" int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::gather("MPI_Gather_init", Collective::kGather, sendbuf, sendcount, sendtype, recvbuf,
                    recvcount, nullptr, nullptr, recvtype, root, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Gather_init)
LOOM_LARGE_COUNT(Gather_init,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Info info, MPI_Request* request),
                 ((void)info, ce::gather("MPI_Gather_init_c", Collective::kGather, sendbuf,
                                         sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                         recvtype, root, comm, kP, request)))

extern "C" int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  (void)info;
  return ce::gather("MPI_Gatherv_init", Collective::kGatherv, sendbuf, sendcount, sendtype, recvbuf,
                    0, recvcounts, displs, recvtype, root, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Gatherv_init)
LOOM_LARGE_COUNT(Gatherv_init,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, ce::gather("MPI_Gatherv_init_c", Collective::kGatherv, sendbuf,
                                         sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                                         recvtype, root, comm, kP, request)))

extern "C" int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::scatter("MPI_Scatter_init", Collective::kScatter, sendbuf, sendcount, nullptr, nullptr,
                     sendtype, recvbuf, recvcount, recvtype, root, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Scatter_init)
LOOM_LARGE_COUNT(Scatter_init,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Info info, MPI_Request* request),
                 ((void)info, ce::scatter("MPI_Scatter_init_c", Collective::kScatter, sendbuf,
                                          sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount,
                                          recvtype, root, comm, kP, request)))

extern "C" int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                                  MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  (void)info;
  return ce::scatter("MPI_Scatterv_init", Collective::kScatterv, sendbuf, 0, sendcounts, displs,
                     sendtype, recvbuf, recvcount, recvtype, root, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Scatterv_init)
LOOM_LARGE_COUNT(Scatterv_init,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                  MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, ce::scatter("MPI_Scatterv_init_c", Collective::kScatterv, sendbuf, 0,
                                          sendcounts, displs, sendtype, recvbuf, recvcount,
                                          recvtype, root, comm, kP, request)))

extern "C" int PMPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::allgather("MPI_Allgather_init", Collective::kAllgather, sendbuf, sendcount, sendtype,
                       recvbuf, recvcount, nullptr, nullptr, recvtype, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Allgather_init)
LOOM_LARGE_COUNT(Allgather_init,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                  MPI_Request* request),
                 ((void)info, ce::allgather("MPI_Allgather_init_c", Collective::kAllgather, sendbuf,
                                            sendcount, sendtype, recvbuf, recvcount, nullptr,
                                            nullptr, recvtype, comm, kP, request)))

extern "C" int PMPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request* request) {
  (void)info;
  return ce::allgather("MPI_Allgatherv_init", Collective::kAllgatherv, sendbuf, sendcount, sendtype,
                       recvbuf, 0, recvcounts, displs, recvtype, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Allgatherv_init)
LOOM_LARGE_COUNT(Allgatherv_init,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, ce::allgather("MPI_Allgatherv_init_c", Collective::kAllgatherv,
                                            sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                                            displs, recvtype, comm, kP, request)))

extern "C" int PMPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::alltoall("MPI_Alltoall_init", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Alltoall_init)
LOOM_LARGE_COUNT(Alltoall_init,
                 (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                  MPI_Request* request),
                 ((void)info, ce::alltoall("MPI_Alltoall_init_c", sendbuf, sendcount, sendtype,
                                           recvbuf, recvcount, recvtype, comm, kP, request)))

extern "C" int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::alltoallv("MPI_Alltoallv_init", sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                       recvcounts, rdispls, recvtype, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Alltoallv_init)
LOOM_LARGE_COUNT(Alltoallv_init,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                  const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                  MPI_Request* request),
                 ((void)info,
                  ce::alltoallv("MPI_Alltoallv_init_c", sendbuf, sendcounts, sdispls, sendtype,
                                recvbuf, recvcounts, rdispls, recvtype, comm, kP, request)))

extern "C" int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   const MPI_Datatype sendtypes[], void* recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  (void)info;
  return ce::alltoallw("MPI_Alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                       recvcounts, rdispls, recvtypes, comm, kP, request);
}
LOOM_WEAK_ALIAS(MPI_Alltoallw_init)
LOOM_LARGE_COUNT(Alltoallw_init,
                 (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                  MPI_Info info, MPI_Request* request),
                 ((void)info,
                  ce::alltoallw("MPI_Alltoallw_init_c", sendbuf, sendcounts, sdispls, sendtypes,
                                recvbuf, recvcounts, rdispls, recvtypes, comm, kP, request)))

extern "C" int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::reduce(sendbuf, recvbuf, count, datatype, op, root, comm, kP, request,
                    "MPI_Reduce_init");
}
LOOM_WEAK_ALIAS(MPI_Reduce_init)
LOOM_LARGE_COUNT(Reduce_init,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, ce::reduce(sendbuf, recvbuf, count, datatype, op, root, comm, kP,
                                         request, "MPI_Reduce_init_c")))

extern "C" int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  (void)info;
  return ce::allLike(Collective::kAllreduce, sendbuf, recvbuf, count, datatype, op, comm, kP,
                     request, "MPI_Allreduce_init");
}
LOOM_WEAK_ALIAS(MPI_Allreduce_init)
LOOM_LARGE_COUNT(Allreduce_init,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, ce::allLike(Collective::kAllreduce, sendbuf, recvbuf, count, datatype,
                                          op, comm, kP, request, "MPI_Allreduce_init_c")))

extern "C" int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::allLike(Collective::kScan, sendbuf, recvbuf, count, datatype, op, comm, kP, request,
                     "MPI_Scan_init");
}
LOOM_WEAK_ALIAS(MPI_Scan_init)
LOOM_LARGE_COUNT(Scan_init,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, ce::allLike(Collective::kScan, sendbuf, recvbuf, count, datatype, op,
                                          comm, kP, request, "MPI_Scan_init_c")))

extern "C" int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  (void)info;
  return ce::allLike(Collective::kExscan, sendbuf, recvbuf, count, datatype, op, comm, kP, request,
                     "MPI_Exscan_init");
}
LOOM_WEAK_ALIAS(MPI_Exscan_init)
LOOM_LARGE_COUNT(Exscan_init,
                 (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, ce::allLike(Collective::kExscan, sendbuf, recvbuf, count, datatype,
                                          op, comm, kP, request, "MPI_Exscan_init_c")))

extern "C" int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                        MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::reduceScatter(false, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, kP, request,
                           "MPI_Reduce_scatter_init");
}
LOOM_WEAK_ALIAS(MPI_Reduce_scatter_init)
LOOM_LARGE_COUNT(Reduce_scatter_init,
                 (const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                  MPI_Request* request),
                 ((void)info,
                  ce::reduceScatter(false, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, kP,
                                    request, "MPI_Reduce_scatter_init_c")))

extern "C" int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                              MPI_Info info, MPI_Request* request) {
  (void)info;
  return ce::reduceScatter(true, sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm, kP,
                           request, "MPI_Reduce_scatter_block_init");
}
LOOM_WEAK_ALIAS(MPI_Reduce_scatter_block_init)
LOOM_LARGE_COUNT(Reduce_scatter_block_init,
                 (const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info,
                  ce::reduceScatter(true, sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm,
                                    kP, request, "MPI_Reduce_scatter_block_init_c")))
