// Matching: posted receives and unexpected messages, per context.
//
// MPI's rule: a receive matches the oldest message from a source (on a
// context and tag) first, and a message matches the oldest posted receive
// that accepts it. Each context keeps both queues in arrival/posting order;
// wildcards (MPI_ANY_SOURCE, MPI_ANY_TAG) make a linear scan necessary, and
// in practice the queues are short. Transports deliver in order per sender,
// which together with these FIFO queues gives non-overtaking.
//
// Both queues are intrusive singly linked FIFOs (through Request::nextPending
// and Unexpected::next): posting and matching at the front are a few pointer
// moves, with no allocation, on the path of every message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/request.h"
#include "p2p/payload.h"
#include "p2p/wire.h"

namespace loom::p2p {

// A message that arrived before its receive was posted.
struct Unexpected {
  MsgHeader hdr;
  int srcJob = 0;                  // sender's job rank (for replies)
  Payload payload;                 // eager data (copied out of the transport)
  size_t payloadBytes = 0;
  RtsBody rts{};                   // rendezvous requests
  Unexpected* next = nullptr;      // the context's queue (owned by MatchTable while queued)
};

class MatchTable {
 public:
  MatchTable() = default;
  MatchTable(const MatchTable&) = delete;
  MatchTable& operator=(const MatchTable&) = delete;
  ~MatchTable();

  // Does a receive (source, tag) accept this header?
  static bool accepts(int source, int tag, const MsgHeader& h) {
    return (source == MPI_ANY_SOURCE || source == h.src) && (tag == MPI_ANY_TAG || tag == h.tag);
  }

  // The oldest posted receive accepting `h`, removed from the queue.
  Request* takePosted(const MsgHeader& h) {
    Queues& q = queues(h.ctx);
    Request* r = q.posted.head;
    if (r && accepts(r->peer, r->tag, h)) [[likely]] {  // the common case
      q.posted.unlink(nullptr, r);
      return r;
    }
    return r ? takePostedScan(q, h) : nullptr;
  }
  void post(uint32_t ctx, Request* r) { queues(ctx).posted.push(r); }
  // Removes a posted receive (cancel); false if it is not queued.
  bool removePosted(uint32_t ctx, Request* r);

  // The oldest unexpected message a receive accepts; removed when `take`.
  Unexpected* findUnexpected(uint32_t ctx, int source, int tag, bool take) {
    Queues& q = queues(ctx);
    if (!q.unexpected.head) return nullptr;  // the common case on a busy receiver
    return findUnexpectedScan(q, source, tag, take);
  }
  void addUnexpected(std::unique_ptr<Unexpected> u);

  // Mismatched collective calls (signatures, see p2p.h): the oldest posted
  // receive with this tag whose signature differs from `sig`, removed from
  // the queue; the oldest unexpected message with this tag and a signature
  // other than `sig` (left queued). Both ignore signature 0.
  Request* takeConflictingPosted(uint32_t ctx, int tag, uint16_t sig);
  const Unexpected* conflictingUnexpected(uint32_t ctx, int tag, uint16_t sig);

  size_t postedCount(uint32_t ctx) { return queues(ctx).posted.count; }
  size_t unexpectedCount(uint32_t ctx) { return queues(ctx).unexpected.count; }

 private:
  // A FIFO linked through the member `Next` of its elements.
  template <class T, T* T::*Next>
  struct Fifo {
    T* head = nullptr;
    T* tail = nullptr;
    size_t count = 0;
    void push(T* x) {
      x->*Next = nullptr;
      (tail ? tail->*Next : head) = x;
      tail = x;
      ++count;
    }
    // Removes x, whose predecessor is prev (nullptr: x is the head).
    void unlink(T* prev, T* x) {
      (prev ? prev->*Next : head) = x->*Next;
      if (tail == x) tail = prev;
      x->*Next = nullptr;
      --count;
    }
  };
  struct Queues {
    Fifo<Request, &Request::nextPending> posted;
    Fifo<Unexpected, &Unexpected::next> unexpected;  // owned
  };
  Queues& queues(uint32_t ctx) {
    if (ctx < table_.size() && table_[ctx]) [[likely]]
      return *table_[ctx];
    return grow(ctx);
  }
  Queues& grow(uint32_t ctx);
  Request* takePostedScan(Queues& q, const MsgHeader& h);
  Unexpected* findUnexpectedScan(Queues& q, int source, int tag, bool take);
  // Indexed by context: context ids are small integers.
  std::vector<std::unique_ptr<Queues>> table_;
};

}  // namespace loom::p2p
