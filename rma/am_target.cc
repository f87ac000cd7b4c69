// The target side of operations sent as messages (rma/am.h): one progress
// poller matches the requests of every window that has message targets,
// in arrival order, and applies each once its data is in.
//
// Requests are matched with a matched probe (their sizes differ) and
// received into a buffer of their own; a large one may still be arriving
// (rendezvous) while later ones are matched, so requests are applied
// strictly in match order: the head of the queue first. A lock request
// that cannot be granted now waits in a list that every pass retries.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "coll/op.h"
#include "core/datatype.h"
#include "core/log.h"
#include "core/progress.h"
#include "p2p/p2p.h"
#include "rma/am.h"
#include "rma/ops_util.h"
#include "rma/sync_util.h"
#include "rma/window.h"

namespace loom::rma {

struct Window::Incoming {
  Request* req = nullptr;
  char* buf = nullptr;
  int source = 0;
};

struct Window::Waiter {
  int origin;
  int type;
  int replyTag;
};

namespace {

std::vector<Window*>& windows() {
  static std::vector<Window*> w;
  return w;
}

Datatype* byteType() {
  static Datatype* t = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
  return t;
}

int pollAll(void*) {
  int events = 0;
  // Index loop: a window may be freed from no poller, but one may be added.
  auto& list = windows();
  for (size_t i = 0; i < list.size(); ++i) events += list[i]->pollMessages();
  return events;
}

void freeOwner(Request* r) { std::free(r->owner); }

}  // namespace

Status sendOwned(Window* w, int dest, int tag, void* buf, size_t bytes) {
  Request* r = nullptr;
  Status st = p2p::isend(buf, static_cast<int64_t>(bytes), byteType(), dest, tag, w->comm(),
                         SendMode::kStandard, Channel::kPt2pt, &r);
  if (!st.isOk()) {
    std::free(buf);
    return st;
  }
  if (r->complete) {
    std::free(buf);
    Request::release(r);
  } else {
    r->owner = buf;
    r->onComplete = freeOwner;
    r->userFreed = true;
  }
  return Status::ok();
}

void Am::add(Window* w) {
  auto& list = windows();
  if (list.empty()) progress::add(pollAll, nullptr);
  list.push_back(w);
}

void Am::remove(Window* w) {
  auto& list = windows();
  auto it = std::find(list.begin(), list.end(), w);
  if (it == list.end()) return;
  list.erase(it);
  if (list.empty()) progress::remove(pollAll, nullptr);
}

std::vector<Comm*> Am::communicators() {
  std::vector<Comm*> out;
  for (Window* w : windows()) out.push_back(w->comm());
  return out;
}

void Am::drain(Window* w) {
  for (Window::Incoming* in : w->incoming_) {
    progress::waitUntil([in] { return in->req->complete; });
    Request::release(in->req);
    std::free(in->buf);
    delete in;
  }
  w->incoming_.clear();
  for (Window::Waiter* x : w->lockWaiters_) delete x;
  w->lockWaiters_.clear();
  if (w->ackRecv_) {
    if (!p2p::cancelRecv(w->ackRecv_))
      progress::waitUntil([w] { return w->ackRecv_->complete; });
    Request::release(w->ackRecv_);
    w->ackRecv_ = nullptr;
  }
}

namespace {

// A reply of one int (flush, unlock: the first error met applying that
// origin's operations; lock: MPI_SUCCESS).
void replyCode(Window* w, int origin, int tag, int code) {
  auto* m = static_cast<int32_t*>(std::malloc(sizeof(int32_t)));
  *m = code;
  (void)sendOwned(w, origin, tag, m, sizeof *m);
}

}  // namespace

Status Window::postAckRecv() {
  static Datatype* bytes = byteType();
  return p2p::irecv(&ackIn_, sizeof ackIn_, bytes, MPI_ANY_SOURCE, kTagAck, comm_,
                    Channel::kPt2pt, &ackRecv_);
}

void Window::sendAcks(int origin) {
  if (unacked_.empty()) return;
  for (int o = 0; o < static_cast<int>(unacked_.size()); ++o) {
    if ((origin >= 0 && o != origin) || unacked_[o] == 0) continue;
    auto* a = static_cast<Ack*>(std::malloc(sizeof(Ack)));
    *a = {unacked_[o], originErrors_.empty() ? MPI_SUCCESS : originErrors_[o], 0};
    if (!originErrors_.empty()) originErrors_[o] = MPI_SUCCESS;
    unacked_[o] = 0;
    (void)sendOwned(this, o, kTagAck, a, sizeof *a);
  }
}

int Window::pollMessages() {
  int events = 0;
  // Acknowledgements of our own operations.
  if (!ackRecv_) (void)postAckRecv();
  while (ackRecv_ && ackRecv_->complete) {
    Request* r = ackRecv_;
    ackRecv_ = nullptr;
    if (r->statusError == MPI_SUCCESS && r->statusSource >= 0) {
      Peer& p = peers_[r->statusSource];
      p.acked += ackIn_.count;
      if (ackIn_.error != MPI_SUCCESS && p.ackError == MPI_SUCCESS) p.ackError = ackIn_.error;
    }
    Request::release(r);
    ++events;
    (void)postAckRecv();
  }
  for (;;) {
    bool found = false;
    p2p::Message* msg = nullptr;
    p2p::ProbeResult pr;
    if (!p2p::improbe(MPI_ANY_SOURCE, kTagRequest, comm_, &found, &msg, &pr).isOk() || !found)
      break;
    auto* in = new Incoming;
    in->buf = static_cast<char*>(std::malloc(static_cast<size_t>(pr.bytes) + 1));
    in->source = pr.source;
    if (!p2p::imrecv(in->buf, pr.bytes, byteType(), msg, &in->req).isOk()) {
      log::error("rma: could not receive a request from rank %d", pr.source);
      std::free(in->buf);
      delete in;
      continue;
    }
    incoming_.push_back(in);
    ++events;
  }
  while (!incoming_.empty() && incoming_.front()->req->complete) {
    Incoming* in = incoming_.front();
    incoming_.pop_front();
    apply(in->source, in->buf);
    Request::release(in->req);
    std::free(in->buf);
    delete in;
    ++events;
  }
  sendAcks(-1);
  for (size_t i = 0; i < lockWaiters_.size();) {
    Waiter* x = lockWaiters_[i];
    if (tryLockWord(peers_[rank()].ctl, x->type)) {
      replyCode(this, x->origin, x->replyTag, MPI_SUCCESS);
      delete x;
      lockWaiters_.erase(lockWaiters_.begin() + static_cast<long>(i));
      ++events;
    } else {
      ++i;
    }
  }
  return events;
}

// Whether [a, a+n) is inside this rank's window (its attached regions for
// a dynamic window).
bool Window::ownsRange(uint64_t a, uint64_t n) const {
  // Without wrapping: [a, a+n) inside [ra, ra+rb).
  auto inside = [a, n](uint64_t ra, uint64_t rb) { return a >= ra && n <= rb && a - ra <= rb - n; };
  if (flavor_ == Flavor::kDynamic)  // adjacent regions join, as at the origin
    return regionsCover(ownRegions(), regions_.size(), a, static_cast<__int128>(a) + n);
  const Peer& me = peers_[rank()];
  return inside(me.base, me.size);
}

void Window::apply(int origin, char* buf) {
  AmHeader h;
  std::memcpy(&h, buf, sizeof h);
  auto* pc = reinterpret_cast<AmPiece*>(buf + sizeof h);
  char* data = buf + sizeof h + h.pieces * sizeof(AmPiece);
  const Peer& me = peers_[rank()];
  std::vector<iovec> pieces(h.pieces);
  bool inRange = true;
  for (uint32_t i = 0; i < h.pieces; ++i) {
    inRange = inRange && ownsRange(pc[i].addr, pc[i].bytes);
    pieces[i] = {reinterpret_cast<void*>(me.mapped + (pc[i].addr - me.base)), pc[i].bytes};
  }
  if (originErrors_.empty()) originErrors_.assign(peers_.size(), MPI_SUCCESS);
  if (unacked_.empty()) unacked_.assign(peers_.size(), 0);
  if (h.op == AmOp::kPut || h.op == AmOp::kAcc) ++unacked_[origin];
  // A request answered now comes after the acknowledgements of what was
  // applied before it.
  if (h.op == AmOp::kUnlock || h.op == AmOp::kFlush) sendAcks(origin);
  int& err = originErrors_[origin];
  // Operations without an answer report a range error at the next flush or
  // unlock; the others answer with no data, which their origin reports.
  if (!inRange && err == MPI_SUCCESS && (h.op == AmOp::kPut || h.op == AmOp::kAcc)) {
    err = MPI_ERR_RMA_RANGE;
    log::debug("rma", "rank %d accessed memory outside this rank's window", origin);
  }
  switch (h.op) {
    case AmOp::kPut:
      if (inRange) scatterPieces(data, pieces);
      return;
    case AmOp::kGet: {
      if (!inRange) {
        (void)sendOwned(this, origin, h.replyTag, std::malloc(1), 0);
        return;
      }
      char* out = static_cast<char*>(std::malloc(h.bytes + 1));
      gatherPieces(pieces, out);
      (void)sendOwned(this, origin, h.replyTag, out, h.bytes);
      return;
    }
    case AmOp::kAcc:
    case AmOp::kGetAcc:
    case AmOp::kCas: {
      const bool fetch = h.op != AmOp::kAcc;
      if (!inRange) {
        if (fetch) (void)sendOwned(this, origin, h.replyTag, std::malloc(1), 0);
        return;
      }
      char* cur = static_cast<char*>(std::malloc(h.bytes + 1));
      lockAcc(me.ctl);
      gatherPieces(pieces, cur);
      if (h.op == AmOp::kCas) {
        if (std::memcmp(cur, data + h.bytes, h.bytes) == 0) scatterPieces(data, pieces);
      } else {
        coll::Op* op = coll::toOp(reinterpret_cast<MPI_Op>(static_cast<uintptr_t>(h.opAbi)));
        const Datatype* elem = predefinedDatatype(h.typeAbi);
        if (fetch) {
          char* copy = static_cast<char*>(std::malloc(h.bytes + 1));
          std::memcpy(copy, cur, h.bytes);
          Status st = combine(op, elem, data, copy, h.bytes);
          if (st.isOk() && op->kind() != coll::Op::Kind::kNoOp) scatterPieces(copy, pieces);
          std::free(copy);
        } else {
          Status st = combine(op, elem, data, cur, h.bytes);
          if (st.isOk()) scatterPieces(cur, pieces);
          std::free(cur);
          cur = nullptr;
        }
      }
      unlockAcc(me.ctl);
      if (fetch) (void)sendOwned(this, origin, h.replyTag, cur, h.bytes);
      return;
    }
    case AmOp::kLock:
      if (tryLockWord(me.ctl, h.lockType))
        replyCode(this, origin, h.replyTag, MPI_SUCCESS);
      else
        lockWaiters_.push_back(new Waiter{origin, h.lockType, h.replyTag});
      return;
    case AmOp::kUnlock:
      unlockWord(me.ctl, h.lockType);
      replyCode(this, origin, h.replyTag, err);
      err = MPI_SUCCESS;
      return;
    case AmOp::kFlush:
      replyCode(this, origin, h.replyTag, err);
      err = MPI_SUCCESS;
      return;
  }
}

}  // namespace loom::rma
