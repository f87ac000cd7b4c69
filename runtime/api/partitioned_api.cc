// Partitioned point-to-point (MPI 5.0 §4): MPI_Psend_init, MPI_Precv_init,
// MPI_Pready, MPI_Pready_range, MPI_Pready_list, MPI_Parrived; the
// large-count MPI_Psend_init_c and MPI_Precv_init_c share the init code.
//
// Matching. MPI matches a partitioned send with a partitioned receive once,
// by the order of the initialization calls on each side (for the same
// communicator, peers and tag), not by the order of MPI_Start or
// MPI_Pready. So MPI_Psend_init sends a small setup message to the
// destination at once, on the collective channel with tag kPartTagBase +
// the user's tag (negative: never an ordinary message), carrying a
// data tag that this sender drew for the pair. MPI_Precv_init posts the
// receive of a setup message right away: receives of one source and tag
// match in the order they were posted and messages of one pair do not
// overtake, so the n-th receive init meets the n-th send init. Every
// round's data then travels with the drawn data tag, which no other request
// of this sender uses.
//
// Rounds. One message per round: a partitioned send sends its whole buffer
// (partitions * count elements) once every partition of the round has been
// marked ready; a partitioned receive posts one receive of its whole buffer
// when started (or, when its setup message has not arrived yet, as soon as it
// does: a progress poller waits for it). So every partition arrives at once,
// and MPI_Parrived reports all of them arrived when the receive has
// completed. The two sides may split the buffer into different numbers of
// partitions: only the total type signature must match, as the standard
// requires. The receive's status names the source and the user's tag.
//
// The requests reuse the persistent-collective machinery
// (persistent_coll.h): a kColl persistent request whose plan is a
// PartPlan; MPI_Start runs PartPlan::start, MPI_Wait/Test complete it,
// MPI_Request_free frees it (an active one when its round finishes).
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "api/comm_internal.h"
#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/persistent_coll.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "coll/move_util.h"
#include "core/progress.h"
#include "p2p/p2p.h"

using loom::Channel;
using loom::Comm;
using loom::Datatype;
using loom::Request;
using loom::SendMode;
using loom::Status;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;

namespace {

// Setup messages: INT32_MIN + the user's tag, negative tags that nothing
// else sends (user tags are 0..MPI_TAG_UB, MPI_Intercomm_create's leaders
// use 2^30 + tag on the same channel) and that no receive on the collective
// channel takes by MPI_ANY_TAG.
constexpr int kPartTagBase = INT32_MIN;
// Data tags: above the collective channel's call tags and internal helper
// tags (below 0x800000), below the setup tags.
constexpr uint32_t kDataTagBase = 0x1000000;
constexpr uint32_t kDataTagSpan = (1u << 30) - kDataTagBase;

// What a setup message carries.
struct Setup {
  int32_t dataTag;
  int32_t pad;
};

class PartPlan;
void waitForSetup(PartPlan* plan);
void stopWaiting(PartPlan* plan);

class PartPlan final : public loom::api::PersistentColl {
 public:
  PartPlan(bool send, void* buf, int partitions, int64_t count, Datatype* type, int peer, int tag,
           Comm* comm)
      : send_(send), buf_(buf), partitions_(partitions), count_(count), type_(type), peer_(peer),
        userTag_(tag), comm_(comm), ready_(static_cast<size_t>(partitions), false) {
    comm_->retain();
    type_->retain();
  }
  ~PartPlan() override {
    stopWaiting(this);
    if (setupReq_) {
      if (send_) {
        // A setup message is small: it leaves at once (eager).
        Request* r = setupReq_;
        loom::progress::waitUntil([r] { return r->complete; });
      } else if (!setupReq_->complete) {
        loom::p2p::cancelRecv(setupReq_);
      }
      Request::release(setupReq_);
    }
    type_->release();
    Comm::release(comm_);
  }

  // Sends (send side) or posts the receive of (receive side) the setup
  // message: the matching of this request with its peer's.
  Status setup() {
    if (peer_ == MPI_PROC_NULL) return Status::ok();
    if (send_) {
      static uint32_t next = 0;
      dataTag_ = static_cast<int>(kDataTagBase + next++ % kDataTagSpan);
      setupMsg_.dataTag = dataTag_;
      return loom::p2p::isend(&setupMsg_, sizeof setupMsg_, loom::coll::move::byteType(), peer_,
                              kPartTagBase + userTag_, comm_, SendMode::kStandard,
                              Channel::kColl, &setupReq_);
    }
    return loom::p2p::irecv(&setupMsg_, sizeof setupMsg_, loom::coll::move::byteType(), peer_,
                            kPartTagBase + userTag_, comm_, Channel::kColl, &setupReq_);
  }

  bool isSend() const { return send_; }
  int partitions() const { return partitions_; }

  bool envelope(int* source, int* tag) const override {
    if (send_ || peer_ == MPI_PROC_NULL) return false;
    *source = peer_;
    *tag = userTag_;
    return true;
  }

  Status start(Request* user) override {
    user_ = user;
    readyCount_ = 0;
    std::fill(ready_.begin(), ready_.end(), false);
    if (peer_ == MPI_PROC_NULL) {
      user->statusSource = MPI_PROC_NULL;
      user->statusTag = MPI_ANY_TAG;
      user->finish();
      return Status::ok();
    }
    if (send_) return partitions_ == 0 ? launch() : Status::ok();
    if (!matched()) {
      waitForSetup(this);
      return Status::ok();
    }
    return postReceive();
  }

  // Receive side: has the setup message arrived? Takes its data tag.
  bool matched() {
    if (dataTag_ >= 0) return true;
    if (!setupReq_->complete) return false;
    Request* r = setupReq_;
    setupReq_ = nullptr;
    const bool ok = r->statusError == MPI_SUCCESS && !r->cancelled &&
                    r->bytes == static_cast<int64_t>(sizeof setupMsg_);
    Request::release(r);
    dataTag_ = ok ? setupMsg_.dataTag : kBadSetup;
    return true;
  }

  // Receive side, matched: posts this round's receive.
  Status postReceive() {
    if (dataTag_ == kBadSetup)
      return errorf(MPI_ERR_INTERN, "the partitioned send's setup message was malformed");
    Request* inner = nullptr;
    Status st = loom::p2p::irecv(buf_, total(), type_, peer_, dataTag_, comm_, Channel::kColl,
                                 &inner);
    if (!st.isOk()) {
      if (inner) Request::release(inner);
      return st;
    }
    loom::api::completeFrom(inner, user_);
    return Status::ok();
  }

  // The round's receive could not be posted after all (in progress): the
  // round ends with the error.
  void failRound(const Status& st) {
    user_->statusError = st.code();
    user_->error = st;
    user_->finish();
  }

  // One partition of the running round is ready; the last one sends.
  Status ready(int p) {
    if (ready_[static_cast<size_t>(p)])
      return errorf(MPI_ERR_ARG, "partition %d is marked ready twice in this round", p);
    ready_[static_cast<size_t>(p)] = true;
    if (++readyCount_ < partitions_ || peer_ == MPI_PROC_NULL) return Status::ok();
    return launch();
  }

 private:
  static constexpr int kBadSetup = -2;

  int64_t total() const { return count_ * partitions_; }

  Status launch() {
    Request* inner = nullptr;
    Status st = loom::p2p::isend(buf_, total(), type_, peer_, dataTag_, comm_,
                                 SendMode::kStandard, Channel::kColl, &inner);
    if (!st.isOk()) {
      if (inner) Request::release(inner);
      return st;
    }
    loom::api::completeFrom(inner, user_);
    return Status::ok();
  }

  bool send_;
  void* buf_;
  int partitions_;
  int64_t count_;
  Datatype* type_;
  int peer_;
  int userTag_;
  Comm* comm_;
  std::vector<bool> ready_;
  int readyCount_ = 0;
  Request* user_ = nullptr;
  Setup setupMsg_{-1, 0};
  Request* setupReq_ = nullptr;
  int dataTag_ = -1;  // receive side: -1 until the setup message arrived
};

// Receive plans whose round started before their setup message arrived;
// one progress poller posts their receives as the messages come.
std::vector<PartPlan*>& waiting() {
  static std::vector<PartPlan*> list;
  return list;
}

int pollWaiting(void*) {
  auto& list = waiting();
  int events = 0;
  for (size_t i = 0; i < list.size();) {
    PartPlan* plan = list[i];
    if (!plan->matched()) {
      ++i;
      continue;
    }
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    ++events;
    Status st = plan->postReceive();
    if (!st.isOk()) plan->failRound(st);
  }
  if (list.empty()) loom::progress::remove(pollWaiting, nullptr);
  return events;
}

void waitForSetup(PartPlan* plan) {
  auto& list = waiting();
  if (list.empty()) loom::progress::add(pollWaiting, nullptr);
  list.push_back(plan);
}

void stopWaiting(PartPlan* plan) {
  auto& list = waiting();
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i] == plan) {
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
      if (list.empty()) loom::progress::remove(pollWaiting, nullptr);
      return;
    }
}

// The arguments both init calls share, checked in the order of the error
// classes in their man pages.
// `count` is int64_t: MPI_Psend_init and MPI_Psend_init_c (and the receive
// pair) both call it.
int init(bool send, const void* buf, int partitions, int64_t count, MPI_Datatype datatype,
         int peer, int tag, MPI_Comm comm, MPI_Request* request, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = loom::api::toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (partitions < 0)
    return raise(c, errorf(MPI_ERR_ARG, "partitions=%d < 0", partitions), fn);
  if (count < 0)
    return raise(c, errorf(MPI_ERR_COUNT, "count=%lld < 0", static_cast<long long>(count)), fn);
  if (partitions > 0 && count > INT64_MAX / partitions)
    return raise(c, errorf(MPI_ERR_COUNT, "partitions * count overflows MPI_Count"), fn);
  Datatype* t = loom::api::toDatatype(datatype);
  if (!t) return raise(c, errorf(MPI_ERR_TYPE, "invalid datatype"), fn);
  if (!t->isCommitted()) return raise(c, errorf(MPI_ERR_TYPE, "datatype is not committed"), fn);
  if (peer != MPI_PROC_NULL && (peer < 0 || peer >= c->size()))
    return raise(c, errorf(MPI_ERR_RANK, "%s=%d is not a rank of a %d-rank communicator",
                           send ? "dest" : "source", peer, c->size()),
                 fn);
  if (tag < 0 || tag > loom::kTagUb)
    return raise(c, errorf(MPI_ERR_TAG, "tag=%d is not in 0..MPI_TAG_UB (no wildcards)", tag),
                 fn);
  Status st = loom::api::checkData(buf, count * partitions, t);
  if (!st.isOk()) return raise(c, st, fn);
  if (!request) return raise(c, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  auto* plan = new PartPlan(send, const_cast<void*>(buf), partitions, count, t, peer, tag, c);
  st = plan->setup();
  if (!st.isOk()) {
    delete plan;
    return raise(c, st, fn);
  }
  *request = loom::api::toHandle(loom::api::newPersistentColl(c, plan));
  return MPI_SUCCESS;
}

// The partitioned request behind `h`, active, of the wanted side.
PartPlan* planOf(MPI_Request h, bool send, Request** out, int* rc, const char* fn) {
  Request* r = loom::api::toRequest(h);
  *out = r;
  PartPlan* plan = r && loom::api::isPersistentColl(r)
                       ? dynamic_cast<PartPlan*>(static_cast<loom::api::PersistentColl*>(r->owner))
                       : nullptr;
  if (!plan || plan->isSend() != send) {
    *rc = raise(r ? r->comm : nullptr,
                errorf(MPI_ERR_REQUEST, "not a partitioned %s request", send ? "send" : "receive"),
                fn);
    return nullptr;
  }
  *rc = MPI_SUCCESS;
  return plan;
}

int readyOne(PartPlan* plan, Request* r, int p, const char* fn) {
  if (!r->active)
    return raise(r->comm, errorf(MPI_ERR_REQUEST, "the request is not active (MPI_Start it)"),
                 fn);
  if (p < 0 || p >= plan->partitions())
    return raise(r->comm, errorf(MPI_ERR_ARG, "partition %d is not in 0..%d", p,
                                 plan->partitions() - 1),
                 fn);
  Status st = plan->ready(p);
  if (!st.isOk()) return raise(r->comm, st, fn);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Psend_init(const void* buf, int partitions, int count,
                               MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Info info, MPI_Request* request) {
  (void)info;
  return init(true, buf, partitions, count, datatype, dest, tag, comm, request,
              "MPI_Psend_init");
}
LOOM_WEAK_ALIAS(MPI_Psend_init)
LOOM_LARGE_COUNT(Psend_init,
                 (const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                  int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, init(true, buf, partitions, count, datatype, dest, tag, comm,
                                   request, "MPI_Psend_init_c")))

extern "C" int PMPI_Precv_init(void* buf, int partitions, int count, MPI_Datatype datatype,
                               int source, int tag, MPI_Comm comm, MPI_Info info,
                               MPI_Request* request) {
  (void)info;
  return init(false, buf, partitions, count, datatype, source, tag, comm, request,
              "MPI_Precv_init");
}
LOOM_WEAK_ALIAS(MPI_Precv_init)
LOOM_LARGE_COUNT(Precv_init,
                 (void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                  int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request),
                 ((void)info, init(false, buf, partitions, count, datatype, source, tag, comm,
                                   request, "MPI_Precv_init_c")))

extern "C" int PMPI_Pready(int partition, MPI_Request request) {
  static const char* fn = "MPI_Pready";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Request* r;
  int rc;
  PartPlan* plan = planOf(request, true, &r, &rc, fn);
  if (!plan) return rc;
  return readyOne(plan, r, partition, fn);
}
LOOM_WEAK_ALIAS(MPI_Pready)

extern "C" int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
  static const char* fn = "MPI_Pready_range";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Request* r;
  int rc;
  PartPlan* plan = planOf(request, true, &r, &rc, fn);
  if (!plan) return rc;
  if (partition_low > partition_high)
    return raise(r->comm, errorf(MPI_ERR_ARG, "partition_low=%d > partition_high=%d",
                                 partition_low, partition_high),
                 fn);
  for (int p = partition_low; p <= partition_high; ++p)
    if (int e = readyOne(plan, r, p, fn)) return e;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Pready_range)

extern "C" int PMPI_Pready_list(int length, const int array_of_partitions[],
                                MPI_Request request) {
  static const char* fn = "MPI_Pready_list";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Request* r;
  int rc;
  PartPlan* plan = planOf(request, true, &r, &rc, fn);
  if (!plan) return rc;
  if (length < 0 || (length > 0 && !array_of_partitions))
    return raise(r->comm, errorf(MPI_ERR_ARG, "length < 0 or array_of_partitions is NULL"), fn);
  for (int i = 0; i < length; ++i)
    if (int e = readyOne(plan, r, array_of_partitions[i], fn)) return e;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Pready_list)

// An inactive request (its round completed and was waited for, or never
// started) reports every partition arrived.
extern "C" int PMPI_Parrived(MPI_Request request, int partition, int* flag) {
  static const char* fn = "MPI_Parrived";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Request* r;
  int rc;
  PartPlan* plan = planOf(request, false, &r, &rc, fn);
  if (!plan) return rc;
  if (!flag) return raise(r->comm, errorf(MPI_ERR_ARG, "flag is NULL"), fn);
  if (partition < 0 || partition >= plan->partitions())
    return raise(r->comm, errorf(MPI_ERR_ARG, "partition %d is not in 0..%d", partition,
                                 plan->partitions() - 1),
                 fn);
  if (r->active && !r->complete) loom::progress::testPoll();
  *flag = !r->active || r->complete;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Parrived)
