#include "p2p/match.h"

#include "p2p/counters.h"

namespace loom::p2p {

MatchTable::~MatchTable() {
  for (auto& q : table_) {
    if (!q) continue;
    for (Unexpected* u = q->unexpected.head; u;) {
      Unexpected* next = u->next;
      delete u;
      u = next;
    }
  }
}

MatchTable::Queues& MatchTable::grow(uint32_t ctx) {
  if (ctx >= table_.size()) table_.resize(ctx + 1);
  if (!table_[ctx]) table_[ctx] = std::make_unique<Queues>();
  return *table_[ctx];
}

Request* MatchTable::takePostedScan(Queues& q, const MsgHeader& h) {
  Request* prev = nullptr;
  for (Request* r = q.posted.head; r; prev = r, r = r->nextPending) {
    if (!accepts(r->peer, r->tag, h)) continue;
    q.posted.unlink(prev, r);
    return r;
  }
  return nullptr;
}

bool MatchTable::removePosted(uint32_t ctx, Request* target) {
  Queues& q = queues(ctx);
  Request* prev = nullptr;
  for (Request* r = q.posted.head; r; prev = r, r = r->nextPending) {
    if (r != target) continue;
    q.posted.unlink(prev, r);
    return true;
  }
  return false;
}

Unexpected* MatchTable::findUnexpectedScan(Queues& q, int source, int tag, bool take) {
  Unexpected* prev = nullptr;
  for (Unexpected* u = q.unexpected.head; u; prev = u, u = u->next) {
    if (!accepts(source, tag, u->hdr)) continue;
    if (take) {
      q.unexpected.unlink(prev, u);
      countUnexpectedTaken();
    }
    return u;
  }
  return nullptr;
}

Request* MatchTable::takeConflictingPosted(uint32_t ctx, int tag, uint16_t sig) {
  Queues& q = queues(ctx);
  Request* prev = nullptr;
  for (Request* r = q.posted.head; r; prev = r, r = r->nextPending) {
    if (r->tag != tag || !r->sig || r->sig == sig) continue;
    q.posted.unlink(prev, r);
    return r;
  }
  return nullptr;
}

const Unexpected* MatchTable::conflictingUnexpected(uint32_t ctx, int tag, uint16_t sig) {
  for (const Unexpected* u = queues(ctx).unexpected.head; u; u = u->next)
    if (u->hdr.tag == tag && u->hdr.sig && u->hdr.sig != sig) return u;
  return nullptr;
}

void MatchTable::addUnexpected(std::unique_ptr<Unexpected> owned) {
  Unexpected* u = owned.release();
  queues(u->hdr.ctx).unexpected.push(u);
  countUnexpectedQueued();
}

}  // namespace loom::p2p
