// Matching: posted receives and unexpected messages, per context.
//
// MPI's rule: a receive matches the oldest message from a source (on a
// context and tag) first, and a message matches the oldest posted receive
// that accepts it. Each context keeps both queues in arrival/posting order;
// wildcards (MPI_ANY_SOURCE, MPI_ANY_TAG) make a linear scan necessary, and
// in practice the queues are short. Transports deliver in order per sender,
// which together with these FIFO queues gives non-overtaking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/request.h"
#include "p2p/wire.h"

namespace loom::p2p {

// A message that arrived before its receive was posted.
struct Unexpected {
  MsgHeader hdr;
  int srcJob = 0;                  // sender's job rank (for replies)
  std::unique_ptr<std::byte[]> payload;  // eager data (copied out of the transport)
  size_t payloadBytes = 0;
  RtsBody rts{};                   // rendezvous requests
};

class MatchTable {
 public:
  // Does a receive (source, tag) accept this header?
  static bool accepts(int source, int tag, const MsgHeader& h) {
    return (source == MPI_ANY_SOURCE || source == h.src) && (tag == MPI_ANY_TAG || tag == h.tag);
  }

  // The oldest posted receive accepting `h`, removed from the queue.
  Request* takePosted(const MsgHeader& h);
  void post(uint32_t ctx, Request* r) { queues(ctx).posted.push_back(r); }
  // Removes a posted receive (cancel); false if it is not queued.
  bool removePosted(uint32_t ctx, Request* r);

  // The oldest unexpected message a receive accepts; removed when `take`.
  Unexpected* findUnexpected(uint32_t ctx, int source, int tag, bool take);
  void addUnexpected(std::unique_ptr<Unexpected> u);

  size_t postedCount(uint32_t ctx) { return queues(ctx).posted.size(); }
  size_t unexpectedCount(uint32_t ctx) { return queues(ctx).unexpected.size(); }

 private:
  struct Queues {
    std::deque<Request*> posted;
    std::deque<Unexpected*> unexpected;  // owned
  };
  Queues& queues(uint32_t ctx) {
    if (ctx < table_.size() && table_[ctx]) [[likely]]
      return *table_[ctx];
    if (ctx >= table_.size()) table_.resize(ctx + 1);
    table_[ctx] = std::make_unique<Queues>();
    return *table_[ctx];
  }
  // Indexed by context: context ids are small integers.
  std::vector<std::unique_ptr<Queues>> table_;
};

}  // namespace loom::p2p
