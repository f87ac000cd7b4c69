#include "api/ctx_agree.h"

#include <cstring>

#include "core/datatype.h"
#include "core/progress.h"
#include "core/request.h"
#include "p2p/p2p.h"

namespace loom::api {

namespace {

constexpr int kWords = ContextIdMask::kWords;
constexpr size_t kBytes = sizeof(uint64_t) * (kWords + 1);

Datatype* byteType() {
  static Datatype* t = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
  return t;
}

int gHolds = 0;  // HoldAgreements alive

// The id at position `k` among the ids set in `words` (counting from the
// lowest), or the last one set when there are fewer; -1 when none is.
int nthFree(const uint64_t* words, uint64_t k) {
  int last = -1;
  for (int w = 0; w < kWords; ++w)
    for (uint64_t bits = words[w]; bits; bits &= bits - 1) {
      last = w * 64 + __builtin_ctzll(bits);
      if (k-- == 0) return last;
    }
  return last;
}

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb93fe53ba34full;
  return x ^ (x >> 33);
}

class Agreement {
 public:
  Agreement(AgreeSpec spec, AgreeDone done) : s_(std::move(spec)), done_(std::move(done)) {
    s_.comm->retain();
    planRound();
  }
  ~Agreement() {
    if (pending_) Request::release(pending_);
    Comm::release(s_.comm);
  }

  // Starts the first round (a fresh snapshot of this process's mask).
  void begin(bool othersInFlight) {
    std::memcpy(buf_, contextIds().words(), sizeof(uint64_t) * kWords);
    buf_[kWords] = othersInFlight ? 0 : 1;  // ANDed: 1 when no process had one
    phase_ = kSnapshot;
    step_ = 0;
  }

  // Moves the agreement on; true when it has ended (then call end()).
  bool advance() {
    for (;;) {
      if (pending_) {
        if (!pending_->complete) return false;
        const int err = pending_->cancelled ? MPI_ERR_OTHER : pending_->statusError;
        const Op op = ops_[step_];
        Request::release(pending_);
        pending_ = nullptr;
        if (err != MPI_SUCCESS) {
          result_ = errorf(err, "a message of the context-id agreement failed");
          return true;
        }
        if (op.kind == kRecvAnd)
          for (int i = 0; i <= kWords; ++i) buf_[i] &= in_[i];
        else if (op.kind == kRecvSet)
          std::memcpy(buf_, in_, kBytes);
        ++step_;
      }
      if (step_ == ops_.size()) {
        if (decide()) return true;
        step_ = 0;
        continue;
      }
      const Op op = ops_[step_];
      const auto m = static_cast<size_t>(op.member);
      Comm* via = s_.peers.empty() ? s_.comm : s_.peers[m].comm;
      const int peer = !s_.peers.empty() ? s_.peers[m].rank
                       : s_.ranks.empty() ? op.member
                                          : s_.ranks[m];
      Status st = op.kind == kSend
                      ? p2p::isend(buf_, static_cast<int64_t>(kBytes), byteType(), peer, s_.tag,
                                   via, SendMode::kStandard, Channel::kColl, &pending_)
                      : p2p::irecv(in_, static_cast<int64_t>(kBytes), byteType(), peer, s_.tag,
                                   via, Channel::kColl, &pending_);
      if (!st.isOk()) {
        if (pending_) Request::release(pending_);
        pending_ = nullptr;
        result_ = st;
        return true;
      }
    }
  }

  // Runs the completion callback; the agreement is out of the list.
  void end() {
    if (!result_.isOk() && mine_) giveBack();
    done_(result_, id_[0], id_[1]);
  }

 private:
  enum Kind : uint8_t { kSend, kRecvAnd, kRecvSet };
  struct Op {
    Kind kind;
    int member;
  };
  enum Phase : uint8_t { kSnapshot, kCheck };

  // Binomial tree rooted at member 0: the reduce (member r receives from
  // r+1, r+2, r+4, ... while below its lowest set bit, then sends to r
  // minus that bit), then the broadcast down the same tree.
  void planRound() {
    const int p = s_.size, r = s_.me;
    int mask = 1;
    for (; mask < p; mask <<= 1) {
      if (r & mask) {
        ops_.push_back({kSend, r - mask});
        break;
      }
      if (r + mask < p) ops_.push_back({kRecvAnd, r + mask});
    }
    if (r != 0) ops_.push_back({kRecvSet, r - mask});
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (r + mask < p) ops_.push_back({kSend, r + mask});
  }

  void take() {
    for (int i = 0; i < s_.ids; ++i) contextIds().take(id_[i]);
    mine_ = true;
  }
  void giveBack() {
    for (int i = 0; i < s_.ids; ++i) contextIds().give(id_[i]);
    mine_ = false;
  }

  // A round ended with the AND in buf_: true when the agreement has ended.
  bool decide() {
    if (phase_ == kSnapshot) {
      // The first attempt takes the lowest id free everywhere (ids stay
      // compact). Two agreements that chose the same id and lost their
      // check rounds would choose it again: a retry takes one of the first
      // 256 free ids instead, by a hash of the communicator, the tag and
      // the attempt, which every member computes alike and another
      // agreement almost surely does not.
      const uint64_t k = attempt_ == 0 ? 0
                                       : mix(uint64_t{s_.comm->contextId()} << 40 ^
                                             static_cast<uint64_t>(s_.tag) << 8 ^ attempt_) %
                                             256;
      int lowest = nthFree(buf_, k);
      int second = 0;
      if (lowest >= 0 && s_.ids == 2) {
        buf_[lowest / 64] &= ~(uint64_t{1} << (lowest % 64));
        second = ContextIdMask::lowestFree(buf_);
        if (second < 0) lowest = -1;
      }
      if (lowest < 0) {
        // Every process computed the same AND, so they all fail together.
        result_ = errorf(MPI_ERR_INTERN,
                         "no context id is free on every process of the parent: more than "
                         "%d communicators are alive",
                         ContextIdMask::kIds - 3);
        return true;
      }
      id_[0] = static_cast<uint32_t>(lowest);
      id_[1] = static_cast<uint32_t>(second);
      const bool quiet = buf_[kWords] & 1;
      if (s_.blocking && quiet && gHolds == 0) {
        take();
        return true;
      }
      const bool ok = gHolds == 0 && contextIds().isFree(id_[0]) &&
                      (s_.ids == 1 || contextIds().isFree(id_[1]));
      if (ok) take();
      std::memset(buf_, 0, kBytes);
      buf_[0] = ok ? 1 : 0;
      phase_ = kCheck;
      return false;
    }
    if (buf_[0] & 1) return true;  // taken everywhere
    // Some process had given the id to another agreement meanwhile: again.
    if (mine_) giveBack();
    ++attempt_;
    begin(agreementsInFlight() > 1);
    return false;
  }

  AgreeSpec s_;
  AgreeDone done_;
  std::vector<Op> ops_;
  size_t step_ = 0;
  Phase phase_ = kSnapshot;
  uint64_t buf_[kWords + 1] = {};
  uint64_t in_[kWords + 1] = {};
  Request* pending_ = nullptr;
  Status result_;
  uint32_t id_[2] = {0, 0};
  uint64_t attempt_ = 0;  // snapshot rounds started again
  bool mine_ = false;  // id_ is taken here for this agreement
};

std::vector<Agreement*>& inFlight() {
  static std::vector<Agreement*> list;
  return list;
}

int pollAgreements(void*) {
  auto& list = inFlight();
  int events = 0;
  for (size_t i = 0; i < list.size();) {
    Agreement* a = list[i];
    if (!a->advance()) {
      ++i;
      continue;
    }
    ++events;
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    if (list.empty()) progress::remove(pollAgreements, nullptr);
    a->end();
    delete a;
  }
  return events;
}

}  // namespace

int agreementsInFlight() { return static_cast<int>(inFlight().size()); }

HoldAgreements::HoldAgreements() { ++gHolds; }
HoldAgreements::~HoldAgreements() { --gHolds; }

void startAgreement(AgreeSpec spec, AgreeDone done) {
  auto* a = new Agreement(std::move(spec), std::move(done));
  a->begin(!inFlight().empty());
  if (a->advance()) {
    a->end();
    delete a;
    return;
  }
  auto& list = inFlight();
  if (list.empty()) progress::add(pollAgreements, nullptr);
  list.push_back(a);
}

Status agreeBlocking(AgreeSpec spec, uint32_t* id) {
  spec.blocking = true;
  // The callback runs before the wait below ends (perhaps inside
  // startAgreement): the locals outlive it.
  bool done = false;
  Status result;
  startAgreement(std::move(spec), [&](Status st, uint32_t got, uint32_t) {
    done = true;
    result = std::move(st);
    *id = got;
  });
  progress::waitUntil([&done] { return done; });
  return result;
}

}  // namespace loom::api
