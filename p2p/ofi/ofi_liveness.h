// Liveness of the peers on other nodes: telling a dead rank, or a node cut
// off the network, from a busy one.
//
// libfabric does not say when a peer dies (shared/notes/libfabric.md,
// section 6): a receive posted for it never completes, and sends to it may
// succeed once and then be refused (-FI_EAGAIN) for ever; a cut cable looks
// the same. A refused operation alone proves nothing, though: a live peer
// that computes outside MPI for a minute stops reading its sockets too.
//
// Where the provider's addresses are IP socket addresses (tcp;ofi_rxm, net)
// the kernels can tell: a probe is a plain TCP connect to the peer's
// libfabric port, closed at once. A live process's kernel accepts it even
// while the process computes; a dead process's kernel refuses it at once
// (ECONNREFUSED); a node that is gone or cut off does not answer within
// LOOM_OFI_PEER_TIMEOUT seconds. While a rank waits, it probes the peers it
// talks to, a few a second, after two idle seconds, and at once the peer of
// an operation libfabric has refused for two seconds. Elsewhere (verbs,
// efa) only a refusal that lasts ten times LOOM_OFI_PEER_TIMEOUT counts.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <string>
#include <vector>

namespace loom::p2p::ofi {

class Liveness {
 public:
  using Clock = std::chrono::steady_clock;

  // `addrs[rank]`: the peer's socket address, or an empty vector where the
  // provider's addresses are not IP (then only refusals count).
  void configure(std::vector<std::vector<char>> addrs, double timeoutSec);
  ~Liveness();

  // One check, called while the rank waits (a few thousand idle polls
  // apart, or from an idle sleep). `idleSince`: when the rank last saw an
  // event; `talked`: the peers it exchanges records with; `stuckPeer`: the
  // peer of the oldest operation libfabric refuses (-1: none), refused since
  // `stuckSince`. Returns "" or why the peer *dead is taken for dead.
  std::string check(Clock::time_point idleSince, const std::vector<int>& talked, int stuckPeer,
                    Clock::time_point stuckSince, int* dead);

  // Whether this provider's peers can be probed.
  bool probes() const { return probing_; }

 private:
  struct Probe {
    int fd;
    int peer;
    Clock::time_point start;
    int err;  // connect() failed at once with this (0: it is in flight)
  };
  bool start(int peer, Clock::time_point now);
  std::string finish(const Probe& p, int err, Clock::time_point now);

  std::vector<std::vector<char>> addrs_;
  std::vector<Probe> inFlight_;
  std::vector<Clock::time_point> lastProbe_;  // by rank: when its last probe ended
  double timeout_ = 0;
  bool probing_ = false;
  size_t next_ = 0;                    // round robin over `talked`
  Clock::time_point lastRound_{};
};

}  // namespace loom::p2p::ofi
