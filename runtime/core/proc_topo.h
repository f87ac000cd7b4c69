// A communicator's process topology (MPI 5.0 §8): a Cartesian grid, a
// graph, or a distributed graph, as MPI_Cart_create, MPI_Graph_create and
// MPI_Dist_graph_create(_adjacent) attach it.
//
// The description is immutable once built, so communicators share it:
// MPI_Comm_dup hands the new communicator the same object (Comm::topo is a
// shared_ptr) and it goes with the last communicator that names it. The
// API layer (runtime/api/topo_*.cc) builds and reads it; the neighbour
// lists the neighbourhood collectives use are derived here so that every
// caller sees the same order.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace loom {

struct ProcTopology {
  enum class Kind { kCart, kGraph, kDistGraph };
  Kind kind = Kind::kCart;

  // Cartesian: extent and periodicity per dimension (row-major ranks: the
  // last dimension varies fastest).
  std::vector<int> dims;
  std::vector<int> periods;  // 0 or 1

  // Graph (the whole graph, as MPI_Graph_create got it): the neighbours of
  // node i are edges[index[i-1] .. index[i]) (index[-1] = 0).
  std::vector<int> index;
  std::vector<int> edges;

  // Distributed graph: only this process's adjacency. Weights are kept
  // (all 1) even for an unweighted graph; `weighted` says what the user gave.
  std::vector<int> sources, sourceWeights;
  std::vector<int> destinations, destWeights;
  bool weighted = false;

  int ndims() const { return static_cast<int>(dims.size()); }

  // ---- Cartesian helpers ----
  // Coordinates of `rank` (0 <= rank < product of dims).
  void cartCoords(int rank, int* coords) const {
    for (int d = ndims() - 1; d >= 0; --d) {
      coords[d] = rank % dims[d];
      rank /= dims[d];
    }
  }
  // Rank at `coords`, wrapping periodic dimensions; MPI_PROC_NULL when a
  // coordinate of a non-periodic dimension is outside the grid.
  int cartRank(const int* coords) const {
    int rank = 0;
    for (int d = 0; d < ndims(); ++d) {
      int c = coords[d];
      if (c < 0 || c >= dims[d]) {
        if (!periods[d]) return MPI_PROC_NULL;
        c %= dims[d];
        if (c < 0) c += dims[d];
      }
      rank = rank * dims[d] + c;
    }
    return rank;
  }
  // The neighbour `disp` steps along dimension `dim` from `rank`.
  int cartShift(int rank, int dim, int disp) const {
    std::vector<int> c(dims.size());
    cartCoords(rank, c.data());
    c[dim] += disp;
    return cartRank(c.data());
  }

  // ---- Graph helper ----
  // Neighbours of node `rank` in the (whole) graph.
  std::vector<int> graphNeighbors(int rank) const {
    const int begin = rank == 0 ? 0 : index[rank - 1];
    return std::vector<int>(edges.begin() + begin, edges.begin() + index[rank]);
  }

  // ---- What the neighbourhood collectives use ----
  // Block i of a receive buffer comes from inNeighbors(rank)[i]; block i of
  // a send buffer goes to outNeighbors(rank)[i]. For a Cartesian topology
  // both are, per dimension, the -1 then the +1 neighbour (MPI_PROC_NULL at
  // a non-periodic edge); for a graph both are the node's neighbours.
  std::vector<int> inNeighbors(int rank) const {
    switch (kind) {
      case Kind::kCart:
        return cartNeighbors(rank);
      case Kind::kGraph:
        return graphNeighbors(rank);
      case Kind::kDistGraph:
        return sources;
    }
    return {};
  }
  std::vector<int> outNeighbors(int rank) const {
    return kind == Kind::kDistGraph ? destinations : inNeighbors(rank);
  }
  std::vector<int> cartNeighbors(int rank) const {
    std::vector<int> n;
    n.reserve(2 * dims.size());
    for (int d = 0; d < ndims(); ++d) {
      n.push_back(cartShift(rank, d, -1));
      n.push_back(cartShift(rank, d, +1));
    }
    return n;
  }
};

}  // namespace loom
