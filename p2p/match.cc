#include "p2p/match.h"

#include <algorithm>

namespace loom::p2p {

Request* MatchTable::takePosted(const MsgHeader& h) {
  auto& q = queues(h.ctx).posted;
  if (q.empty()) return nullptr;
  if (accepts(q.front()->peer, q.front()->tag, h)) {  // the common case
    Request* r = q.front();
    q.pop_front();
    return r;
  }
  for (auto it = q.begin(); it != q.end(); ++it) {
    Request* r = *it;
    if (accepts(r->peer, r->tag, h)) {
      q.erase(it);
      return r;
    }
  }
  return nullptr;
}

bool MatchTable::removePosted(uint32_t ctx, Request* r) {
  auto& q = queues(ctx).posted;
  auto it = std::find(q.begin(), q.end(), r);
  if (it == q.end()) return false;
  q.erase(it);
  return true;
}

Unexpected* MatchTable::findUnexpected(uint32_t ctx, int source, int tag, bool take) {
  auto& q = queues(ctx).unexpected;
  if (q.empty()) return nullptr;
  if (accepts(source, tag, q.front()->hdr)) {
    Unexpected* u = q.front();
    if (take) q.pop_front();
    return u;
  }
  for (auto it = q.begin(); it != q.end(); ++it) {
    Unexpected* u = *it;
    if (accepts(source, tag, u->hdr)) {
      if (take) q.erase(it);
      return u;
    }
  }
  return nullptr;
}

void MatchTable::addUnexpected(std::unique_ptr<Unexpected> u) {
  queues(u->hdr.ctx).unexpected.push_back(u.release());
}

}  // namespace loom::p2p
