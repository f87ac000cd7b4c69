#include "p2p/ofi/ofi_liveness.h"

#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/log.h"

namespace loom::p2p::ofi {
namespace {

constexpr auto kIdleBeforeProbing = std::chrono::seconds(2);
constexpr auto kStuckBeforeProbing = std::chrono::seconds(2);
constexpr auto kSpacing = std::chrono::seconds(1);  // between probes of one peer
constexpr size_t kPerRound = 4;                     // new probes a round (a second)
constexpr int kMaxInFlight = 16;

double seconds(Liveness::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

void Liveness::configure(std::vector<std::vector<char>> addrs, double timeoutSec) {
  addrs_ = std::move(addrs);
  timeout_ = timeoutSec;
  probing_ = timeout_ > 0 && std::any_of(addrs_.begin(), addrs_.end(),
                                         [](const std::vector<char>& a) { return !a.empty(); });
  lastProbe_.assign(addrs_.size(), Clock::time_point{});
}

Liveness::~Liveness() {
  for (const Probe& p : inFlight_) ::close(p.fd);
}

bool Liveness::start(int peer, Clock::time_point now) {
  if (peer < 0 || peer >= static_cast<int>(addrs_.size()) || addrs_[peer].empty()) return false;
  for (const Probe& p : inFlight_)
    if (p.peer == peer) return false;
  if (static_cast<int>(inFlight_.size()) >= kMaxInFlight) return false;
  const auto* sa = reinterpret_cast<const sockaddr*>(addrs_[peer].data());
  int fd = ::socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int rc = ::connect(fd, sa, static_cast<socklen_t>(addrs_[peer].size()));
  if (log::enabled("p2p")) {
    char host[64] = "?";
    uint16_t port = 0;
    if (sa->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
      inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
      port = ntohs(in->sin_port);
    }
    log::debug("p2p", "ofi: liveness probe of rank %d at %s:%u", peer, host, port);
  }
  // Refused or unreachable at once: judged on the next check like the rest.
  inFlight_.push_back(Probe{fd, peer, now, rc == 0 || errno == EINPROGRESS ? 0 : errno});
  return true;
}

// A probe's answer: "" when the peer is alive (or the probe says nothing).
std::string Liveness::finish(const Probe& p, int err, Clock::time_point now) {
  lastProbe_[p.peer] = now;
  switch (err) {
    case 0:
      return "";
    case ECONNREFUSED:
      return "its libfabric port refuses connections: the process is gone";
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ETIMEDOUT:
      return std::string("its node cannot be reached (") + std::strerror(err) + ")";
    default:
      log::debug("p2p", "ofi: liveness probe of rank %d: %s", p.peer, std::strerror(err));
      return "";
  }
}

std::string Liveness::check(Clock::time_point idleSince, const std::vector<int>& talked,
                            int stuckPeer, Clock::time_point stuckSince, int* dead) {
  const auto now = Clock::now();
  // Answers of the probes in flight.
  for (size_t i = 0; i < inFlight_.size();) {
    Probe& p = inFlight_[i];
    pollfd pfd{p.fd, POLLOUT, 0};
    int err = -1;
    if (p.err) {
      err = p.err;
    } else if (::poll(&pfd, 1, 0) == 1) {
      socklen_t len = sizeof err;
      if (::getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    } else if (seconds(now - p.start) > timeout_) {
      err = ETIMEDOUT;
    }
    if (err < 0) {
      ++i;
      continue;
    }
    const Probe done = p;
    ::close(p.fd);
    inFlight_[i] = inFlight_.back();
    inFlight_.pop_back();
    std::string why = finish(done, err, now);
    if (!why.empty()) {
      *dead = done.peer;
      if (err == ETIMEDOUT && !done.err)
        return "did not answer a connection to its libfabric port within " +
               std::to_string(static_cast<int>(timeout_)) + " s (LOOM_OFI_PEER_TIMEOUT): " + why;
      return "is unreachable: " + why;
    }
  }
  if (!probing_) {
    // No probes possible: only a refusal that lasts counts.
    if (stuckPeer >= 0 && timeout_ > 0 && seconds(now - stuckSince) > 10 * timeout_) {
      *dead = stuckPeer;
      return "has accepted nothing for " + std::to_string(static_cast<int>(10 * timeout_)) +
             " s (10 x LOOM_OFI_PEER_TIMEOUT): it died, or its node lost the network";
    }
    return "";
  }
  if (stuckPeer >= 0 && now - stuckSince > kStuckBeforeProbing &&
      now - lastProbe_[stuckPeer] > kSpacing)
    start(stuckPeer, now);
  if (now - idleSince < kIdleBeforeProbing || now - lastRound_ < kSpacing || talked.empty())
    return "";
  lastRound_ = now;
  for (size_t n = 0; n < std::min(kPerRound, talked.size()); ++n) {
    const int peer = talked[next_++ % talked.size()];
    if (now - lastProbe_[peer] > kSpacing) start(peer, now);
  }
  return "";
}

}  // namespace loom::p2p::ofi
