// libfabric, loaded at run time: the handful of exported functions Loom
// calls (everything else in libfabric's API is inline, through the objects'
// operation tables), and the choice of a provider.
//
// Loom never links libfabric: dlopen() happens only when a job spans nodes,
// because Debian's libfabric.so.1 costs ~200 ms to load (its psm/psm2
// dependencies sleep in their constructors) and its first fi_getinfo ~100 ms
// more (shared/notes/libfabric.md, section 7).
#pragma once

#include <rdma/fabric.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace loom::p2p::ofi {

struct Lib {
  void* handle = nullptr;
  int (*getinfo)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**) = nullptr;
  void (*freeinfo)(fi_info*) = nullptr;
  fi_info* (*dupinfo)(const fi_info*) = nullptr;
  int (*fabric)(fi_fabric_attr*, fid_fabric**, void*) = nullptr;
  const char* (*strerror)(int) = nullptr;
};

// Loads libfabric once (later calls return the same table).
Status loadLib(const Lib** out);

// "name (error text)" for a libfabric return code.
std::string errorText(const Lib& lib, int rc);

// The providers LOOM_OFI_PROVIDER=auto tries, fastest first: efa and
// verbs (real RDMA NICs), then net, then tcp;ofi_rxm. Over TCP, net is the
// faster here: 8 B latency 4.0 against 4.9 us, 16 KiB 7.5 against 19.7 us
// (rxm segments anything above 16 KiB through its bounce buffers; net moves
// a 64 KiB record whole), 1 MiB 134 against 148 us (2 simulated nodes,
// docs/benchmarks.md). sockets and udp;ofi_rxd are slow and only used when
// named.
const std::vector<std::string>& autoProviders();

// fi_getinfo for Loom's needs (RDM, messages, RMA reads, source addresses,
// send-after-send order; RMA writes too where the provider has them: the
// entries' caps then include FI_WRITE) restricted to provider `name`.
// Returns the list (caller frees with lib.freeinfo) or nullptr when the
// provider offers none.
fi_info* query(const Lib& lib, const std::string& name, int* rc);

// The provider LOOM_OFI_PROVIDER asks for: its fi_info list, whose first
// entry (used) is one that does not listen on a loopback address when the
// provider offers one, or an error naming what was tried.
Status chooseProvider(const Lib& lib, const std::string& wanted, fi_info** out);

}  // namespace loom::p2p::ofi
