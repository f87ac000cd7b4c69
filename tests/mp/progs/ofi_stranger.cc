// ofi_stranger: a process outside a Loom job that talks to one rank's
// libfabric endpoint, to check that nothing it sends is ever matched and
// that the rank survives it.
//
//   ofi_stranger PROVIDER fi_sockaddr_in://A.B.C.D:PORT
//
// In turn it: connects with plain TCP and sends 4 KiB of junk; connects and
// streams junk for half a second; connects and stays idle (left open); then
// opens an endpoint of the same libfabric provider and sends records shaped
// like Loom's (a prefix, the 32-byte header of an eager message on
// MPI_COMM_WORLD from rank 0 with tag 0, a payload) with wrong secrets, a
// prefix-only "credit record" granting a million credits, a record larger
// than any receive buffer, and short garbage records. It exits 0 when it
// could deliver all of that (the victim's job checks it was never matched).
// Links libfabric directly: it is a test client, not part of Loom.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "p2p/wire.h"

namespace {

int fail(const char* what, int rc) {
  std::fprintf(stderr, "ofi_stranger: %s: %s\n", what, fi_strerror(rc < 0 ? -rc : rc));
  return 1;
}

bool parseAddr(const std::string& text, sockaddr_in* out) {
  const std::string scheme = "fi_sockaddr_in://";
  if (text.compare(0, scheme.size(), scheme) != 0) return false;
  std::string rest = text.substr(scheme.size());
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos) return false;
  std::memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<uint16_t>(std::atoi(rest.c_str() + colon + 1)));
  return inet_pton(AF_INET, rest.substr(0, colon).c_str(), &out->sin_addr) == 1;
}

int tcpConnect(const sockaddr_in& a) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::vector<char> junk(size_t n, std::mt19937_64& rng) {
  std::vector<char> v(n);
  for (char& c : v) c = static_cast<char>(rng());
  return v;
}

// Plain TCP: junk and close, a stream of junk, an idle connection left open.
int rawTcp(const sockaddr_in& a, std::mt19937_64& rng, int* idleFd) {
  int fd = tcpConnect(a);
  if (fd < 0) return fail("connect", errno);
  auto j = junk(4096, rng);
  (void)!write(fd, j.data(), j.size());
  close(fd);
  fd = tcpConnect(a);
  if (fd < 0) return fail("connect", errno);
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (std::chrono::steady_clock::now() < until) {
    j = junk(1024, rng);
    if (send(fd, j.data(), j.size(), MSG_NOSIGNAL) < 0) break;  // it may hang up on us: fine
  }
  close(fd);
  *idleFd = tcpConnect(a);
  return 0;
}

// Records shaped like Loom's, through a libfabric endpoint of our own.
int fabricRecords(const char* provider, const sockaddr_in& a, std::mt19937_64& rng) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->fabric_attr->prov_name = strdup(provider);
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  if (rc) return fail("fi_getinfo", rc);
  fid_fabric* fabric;
  fid_domain* domain;
  fid_av* av;
  fid_cq* cq;
  fid_ep* ep;
  fi_av_attr avAttr{};
  avAttr.type = FI_AV_TABLE;
  fi_cq_attr cqAttr{};
  cqAttr.format = FI_CQ_FORMAT_CONTEXT;
  if ((rc = fi_fabric(info->fabric_attr, &fabric, nullptr)) ||
      (rc = fi_domain(fabric, info, &domain, nullptr)) ||
      (rc = fi_av_open(domain, &avAttr, &av, nullptr)) ||
      (rc = fi_cq_open(domain, &cqAttr, &cq, nullptr)) ||
      (rc = fi_endpoint(domain, info, &ep, nullptr)) || (rc = fi_ep_bind(ep, &av->fid, 0)) ||
      (rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) || (rc = fi_enable(ep)))
    return fail("opening an endpoint", rc);
  fi_addr_t victim;
  if (fi_av_insert(av, &a, 1, &victim, 0, nullptr) != 1) return fail("fi_av_insert", FI_EINVAL);

  // A Loom-shaped eager record: prefix (secret, credits, reserved), header, payload.
  auto record = [&](uint64_t secret, uint32_t credits, size_t payload) {
    std::vector<char> r(16 + sizeof(loom::p2p::MsgHeader) + payload);
    std::memcpy(r.data(), &secret, 8);
    std::memcpy(r.data() + 8, &credits, 4);
    loom::p2p::MsgHeader h{};
    h.ctx = 0;  // MPI_COMM_WORLD, point-to-point
    h.src = 0;
    h.tag = 0;
    h.kind = loom::p2p::Kind::kEager;
    h.size = payload;
    std::memcpy(r.data() + 16, &h, sizeof h);
    return r;
  };
  std::vector<std::vector<char>> sends;
  for (int i = 0; i < 50; ++i) sends.push_back(record(rng(), 0, 1 + rng() % 200));
  sends.push_back(record(0, 0, 8));
  std::vector<char> credit(16, 0);
  uint32_t million = 1000000;
  uint64_t guess = rng();
  std::memcpy(credit.data(), &guess, 8);
  std::memcpy(credit.data() + 8, &million, 4);
  sends.push_back(credit);
  sends.push_back(record(rng(), 0, 300000));  // larger than any receive buffer
  for (int i = 0; i < 20; ++i) sends.push_back(junk(1 + rng() % 40, rng));

  std::vector<fi_context2> ctx(sends.size());
  size_t done = 0, posted = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (done < sends.size() && std::chrono::steady_clock::now() < deadline) {
    if (posted < sends.size()) {
      ssize_t s = fi_send(ep, sends[posted].data(), sends[posted].size(), nullptr, victim,
                          &ctx[posted]);
      if (s == 0) ++posted;
      else if (s != -FI_EAGAIN) return fail("fi_send", static_cast<int>(s));
    }
    fi_cq_entry e[8];
    ssize_t n = fi_cq_read(cq, e, 8);
    if (n > 0) done += static_cast<size_t>(n);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      fi_cq_readerr(cq, &err, 0);
      ++done;  // refused: fine, the point is that the victim lives
    }
  }
  std::printf("ofi_stranger: %zu of %zu records sent through %s\n", done, sends.size(), provider);
  fi_close(&ep->fid);
  fi_close(&cq->fid);
  fi_close(&av->fid);
  fi_close(&domain->fid);
  fi_close(&fabric->fid);
  fi_freeinfo(info);
  return done == sends.size() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ofi_stranger PROVIDER fi_sockaddr_in://IP:PORT\n");
    return 2;
  }
  sockaddr_in a;
  if (!parseAddr(argv[2], &a)) {
    std::fprintf(stderr, "ofi_stranger: cannot parse %s\n", argv[2]);
    return 2;
  }
  std::mt19937_64 rng(12345);
  int idle = -1;
  if (int rc = rawTcp(a, rng, &idle)) return rc;
  int rc = fabricRecords(argv[1], a, rng);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (idle >= 0) close(idle);
  return rc;
}
