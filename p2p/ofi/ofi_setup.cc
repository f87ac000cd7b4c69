// The libfabric transport's set-up and teardown: loading libfabric, the
// endpoint, the record buffers, the address exchange.
#include <fcntl.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>

#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "p2p/ofi/ofi_state.h"

namespace loom::p2p::ofi {
namespace {

using namespace detail;

// ---- set-up ----

// Tests cross a real veth link by putting each simulated node's ranks in a
// network namespace of its own: LOOM_OFI_NETNS names it (%n: the node id).
// Only this thread moves; PMIx's connection, made before, stays where it was.
Status enterNetns(int nodeId) {
  std::string path = params::getString("LOOM_OFI_NETNS");
  if (path.empty()) return Status::ok();
  size_t at = path.find("%n");
  if (at != std::string::npos) path.replace(at, 2, std::to_string(nodeId));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errorf(MPI_ERR_OTHER, "LOOM_OFI_NETNS: cannot open %s: %s", path.c_str(),
                  std::strerror(errno));
  int rc = setns(fd, CLONE_NEWNET);
  int e = errno;
  ::close(fd);
  if (rc != 0)
    return errorf(MPI_ERR_OTHER, "LOOM_OFI_NETNS: cannot enter %s: %s", path.c_str(),
                  std::strerror(e));
  return Status::ok();
}

size_t sizeParam(const char* name, size_t lo) {
  return std::max<size_t>(lo, static_cast<size_t>(std::max<int64_t>(0, params::getInt(name))));
}

// A size parameter whose default, "auto", depends on the provider.
size_t autoSizeParam(const char* name, size_t automatic, size_t lo) {
  std::string v = params::getString(name);
  return v.empty() || v == "auto" ? automatic : sizeParam(name, lo);
}

// Record buffers as large as the provider moves a message whole: rxm sends
// up to 16 KiB eagerly and segments anything larger through its bounce
// buffers (a 16 KiB message took 19.7 us against 6.8 for 8 KiB), net moves
// 64 KiB as one message (16 KiB 7.5 us, 64 KiB 17 us). 40 bytes of each
// buffer are the record's prefix and header.
size_t defaultBufferBytes(const std::string& provider) {
  if (provider == "net") return 65536 + 64;
  return 16384;
}

Status check(int rc, const char* what) {
  if (rc == 0) return Status::ok();
  return errorf(MPI_ERR_OTHER, "libfabric (%s): %s failed: %s", S.provider.c_str(), what,
                errorText(*S.lib, rc).c_str());
}

Status openEndpoint() {
  fi_info* info = S.info;
  S.provider = info->fabric_attr->prov_name ? info->fabric_attr->prov_name : "?";
  S.mrMode = info->domain_attr->mr_mode;
  S.injectMax = info->tx_attr->inject_size;
  S.canWrite = (info->caps & (FI_WRITE | FI_REMOTE_WRITE)) == (FI_WRITE | FI_REMOTE_WRITE);
  S.maxMsg = info->ep_attr->max_msg_size ? info->ep_attr->max_msg_size : SIZE_MAX;
  LOOM_TRY(check(S.lib->fabric(info->fabric_attr, &S.fabric, nullptr), "fi_fabric"));
  LOOM_TRY(check(fi_domain(S.fabric, info, &S.domain, nullptr), "fi_domain"));
  fi_av_attr av{};
  av.type = FI_AV_TABLE;
  av.count = static_cast<size_t>(S.cfg.jobSize);
  LOOM_TRY(check(fi_av_open(S.domain, &av, &S.av, nullptr), "fi_av_open"));
  fi_cq_attr cq{};
  cq.format = FI_CQ_FORMAT_DATA;
  cq.size = S.rx.size() + S.tx.size() + 256;
  // Only rxm's fd really blocks; net's is always ready but its fi_cq_sread
  // blocks (notes, section 5). Where neither works, waits yield.
  const bool wantFd = S.provider.find("ofi_rxm") != std::string::npos;
  cq.wait_obj = wantFd ? FI_WAIT_FD : FI_WAIT_UNSPEC;
  if (fi_cq_open(S.domain, &cq, &S.cq, nullptr) != 0) {
    cq.wait_obj = FI_WAIT_NONE;
    LOOM_TRY(check(fi_cq_open(S.domain, &cq, &S.cq, nullptr), "fi_cq_open"));
  } else if (!wantFd) {
    S.sread = true;
  } else if (fi_control(&S.cq->fid, FI_GETWAIT, &S.cqFd) == 0) {
    S.epollFd = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (S.epollFd < 0 || epoll_ctl(S.epollFd, EPOLL_CTL_ADD, S.cqFd, &ev) != 0) {
      if (S.epollFd >= 0) ::close(S.epollFd);
      S.epollFd = -1;
    }
  }
  LOOM_TRY(check(fi_endpoint(S.domain, info, &S.ep, nullptr), "fi_endpoint"));
  LOOM_TRY(check(fi_ep_bind(S.ep, &S.av->fid, 0), "fi_ep_bind(av)"));
  LOOM_TRY(check(fi_ep_bind(S.ep, &S.cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)"));
  return check(fi_enable(S.ep), "fi_enable");
}

Status makeBuffers() {
  S.slabBytes = (S.rx.size() + S.tx.size()) * S.bufBytes;
  S.slab = static_cast<char*>(std::aligned_alloc(4096, (S.slabBytes + 4095) / 4096 * 4096));
  if (!S.slab) return errorf(MPI_ERR_NO_MEM, "ofi: %zu bytes of buffers", S.slabBytes);
  if (S.mrMode & FI_MR_LOCAL) {
    Registration* r = acquire(S.slab, S.slabBytes, FI_SEND | FI_RECV);
    if (!r) return errorf(MPI_ERR_OTHER, "ofi: cannot register the record buffers");
    S.slabMr = r->mr;
    S.slabDesc = fi_mr_desc(r->mr);
  }
  char* p = S.slab;
  for (Op& op : S.rx) {
    op.type = Op::kRecv;
    op.buf = p;
    op.len = S.bufBytes;
    p += S.bufBytes;
  }
  for (Op& op : S.tx) {
    op.type = Op::kSend;
    op.buf = p;
    p += S.bufBytes;
    S.freeTx.push_back(&op);
  }
  for (Op& op : S.rx) submit(&op);
  return Status::ok();
}

}  // namespace

using detail::S;

Status setup(const Config& cfg) {
  S = State();
  S.cfg = cfg;
  LOOM_TRY(enterNetns(cfg.nodeId));
  const auto t0 = std::chrono::steady_clock::now();
  LOOM_TRY(loadLib(&S.lib));
  LOOM_TRY(chooseProvider(*S.lib, params::getString("LOOM_OFI_PROVIDER"), &S.info));
  const double loadMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  S.provider = S.info->fabric_attr->prov_name ? S.info->fabric_attr->prov_name : "?";
  S.bufBytes = autoSizeParam("LOOM_OFI_BUFFER_BYTES", defaultBufferBytes(S.provider), 1024);
  S.rx.resize(sizeParam("LOOM_OFI_RX_BUFFERS", 8));
  S.tx.resize(sizeParam("LOOM_OFI_TX_BUFFERS", 8));
  LOOM_TRY(openEndpoint());
  S.open = true;
  LOOM_TRY(makeBuffers());

  char name[256];
  size_t len = sizeof name;
  LOOM_TRY(check(fi_getname(&S.ep->fid, name, &len), "fi_getname"));
  if (getrandom(&S.secret, sizeof S.secret, 0) != sizeof S.secret)
    S.secret = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (static_cast<uint64_t>(getpid()) << 32);
  // Published blob: secret, provider name and its NUL, endpoint name.
  S.myBlob.resize(kSecretBytes);
  std::memcpy(S.myBlob.data(), &S.secret, kSecretBytes);
  S.myBlob.insert(S.myBlob.end(), S.provider.begin(), S.provider.end());
  S.myBlob.push_back('\0');
  S.myBlob.insert(S.myBlob.end(), name, name + len);
  LOOM_TRY(cfg.boot->put("loom.ofi", std::as_bytes(std::span(S.myBlob))));
  if (log::enabled("p2p")) {
    char text[128] = "?";
    size_t textLen = sizeof text;
    fi_av_straddr(S.av, name, text, &textLen);
    log::debug("p2p", "ofi: endpoint %s", text);
  }

  ProtocolLimits& L = S.limits;
  L.maxPayload = (S.bufBytes - kWireHeader) / 64 * 64;
  L.eagerMax = std::min(autoSizeParam("LOOM_OFI_EAGER_MAX", L.maxPayload, 0), L.maxPayload);
  L.inlineMax = std::min(S.injectMax > kWireHeader ? S.injectMax - kWireHeader : 0, L.eagerMax);
  L.getMin = 0;
  L.get = true;
  L.rndv = parseRndv("LOOM_OFI_RNDV");
  L.readChunk = sizeParam("LOOM_OFI_RNDV_CHUNK", 4096);
  L.readDepth = static_cast<int>(sizeParam("LOOM_OFI_RNDV_DEPTH", 1));
  setDeviceLimits(&L, false);  // device buffers between nodes: staged (no FI_HMEM here)
  progress::setIdleWait(idleWait);
  log::debug("p2p",
             "ofi: provider %s (fabric %s, domain %s), libfabric loaded in %.0f ms, "
             "inject %zu B, mr_mode 0x%llx, RMA writes %s, records of %zu B, idle wait %s",
             S.provider.c_str(), S.info->fabric_attr->name ? S.info->fabric_attr->name : "?",
             S.info->domain_attr->name ? S.info->domain_attr->name : "?", loadMs, S.injectMax,
             static_cast<unsigned long long>(S.mrMode), S.canWrite ? "yes" : "no", S.bufBytes,
             cfg.hasLocalPeers ? "yield (shm peers)"
             : S.epollFd >= 0  ? "epoll on the CQ fd"
             : S.sread         ? "fi_cq_sread"
                               : "yield");
  return Status::ok();
}

Status connect() {
  const int n = S.cfg.jobSize;
  const size_t nameAt = kSecretBytes + S.provider.size() + 1;
  const size_t nameLen = S.myBlob.size() - nameAt;
  std::vector<char> names(static_cast<size_t>(n) * nameLen);
  S.secretOf.assign(n, 0);
  S.window = static_cast<uint32_t>(std::max<size_t>(2, sizeParam("LOOM_OFI_CREDITS", 2)));
  S.credits.assign(n, S.window);
  S.owed.assign(n, 0);
  S.talked.assign(n, 0);
  S.lastEvent = S.lastPing = std::chrono::steady_clock::now();
  for (int r = 0; r < n; ++r) {
    std::vector<std::byte> got;
    if (r == S.cfg.myJobRank) {
      auto b = std::as_bytes(std::span(S.myBlob));
      got.assign(b.begin(), b.end());
    } else {
      LOOM_TRY(S.cfg.boot->get(r, "loom.ofi", &got));
    }
    const char* p = reinterpret_cast<const char*>(got.data());
    if (got.size() != S.myBlob.size() ||
        std::memcmp(p + kSecretBytes, S.provider.c_str(), S.provider.size() + 1) != 0) {
      std::string theirs =
          got.size() > kSecretBytes
              ? std::string(p + kSecretBytes, strnlen(p + kSecretBytes, got.size() - kSecretBytes))
              : "?";
      return errorf(MPI_ERR_OTHER,
                    "%s uses libfabric provider %s, this rank %s: set LOOM_OFI_PROVIDER to "
                    "one provider every node has",
                    peerName(r).c_str(), theirs.c_str(), S.provider.c_str());
    }
    std::memcpy(&S.secretOf[r], p, kSecretBytes);
    std::memcpy(names.data() + static_cast<size_t>(r) * nameLen, p + nameAt, nameLen);
  }
  // IP socket addresses can be probed for liveness; other formats cannot.
  std::vector<std::vector<char>> probeAddrs(n);
  const uint32_t fmt = S.info->addr_format;
  if (fmt == FI_SOCKADDR_IN || fmt == FI_SOCKADDR_IN6 || fmt == FI_SOCKADDR) {
    for (int r = 0; r < n; ++r) {
      const char* a = names.data() + static_cast<size_t>(r) * nameLen;
      sa_family_t family;
      std::memcpy(&family, a, sizeof family);
      if (family == AF_INET || family == AF_INET6) probeAddrs[r].assign(a, a + nameLen);
    }
  }
  S.live.configure(std::move(probeAddrs),
                   static_cast<double>(std::max<int64_t>(0, params::getInt("LOOM_OFI_PEER_TIMEOUT"))));
  S.addrOf.assign(n, FI_ADDR_NOTAVAIL);
  int inserted = fi_av_insert(S.av, names.data(), static_cast<size_t>(n), S.addrOf.data(), 0, nullptr);
  if (inserted != n)
    return errorf(MPI_ERR_OTHER, "libfabric (%s): fi_av_insert took %d of %d addresses",
                  S.provider.c_str(), inserted, n);
  S.addrIsRank = true;
  for (int r = 0; r < n; ++r) {
    if (S.addrOf[r] != static_cast<fi_addr_t>(r)) S.addrIsRank = false;
    S.rankOfAddr[S.addrOf[r]] = r;
  }
  if (S.addrIsRank) S.rankOfAddr.clear();
  return Status::ok();
}

void finalize() {
  if (!S.open) return;
  S.open = false;
  progress::setIdleWait(nullptr);
  if (S.ep) fi_close(&S.ep->fid);
  for (Registration* r : S.regs) {
    fi_close(&r->mr->fid);
    delete r;
  }
  S.regs.clear();
  if (S.cq) fi_close(&S.cq->fid);
  if (S.av) fi_close(&S.av->fid);
  if (S.domain) fi_close(&S.domain->fid);
  if (S.fabric) fi_close(&S.fabric->fid);
  if (S.epollFd >= 0) ::close(S.epollFd);
  if (S.info) S.lib->freeinfo(S.info);
  std::free(S.slab);
  if (S.dropped)
    log::debug("p2p", "ofi: %llu messages from outside the job were dropped",
               static_cast<unsigned long long>(S.dropped));
  S = State();
}

}  // namespace loom::p2p::ofi
