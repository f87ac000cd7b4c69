// Graph and distributed-graph topologies (MPI 5.0 §8.5.3, §8.5.4, §8.5.5):
// MPI_Graph_create/get/map, MPI_Graphdims_get, MPI_Graph_neighbors(_count),
// MPI_Dist_graph_create(_adjacent), MPI_Dist_graph_neighbors(_count).
//
// A graph topology stores the whole graph (every process passed all of it);
// a distributed graph stores only the caller's adjacency. MPI_Dist_graph_create
// lets any process name any edge, so it redistributes them: every edge
// s -> d is sent to s (an out-edge) and to d (an in-edge) in one
// all-to-all. Each process then lists its edges by the rank that named them
// and, within a rank, in that rank's order: s and d list the edges between
// them in the same order, which is what pairs the k-th message s sends to d
// with the k-th d receives from s in a neighbourhood collective.
//
// Errors: MPI_ERR_TOPOLOGY for a communicator without the right topology,
// MPI_ERR_RANK for a neighbour or rank outside the communicator, MPI_ERR_ARG
// for negative counts or weights, NULL arrays, node counts larger than the
// communicator, and a graph whose index is not non-decreasing.
#include <memory>
#include <vector>

#include "api/comm_internal.h"
#include "api/runtime.h"
#include "api/topo_internal.h"

using loom::Comm;
using loom::errorf;
using loom::ProcTopology;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toComm;

namespace {

int badComm(const char* fn) {
  return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
}

// The graph (nnodes, index, edges) MPI_Graph_create or MPI_Graph_map got.
Status checkGraph(int nnodes, const int* index, const int* edges, int size) {
  if (nnodes < 0) return errorf(MPI_ERR_ARG, "nnodes=%d < 0", nnodes);
  if (nnodes > size)
    return errorf(MPI_ERR_ARG, "nnodes=%d is more than the communicator's %d processes", nnodes,
                  size);
  if (nnodes == 0) return Status::ok();
  if (!index) return errorf(MPI_ERR_ARG, "index is NULL");
  int prev = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < prev)
      return errorf(MPI_ERR_ARG, "index[%d]=%d is less than the previous entry (%d)", i, index[i],
                    prev);
    prev = index[i];
  }
  if (index[nnodes - 1] > 0 && !edges) return errorf(MPI_ERR_ARG, "edges is NULL");
  for (int e = 0; e < index[nnodes - 1]; ++e)
    if (edges[e] < 0 || edges[e] >= nnodes)
      return errorf(MPI_ERR_RANK, "edges[%d]=%d is not a node of the %d-node graph", e, edges[e],
                    nnodes);
  return Status::ok();
}

int graphQuery(MPI_Comm comm, const char* fn, Comm** c, const ProcTopology** t) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  *c = toComm(comm);
  if (!*c) return badComm(fn);
  Status st = loom::api::needTopo(*c, ProcTopology::Kind::kGraph, "graph", t);
  if (!st.isOk()) return raise(*c, st, fn);
  return MPI_SUCCESS;
}

int distQuery(MPI_Comm comm, const char* fn, Comm** c, const ProcTopology** t) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  *c = toComm(comm);
  if (!*c) return badComm(fn);
  Status st = loom::api::needTopo(*c, ProcTopology::Kind::kDistGraph, "distributed graph", t);
  if (!st.isOk()) return raise(*c, st, fn);
  return MPI_SUCCESS;
}

bool isWeightArray(const int* w) {
  return w && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY;
}

// One side (in or out) of a process's adjacency as MPI_Dist_graph_create_adjacent
// gets it: degree, ranks, weights.
Status checkAdjacency(int degree, const int* ranks, const int* weights, bool weighted, int size,
                      const char* what) {
  if (degree < 0) return errorf(MPI_ERR_ARG, "%sdegree=%d < 0", what, degree);
  if (degree == 0) return Status::ok();
  if (!ranks) return errorf(MPI_ERR_ARG, "the %s ranks are NULL", what);
  for (int i = 0; i < degree; ++i)
    if (ranks[i] < 0 || ranks[i] >= size)
      return errorf(MPI_ERR_RANK, "%s neighbour %d is rank %d, not in a %d-process communicator",
                    what, i, ranks[i], size);
  if (!weighted) return Status::ok();
  if (!isWeightArray(weights))
    return errorf(MPI_ERR_ARG, "the %s weights are missing (NULL or MPI_WEIGHTS_EMPTY)", what);
  for (int i = 0; i < degree; ++i)
    if (weights[i] < 0) return errorf(MPI_ERR_ARG, "%s weight %d is %d < 0", what, i, weights[i]);
  return Status::ok();
}

}  // namespace

// ---- Graph -------------------------------------------------------------------

extern "C" int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[],
                                 const int edges[], int reorder, MPI_Comm* comm_graph) {
  static const char* fn = "MPI_Graph_create";
  (void)reorder;
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm_old);
  if (!parent) return badComm(fn);
  if (!comm_graph) return raise(parent, errorf(MPI_ERR_ARG, "comm_graph is NULL"), fn);
  Status st = checkGraph(nnodes, indx, edges, parent->size());
  if (!st.isOk()) return raise(parent, st, fn);
  std::shared_ptr<ProcTopology> t;
  std::vector<int> members = loom::api::firstRanks(nnodes);
  const bool in = parent->rank() < nnodes;
  if (in) {
    t = std::make_shared<ProcTopology>();
    t->kind = ProcTopology::Kind::kGraph;
    t->index.assign(indx, indx + nnodes);
    t->edges.assign(edges, edges + indx[nnodes - 1]);
  }
  st = loom::api::createTopoComm(parent, in ? &members : nullptr, std::move(t), comm_graph);
  if (!st.isOk()) return raise(parent, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Graph_create)

extern "C" int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  static const char* fn = "MPI_Graphdims_get";
  Comm* c;
  const ProcTopology* t;
  if (int rc = graphQuery(comm, fn, &c, &t)) return rc;
  if (!nnodes || !nedges) return raise(c, errorf(MPI_ERR_ARG, "nnodes or nedges is NULL"), fn);
  *nnodes = static_cast<int>(t->index.size());
  *nedges = static_cast<int>(t->edges.size());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Graphdims_get)

// Arrays shorter than the graph get its first maxindex / maxedges entries.
extern "C" int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int indx[],
                              int edges[]) {
  static const char* fn = "MPI_Graph_get";
  Comm* c;
  const ProcTopology* t;
  if (int rc = graphQuery(comm, fn, &c, &t)) return rc;
  if (maxindex < 0 || maxedges < 0)
    return raise(c, errorf(MPI_ERR_ARG, "maxindex=%d or maxedges=%d is negative", maxindex,
                           maxedges),
                 fn);
  if ((maxindex > 0 && !indx) || (maxedges > 0 && !edges))
    return raise(c, errorf(MPI_ERR_ARG, "index or edges is NULL"), fn);
  for (int i = 0; i < maxindex && i < static_cast<int>(t->index.size()); ++i) indx[i] = t->index[i];
  for (int i = 0; i < maxedges && i < static_cast<int>(t->edges.size()); ++i) edges[i] = t->edges[i];
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Graph_get)

extern "C" int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  static const char* fn = "MPI_Graph_neighbors_count";
  Comm* c;
  const ProcTopology* t;
  if (int rc = graphQuery(comm, fn, &c, &t)) return rc;
  if (rank < 0 || rank >= c->size())
    return raise(c, errorf(MPI_ERR_RANK, "rank=%d is not a node of the %d-node graph", rank,
                           c->size()),
                 fn);
  if (!nneighbors) return raise(c, errorf(MPI_ERR_ARG, "nneighbors is NULL"), fn);
  *nneighbors = static_cast<int>(t->graphNeighbors(rank).size());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Graph_neighbors_count)

extern "C" int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  static const char* fn = "MPI_Graph_neighbors";
  Comm* c;
  const ProcTopology* t;
  if (int rc = graphQuery(comm, fn, &c, &t)) return rc;
  if (rank < 0 || rank >= c->size())
    return raise(c, errorf(MPI_ERR_RANK, "rank=%d is not a node of the %d-node graph", rank,
                           c->size()),
                 fn);
  if (maxneighbors < 0)
    return raise(c, errorf(MPI_ERR_ARG, "maxneighbors=%d < 0", maxneighbors), fn);
  if (maxneighbors > 0 && !neighbors)
    return raise(c, errorf(MPI_ERR_ARG, "neighbors is NULL"), fn);
  std::vector<int> n = t->graphNeighbors(rank);
  for (int i = 0; i < maxneighbors && i < static_cast<int>(n.size()); ++i) neighbors[i] = n[i];
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Graph_neighbors)

// Without reordering, a process's node is its own rank.
extern "C" int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int indx[], const int edges[],
                              int* newrank) {
  static const char* fn = "MPI_Graph_map";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!newrank) return raise(c, errorf(MPI_ERR_ARG, "newrank is NULL"), fn);
  Status st = checkGraph(nnodes, indx, edges, c->size());
  if (!st.isOk()) return raise(c, st, fn);
  *newrank = c->rank() < nnodes ? c->rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Graph_map)

// ---- Distributed graph ------------------------------------------------------

// The graph is weighted unless MPI_UNWEIGHTED is given (for either side).
extern "C" int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                               const int sources[], const int sourceweights[],
                                               int outdegree, const int destinations[],
                                               const int destweights[], MPI_Info info,
                                               int reorder, MPI_Comm* comm_dist_graph) {
  static const char* fn = "MPI_Dist_graph_create_adjacent";
  (void)info;
  (void)reorder;
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm_old);
  if (!parent) return badComm(fn);
  if (!comm_dist_graph) return raise(parent, errorf(MPI_ERR_ARG, "comm_dist_graph is NULL"), fn);
  const bool weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
  Status st = checkAdjacency(indegree, sources, sourceweights, weighted, parent->size(), "in");
  if (st.isOk())
    st = checkAdjacency(outdegree, destinations, destweights, weighted, parent->size(), "out");
  if (!st.isOk()) return raise(parent, st, fn);
  auto t = std::make_shared<ProcTopology>();
  t->kind = ProcTopology::Kind::kDistGraph;
  t->weighted = weighted;
  if (indegree > 0) t->sources.assign(sources, sources + indegree);
  if (outdegree > 0) t->destinations.assign(destinations, destinations + outdegree);
  t->sourceWeights.assign(indegree, 1);
  t->destWeights.assign(outdegree, 1);
  if (weighted) {
    if (indegree > 0) t->sourceWeights.assign(sourceweights, sourceweights + indegree);
    if (outdegree > 0) t->destWeights.assign(destweights, destweights + outdegree);
  }
  std::vector<int> members = loom::api::firstRanks(parent->size());
  st = loom::api::createTopoComm(parent, &members, std::move(t), comm_dist_graph);
  if (!st.isOk()) return raise(parent, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Dist_graph_create_adjacent)

// Each process names n sources and, for source i, degrees[i] destinations
// (with weights unless MPI_UNWEIGHTED). The edges travel to both ends in one
// MPI_Alltoallv of (kind, peer, weight) triples after an MPI_Alltoall of
// their counts.
extern "C" int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                      const int degrees[], const int destinations[],
                                      const int weights[], MPI_Info info, int reorder,
                                      MPI_Comm* comm_dist_graph) {
  static const char* fn = "MPI_Dist_graph_create";
  (void)info;
  (void)reorder;
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm_old);
  if (!parent) return badComm(fn);
  if (!comm_dist_graph) return raise(parent, errorf(MPI_ERR_ARG, "comm_dist_graph is NULL"), fn);
  const int p = parent->size();
  const bool weighted = weights != MPI_UNWEIGHTED;
  if (n < 0) return raise(parent, errorf(MPI_ERR_ARG, "n=%d < 0", n), fn);
  if (n > 0 && (!sources || !degrees))
    return raise(parent, errorf(MPI_ERR_ARG, "sources or degrees is NULL"), fn);
  int64_t nedges = 0;
  for (int i = 0; i < n; ++i) {
    if (sources[i] < 0 || sources[i] >= p)
      return raise(parent, errorf(MPI_ERR_RANK, "sources[%d]=%d is not a rank", i, sources[i]),
                   fn);
    if (degrees[i] < 0)
      return raise(parent, errorf(MPI_ERR_ARG, "degrees[%d]=%d < 0", i, degrees[i]), fn);
    nedges += degrees[i];
  }
  if (nedges > 0 && !destinations)
    return raise(parent, errorf(MPI_ERR_ARG, "destinations is NULL"), fn);
  if (nedges > 0 && weighted && !isWeightArray(weights))
    return raise(parent, errorf(MPI_ERR_ARG, "weights is NULL or MPI_WEIGHTS_EMPTY"), fn);
  for (int64_t e = 0; e < nedges; ++e) {
    if (destinations[e] < 0 || destinations[e] >= p)
      return raise(parent,
                   errorf(MPI_ERR_RANK, "destinations[%lld]=%d is not a rank",
                          static_cast<long long>(e), destinations[e]),
                   fn);
    if (weighted && weights[e] < 0)
      return raise(parent,
                   errorf(MPI_ERR_ARG, "weights[%lld]=%d < 0", static_cast<long long>(e),
                          weights[e]),
                   fn);
  }

  // Triples per target rank: kOut "you have an edge to peer", kIn "you have
  // an edge from peer".
  enum : int { kOut = 0, kIn = 1 };
  std::vector<std::vector<int>> out(p);
  int64_t e = 0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < degrees[i]; ++k, ++e) {
      const int s = sources[i], d = destinations[e], w = weighted ? weights[e] : 1;
      out[s].insert(out[s].end(), {kOut, d, w});
      out[d].insert(out[d].end(), {kIn, s, w});
    }
  std::vector<int> sendCounts(p), sendDispls(p), recvCounts(p), recvDispls(p);
  std::vector<int> sendBuf;
  for (int r = 0; r < p; ++r) {
    sendCounts[r] = static_cast<int>(out[r].size());
    sendDispls[r] = static_cast<int>(sendBuf.size());
    sendBuf.insert(sendBuf.end(), out[r].begin(), out[r].end());
  }
  int rc = PMPI_Alltoall(sendCounts.data(), 1, MPI_INT, recvCounts.data(), 1, MPI_INT, comm_old);
  if (rc != MPI_SUCCESS) return rc;
  int total = 0;
  for (int r = 0; r < p; ++r) {
    recvDispls[r] = total;
    total += recvCounts[r];
  }
  std::vector<int> recvBuf(total > 0 ? total : 1);
  sendBuf.resize(sendBuf.empty() ? 1 : sendBuf.size());
  rc = PMPI_Alltoallv(sendBuf.data(), sendCounts.data(), sendDispls.data(), MPI_INT,
                      recvBuf.data(), recvCounts.data(), recvDispls.data(), MPI_INT, comm_old);
  if (rc != MPI_SUCCESS) return rc;

  auto t = std::make_shared<ProcTopology>();
  t->kind = ProcTopology::Kind::kDistGraph;
  t->weighted = weighted;
  for (int i = 0; i + 2 < total; i += 3) {
    if (recvBuf[i] == kOut) {
      t->destinations.push_back(recvBuf[i + 1]);
      t->destWeights.push_back(recvBuf[i + 2]);
    } else {
      t->sources.push_back(recvBuf[i + 1]);
      t->sourceWeights.push_back(recvBuf[i + 2]);
    }
  }
  std::vector<int> members = loom::api::firstRanks(p);
  Status st = loom::api::createTopoComm(parent, &members, std::move(t), comm_dist_graph);
  if (!st.isOk()) return raise(parent, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Dist_graph_create)

extern "C" int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree,
                                               int* weighted) {
  static const char* fn = "MPI_Dist_graph_neighbors_count";
  Comm* c;
  const ProcTopology* t;
  if (int rc = distQuery(comm, fn, &c, &t)) return rc;
  if (!indegree || !outdegree || !weighted)
    return raise(c, errorf(MPI_ERR_ARG, "indegree, outdegree or weighted is NULL"), fn);
  *indegree = static_cast<int>(t->sources.size());
  *outdegree = static_cast<int>(t->destinations.size());
  *weighted = t->weighted ? 1 : 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Dist_graph_neighbors_count)

// Weights are written only for a weighted graph and into real arrays (not
// MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY).
extern "C" int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                         int sourceweights[], int maxoutdegree,
                                         int destinations[], int destweights[]) {
  static const char* fn = "MPI_Dist_graph_neighbors";
  Comm* c;
  const ProcTopology* t;
  if (int rc = distQuery(comm, fn, &c, &t)) return rc;
  const int in = static_cast<int>(t->sources.size());
  const int out = static_cast<int>(t->destinations.size());
  if (maxindegree < in || maxoutdegree < out)
    return raise(c,
                 errorf(MPI_ERR_ARG,
                        "maxindegree=%d or maxoutdegree=%d is less than the degree (%d in, %d out)",
                        maxindegree, maxoutdegree, in, out),
                 fn);
  if ((in > 0 && !sources) || (out > 0 && !destinations))
    return raise(c, errorf(MPI_ERR_ARG, "sources or destinations is NULL"), fn);
  for (int i = 0; i < in; ++i) sources[i] = t->sources[i];
  for (int i = 0; i < out; ++i) destinations[i] = t->destinations[i];
  if (t->weighted) {
    if (isWeightArray(sourceweights))
      for (int i = 0; i < in; ++i) sourceweights[i] = t->sourceWeights[i];
    if (isWeightArray(destweights))
      for (int i = 0; i < out; ++i) destweights[i] = t->destWeights[i];
  }
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Dist_graph_neighbors)
