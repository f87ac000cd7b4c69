#include "p2p/ofi/ofi_lib.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/log.h"
#include "core/params.h"
#include "p2p/ofi/ofi_transport.h"

namespace loom::p2p::ofi {
namespace {

Lib gLib;
Status gLoadStatus;
bool gTried = false;

template <class F>
bool resolve(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(h, name));
  return *out != nullptr;
}

}  // namespace

Status loadLib(const Lib** out) {
  if (!gTried) {
    gTried = true;
    // rxm looks for connection events every FI_OFI_RXM_CM_PROGRESS_INTERVAL
    // us (default 10000): a first message to a peer then waits ~30 ms for
    // its connection, against ~10 ms at 100 (notes, section 2). A user's
    // own setting wins. libfabric reads its variables at its first call.
    setenv("FI_OFI_RXM_CM_PROGRESS_INTERVAL", "100", 0);
    // Debian's libfabric links the PSM providers' libraries, whose
    // constructors take over SIGSEGV and write a "<prog>.80s-<pid>,<host>.btr"
    // file into the working directory on a crash: a file left behind,
    // and Loom's own fault report lost. Off unless the user asks.
    setenv("IPATH_NO_BACKTRACE", "1", 0);
    setenv("HFI_NO_BACKTRACE", "1", 0);
    void* h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      gLoadStatus = errorf(MPI_ERR_UNSUPPORTED_OPERATION,
                           "cannot load libfabric (%s); it is needed to reach ranks on other "
                           "nodes (apt-get install libfabric1)",
                           e ? e : "dlopen failed");
    } else if (!resolve(h, "fi_getinfo", &gLib.getinfo) ||
               !resolve(h, "fi_freeinfo", &gLib.freeinfo) ||
               !resolve(h, "fi_dupinfo", &gLib.dupinfo) ||
               !resolve(h, "fi_fabric", &gLib.fabric) ||
               !resolve(h, "fi_strerror", &gLib.strerror)) {
      gLoadStatus = errorf(MPI_ERR_UNSUPPORTED_OPERATION,
                           "libfabric.so.1 lacks a function Loom needs (%s)", dlerror());
      dlclose(h);
    } else {
      gLib.handle = h;
    }
  }
  if (!gLoadStatus.isOk()) return gLoadStatus;
  *out = &gLib;
  return Status::ok();
}

std::string errorText(const Lib& lib, int rc) {
  int e = rc < 0 ? -rc : rc;
  return std::string(lib.strerror ? lib.strerror(e) : "?") + " (" + std::to_string(e) + ")";
}

const std::vector<std::string>& autoProviders() {
  static const std::vector<std::string> kList = {"efa", "verbs;ofi_rxm", "net", "tcp;ofi_rxm"};
  return kList;
}

namespace {

fi_info* queryCaps(const Lib& lib, const std::string& name, uint64_t caps, int* rc) {
  fi_info* hints = lib.dupinfo(nullptr);
  if (!hints) {
    *rc = -FI_ENOMEM;
    return nullptr;
  }
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = caps;
  // Every operation carries its own fi_context2, so either mode bit is fine.
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  // Every registration mode Loom copes with; the provider keeps those it needs.
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
  // Records to one peer must arrive in the order they were sent (MPI's
  // non-overtaking rule rests on it).
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  hints->fabric_attr->prov_name = strdup(name.c_str());  // freed with the hints
  fi_info* info = nullptr;
  *rc = lib.getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info);
  lib.freeinfo(hints);
  if (*rc != 0) return nullptr;
  return info;
}

}  // namespace

fi_info* query(const Lib& lib, const std::string& name, int* rc) {
  constexpr uint64_t kBase = FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ | FI_SOURCE;
  // RMA writes (the rma layer's puts between nodes) where the provider has
  // them; without, the transport still works and puts go by message.
  if (fi_info* info = queryCaps(lib, name, kBase | FI_WRITE | FI_REMOTE_WRITE, rc)) return info;
  return queryCaps(lib, name, kBase, rc);
}

namespace {

// Whether an fi_info entry's endpoint would listen on a loopback address
// (127.0.0.0/8, ::1), which no other node can reach.
bool isLoopback(const fi_info* info) {
  if (!info->src_addr) return false;
  const auto* sa = static_cast<const sockaddr*>(info->src_addr);
  if (sa->sa_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
  return false;
}

// Moves the first entry that other nodes can reach to the front of the
// list (its order follows the interfaces' and differs between hosts and
// network namespaces: lo came first in one namespace of the netns test).
fi_info* preferReachable(fi_info* list) {
  fi_info* prev = nullptr;
  for (fi_info* it = list; it; prev = it, it = it->next) {
    if (isLoopback(it)) continue;
    if (prev) {
      prev->next = it->next;
      it->next = list;
      list = it;
    }
    break;
  }
  return list;
}

}  // namespace

Status chooseProvider(const Lib& lib, const std::string& wanted, fi_info** out) {
  std::vector<std::string> tries =
      wanted.empty() || wanted == "auto" ? autoProviders() : std::vector<std::string>{wanted};
  std::string tried;
  for (const std::string& name : tries) {
    int rc = 0;
    if (fi_info* info = query(lib, name, &rc)) {
      *out = preferReachable(info);
      return Status::ok();
    }
    if (!tried.empty()) tried += ", ";
    tried += name + ": " + errorText(lib, rc);
  }
  return errorf(MPI_ERR_UNSUPPORTED_OPERATION,
                "no libfabric provider can reach other nodes (LOOM_OFI_PROVIDER=%s; tried %s)",
                wanted.c_str(), tried.c_str());
}

std::string describeProviders() {
  const Lib* lib = nullptr;
  Status st = loadLib(&lib);
  if (!st.isOk()) return st.message() + "\n";
  std::string out;
  std::string wanted = params::getString("LOOM_OFI_PROVIDER");
  std::vector<std::string> names = autoProviders();
  if (!wanted.empty() && wanted != "auto" &&
      std::find(names.begin(), names.end(), wanted) == names.end())
    names.push_back(wanted);
  for (const std::string& name : names) {
    int rc = 0;
    fi_info* info = query(*lib, name, &rc);
    char line[512];
    if (info) {
      std::snprintf(line, sizeof line, "    %-14s yes: fabric %s, domain %s, inject %zu B\n",
                    name.c_str(), info->fabric_attr->name ? info->fabric_attr->name : "?",
                    info->domain_attr->name ? info->domain_attr->name : "?",
                    info->tx_attr->inject_size);
      lib->freeinfo(info);
    } else {
      std::snprintf(line, sizeof line, "    %-14s no (%s)\n", name.c_str(),
                    errorText(*lib, rc).c_str());
    }
    out += line;
  }
  fi_info* chosen = nullptr;
  st = chooseProvider(*lib, wanted, &chosen);
  if (st.isOk()) {
    out += std::string("    between nodes Loom would use: ") + chosen->fabric_attr->prov_name + "\n";
    lib->freeinfo(chosen);
  } else {
    out += "    " + st.message() + "\n";
  }
  return out;
}

}  // namespace loom::p2p::ofi
