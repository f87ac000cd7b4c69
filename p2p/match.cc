#include "p2p/match.h"

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
    (prev ? prev->nextPending : q.posted.head) = r->nextPending;
    if (q.posted.tail == r) q.posted.tail = prev;
    r->nextPending = nullptr;
    --q.posted.count;
    return r;
  }
  return nullptr;
}

bool MatchTable::removePosted(uint32_t ctx, Request* target) {
  Queues& q = queues(ctx);
  Request* prev = nullptr;
  for (Request* r = q.posted.head; r; prev = r, r = r->nextPending) {
    if (r != target) continue;
    (prev ? prev->nextPending : q.posted.head) = r->nextPending;
    if (q.posted.tail == r) q.posted.tail = prev;
    r->nextPending = nullptr;
    --q.posted.count;
    return true;
  }
  return false;
}

Unexpected* MatchTable::findUnexpectedScan(Queues& q, int source, int tag, bool take) {
  Unexpected* prev = nullptr;
  for (Unexpected* u = q.unexpected.head; u; prev = u, u = u->next) {
    if (!accepts(source, tag, u->hdr)) continue;
    if (take) {
      (prev ? prev->next : q.unexpected.head) = u->next;
      if (q.unexpected.tail == u) q.unexpected.tail = prev;
      u->next = nullptr;
      --q.unexpected.count;
    }
    return u;
  }
  return nullptr;
}

void MatchTable::addUnexpected(std::unique_ptr<Unexpected> owned) {
  Unexpected* u = owned.release();
  Queues& q = queues(u->hdr.ctx);
  u->next = nullptr;
  if (q.unexpected.tail)
    q.unexpected.tail->next = u;
  else
    q.unexpected.head = u;
  q.unexpected.tail = u;
  ++q.unexpected.count;
}

}  // namespace loom::p2p
