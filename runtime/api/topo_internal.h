// What the process-topology entry points share (topo_api.cc,
// topo_graph_api.cc, neighbor_api.cc): reading a communicator's topology
// with the right error, and building the communicator a topology
// constructor returns.
//
// Loom never reorders ranks (`reorder` is accepted and ignored, which the
// standard allows): the new communicator's rank i is the parent's rank i,
// so no process has to move data or learn a permutation.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "core/comm.h"
#include "core/proc_topo.h"
#include "core/status.h"

namespace loom::api {

// The topology of `c`; an MPI_ERR_TOPOLOGY status when it has none, or
// (kind given) one of another kind. `what` names the kind in the message.
Status needTopo(const Comm* c, const ProcTopology** out);
Status needTopo(const Comm* c, ProcTopology::Kind kind, const char* what,
                const ProcTopology** out);

// Collective over `parent`: agrees on one context id for every new
// communicator (they are disjoint, so they may share it), then builds the
// caller's: its members are `members` (parent ranks, in new-rank order),
// it inherits the parent's error handler and carries `topo`. With
// `members` null the caller is in none and gets MPI_COMM_NULL.
Status createTopoComm(Comm* parent, const std::vector<int>* members,
                      std::shared_ptr<const ProcTopology> topo, MPI_Comm* out);

// Parent ranks 0 .. n-1, the members of a topology built on the first n
// processes (MPI_Cart_create, MPI_Graph_create).
std::vector<int> firstRanks(int n);

}  // namespace loom::api
