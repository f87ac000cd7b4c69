#include "coll/schedule.h"

#include <algorithm>

#include "core/log.h"
#include "coll/op.h"
#include "core/progress.h"
#include "p2p/p2p.h"

namespace loom::coll {
namespace {
// Schedules in flight, polled by one progress hook.
std::vector<Schedule*>& active() {
  static std::vector<Schedule*> list;
  return list;
}
bool gHooked = false;
}  // namespace

void Schedule::send(const void* buf, int64_t count, Datatype* type, int peer) {
  rounds_.back().steps.push_back(
      Step{Step::Kind::kSend, const_cast<void*>(buf), count, type, peer, nullptr});
}

void Schedule::recv(void* buf, int64_t count, Datatype* type, int peer) {
  rounds_.back().steps.push_back(Step{Step::Kind::kRecv, buf, count, type, peer, nullptr});
}

namespace {
void foldWithOp(const void* in, void* inout, size_t bytes, void* ctx, Datatype* type) {
  (void)reduceLocal(in, inout, static_cast<int64_t>(bytes / type->size()), type,
                    static_cast<Op*>(ctx));
}
}  // namespace

void Schedule::recvReduce(void* buf, int64_t count, Datatype* type, Op* op, int peer) {
  if (count > 0 && p2p::canFold(type)) {
    Step s{Step::Kind::kRecv, buf, count, type, peer, nullptr};
    s.op = op;
    rounds_.back().steps.push_back(std::move(s));
    return;
  }
  char* tmp = scratchLike(*this, count, type);
  recv(tmp, count, type, peer);
  endRound();
  local([=] { (void)reduceLocal(tmp, buf, count, type, op); });
}

void Schedule::local(LocalFn fn) {
  rounds_.back().steps.push_back(Step{Step::Kind::kLocal, nullptr, 0, nullptr, 0, std::move(fn)});
}

void Schedule::endRound() {
  if (!rounds_.back().steps.empty()) rounds_.emplace_back();
}

void* Schedule::scratch(size_t bytes) {
  scratch_.emplace_back(new std::byte[bytes ? bytes : 1]);
  return scratch_.back().get();
}

bool Schedule::startRound() {
  Round& round = rounds_[current_];
  for (Step& s : round.steps)
    if (s.kind == Step::Kind::kLocal) s.fn();
  for (Step& s : round.steps) {
    if (s.kind == Step::Kind::kLocal) continue;
    Request* r = nullptr;
    Status st = s.kind == Step::Kind::kSend
                    ? p2p::isend(s.buf, s.count, s.type, s.peer, tag_, comm_, SendMode::kStandard,
                                 Channel::kColl, &r)
                : s.op ? p2p::irecvFold(s.buf, s.count, s.type, s.peer, tag_, comm_, foldWithOp, s.op, &r)
                       : p2p::irecv(s.buf, s.count, s.type, s.peer, tag_, comm_, Channel::kColl, &r);
    if (!st.isOk()) {
      status_ = st;
      return false;
    }
    pending_.push_back(r);
  }
  return true;
}

bool Schedule::advance() {
  while (current_ < rounds_.size()) {
    if (!started_) {
      started_ = true;
      if (!startRound()) return true;
    }
    // The round is done when all its sends and receives are.
    for (Request* r : pending_) {
      if (r->complete) continue;
      if (check_ && (++idle_ & 1023) == 0) {
        Status st = check_(checkCtx_, *this);
        if (!st.isOk()) {
          status_ = st;
          abandon();
          return true;
        }
      }
      return false;
    }
    for (Request* r : pending_) {
      if (r->statusError != MPI_SUCCESS && status_.isOk())
        status_ = errorf(r->statusError, "a collective message was truncated: the ranks "
                                          "passed different counts or datatypes");
      Request::release(r);
    }
    pending_.clear();
    if (!status_.isOk()) return true;
    ++current_;
    started_ = false;
  }
  return true;
}

void Schedule::abandon() {
  bool inFlight = false;
  for (Request* r : pending_) {
    if (!r->complete && r->kind == ReqKind::kRecv) p2p::cancelRecv(r);
    if (r->complete) {
      Request::release(r);
    } else {
      inFlight = true;  // the p2p layer completes it; nobody releases it
    }
  }
  // A message still in flight may land in scratch: keep it (an error path).
  if (inFlight)
    for (auto& b : scratch_) (void)b.release();
  pending_.clear();
  current_ = rounds_.size();
}

int Schedule::pollAll(void*) {
  auto& list = active();
  int events = 0;
  for (size_t i = 0; i < list.size();) {
    Schedule* s = list[i];
    if (s->advance()) {
      list[i] = list.back();
      list.pop_back();
      s->request_->statusError = s->status_.code();
      s->request_->finish();
      delete s;
      ++events;
    } else {
      ++i;
    }
  }
  return events;
}

Status Schedule::start(std::unique_ptr<Schedule> s, Request** out) {
  if (!gHooked) {
    progress::add(pollAll, nullptr);
    gHooked = true;
  }
  if (s->rounds_.back().steps.empty() && s->rounds_.size() > 1) s->rounds_.pop_back();
  Request* r = Request::alloc(ReqKind::kColl);
  r->active = true;
  r->comm = s->comm_;
  s->request_ = r;
  *out = r;
  Schedule* raw = s.release();
  // Run as far as possible now: many rounds complete at once (local steps,
  // messages already waiting), and a one-rank schedule completes here.
  if (raw->advance()) {
    r->statusError = raw->status_.code();
    Status st = raw->status_;
    delete raw;
    r->finish();
    return st;
  }
  active().push_back(raw);
  return Status::ok();
}

}  // namespace loom::coll
