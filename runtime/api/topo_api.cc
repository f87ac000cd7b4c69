// Cartesian process topologies (MPI 5.0 §8.5.1-8.5.5, §8.6, §8.7):
// MPI_Dims_create, MPI_Cart_create/get/rank/coords/shift/sub/map,
// MPI_Cartdim_get and MPI_Topo_test, plus what every topology constructor
// shares (topo_internal.h).
//
// A grid is row-major over the parent's first dims[0]*...*dims[n-1] ranks
// (Loom does not reorder); the processes beyond it get MPI_COMM_NULL.
// Every query is local: the grid's shape is all a process needs to compute
// any rank's coordinates and neighbours.
//
// Error classes: MPI_ERR_TOPOLOGY for a communicator without a Cartesian
// topology, MPI_ERR_DIMS for a negative ndims, a non-positive extent or a
// Dims_create that cannot be satisfied, MPI_ERR_RANK for a rank outside the
// communicator, MPI_ERR_ARG for everything else (NULL arrays, a grid larger
// than the communicator, a coordinate outside a non-periodic dimension, a
// shift direction that is not a dimension).
#include <algorithm>
#include <cmath>
#include <cstdint>
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

namespace loom::api {

Status needTopo(const Comm* c, const ProcTopology** out) {
  *out = c->topo().get();
  if (!*out) return errorf(MPI_ERR_TOPOLOGY, "the communicator has no process topology");
  return Status::ok();
}

Status needTopo(const Comm* c, ProcTopology::Kind kind, const char* what,
                const ProcTopology** out) {
  *out = c->topo().get();
  if (!*out || (*out)->kind != kind)
    return errorf(MPI_ERR_TOPOLOGY, "the communicator has no %s topology", what);
  return Status::ok();
}

Status createTopoComm(Comm* parent, const std::vector<int>* members,
                      std::shared_ptr<const ProcTopology> topo, MPI_Comm* out) {
  uint32_t ctx;
  LOOM_TRY(agreeContextId(parent, &ctx));
  if (!members) {
    *out = MPI_COMM_NULL;
    return Status::ok();
  }
  std::vector<int> jobRanks;
  jobRanks.reserve(members->size());
  for (int r : *members) jobRanks.push_back(parent->worldRank(r));
  contextIds().take(ctx);
  auto* g = new Group(std::move(jobRanks));
  auto* c = new Comm(ctx, g, g->rankOf(rt().proc.rank), "");
  c->setOwnsContextId(true);
  c->setErrhandler(parent->errhandler());
  c->setOrigin(std::string(topo->kind == ProcTopology::Kind::kCart    ? "cartesian topology"
                           : topo->kind == ProcTopology::Kind::kGraph ? "graph topology"
                                                                      : "distributed graph topology") +
               " of " + commLabel(parent));
  c->setTopo(std::move(topo));
  *out = toHandle(c);
  return Status::ok();
}

std::vector<int> firstRanks(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace loom::api

namespace {

int badComm(const char* fn) {
  return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
}

// The grid (ndims, dims, periods) a constructor or MPI_Cart_map got, with
// its number of processes in *nodes.
Status checkGrid(int ndims, const int* dims, const int* periods, int size, int* nodes) {
  if (ndims < 0) return errorf(MPI_ERR_DIMS, "ndims=%d < 0", ndims);
  if (ndims > 0 && (!dims || !periods)) return errorf(MPI_ERR_ARG, "dims or periods is NULL");
  int64_t n = 1;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] <= 0) return errorf(MPI_ERR_DIMS, "dims[%d]=%d is not positive", d, dims[d]);
    n *= dims[d];
    if (n > size)
      return errorf(MPI_ERR_ARG, "the grid has more processes than the communicator (%d)", size);
  }
  *nodes = static_cast<int>(n);
  return Status::ok();
}

std::shared_ptr<ProcTopology> cartTopo(int ndims, const int* dims, const int* periods) {
  auto t = std::make_shared<ProcTopology>();
  t->kind = ProcTopology::Kind::kCart;
  t->dims.assign(dims, dims + ndims);
  t->periods.resize(ndims);
  for (int d = 0; d < ndims; ++d) t->periods[d] = periods[d] ? 1 : 0;
  return t;
}

// ---- MPI_Dims_create: the most balanced factorization ----------------------
//
// The free entries get factors of nnodes / (product of the preset ones)
// whose spread (largest - smallest) is the least possible; among equal
// spreads, the one with the smallest largest factor. A depth-first search
// over divisors, largest factor first, pruned by the bound "the smallest
// factor cannot exceed the (slots)-th root of what is left". Assigning
// prime factors greedily (the usual shortcut) is cheaper but not always
// optimal; the search is exact, and its cost (a few divisors of an int per
// slot) is nothing next to creating the communicator that follows.
struct Factorizer {
  std::vector<int> divisors;  // of the free product, ascending
  std::vector<int> cur, best;
  int64_t bestSpread = INT64_MAX;
  int bestMax = INT32_MAX;

  static int64_t rootFloor(int64_t r, int j) {  // floor(r^(1/j)), j >= 1
    int64_t x = static_cast<int64_t>(std::pow(static_cast<double>(r), 1.0 / j));
    auto powLe = [&](int64_t b) {  // b^j <= r ?
      int64_t p = 1;
      for (int i = 0; i < j; ++i) {
        p *= b;
        if (p > r) return false;
      }
      return true;
    };
    while (x > 0 && !powLe(x)) --x;
    while (powLe(x + 1)) ++x;
    return x;
  }

  // Fills `slots` more factors, each <= maxF, whose product is r.
  void search(int64_t r, int slots, int64_t maxF) {
    if (slots == 1) {
      if (r > maxF) return;
      const int64_t first = cur.empty() ? r : cur.front();
      const int64_t spread = first - r;
      if (spread < bestSpread || (spread == bestSpread && first < bestMax)) {
        best = cur;
        best.push_back(static_cast<int>(r));
        bestSpread = spread;
        bestMax = static_cast<int>(first);
      }
      return;
    }
    const int64_t lo = rootFloor(r, slots);  // the largest factor is at least this
    for (int f : divisors) {
      if (f < lo || r % f) continue;
      if (f > maxF) break;
      const int64_t first = cur.empty() ? f : cur.front();
      // The smallest factor of what follows is at most (r/f)^(1/(slots-1)).
      const int64_t bound = first - rootFloor(r / f, slots - 1);
      if (bound > bestSpread) {
        if (cur.empty()) break;  // grows with f at the top level
        continue;
      }
      cur.push_back(f);
      search(r / f, slots - 1, f);
      cur.pop_back();
    }
  }
};

std::vector<int> balancedFactors(int n, int slots) {
  Factorizer fz;
  for (int d = 1; static_cast<int64_t>(d) * d <= n; ++d)
    if (n % d == 0) {
      fz.divisors.push_back(d);
      if (d != n / d) fz.divisors.push_back(n / d);
    }
  std::sort(fz.divisors.begin(), fz.divisors.end());
  fz.search(n, slots, n);
  return fz.best;  // non-increasing
}

}  // namespace

extern "C" int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  static const char* fn = "MPI_Dims_create";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (ndims < 0) return raise(nullptr, errorf(MPI_ERR_DIMS, "ndims=%d < 0", ndims), fn);
  if (ndims > 0 && !dims) return raise(nullptr, errorf(MPI_ERR_ARG, "dims is NULL"), fn);
  if (nnodes < 1)
    return raise(nullptr, errorf(MPI_ERR_DIMS, "nnodes=%d is not positive", nnodes), fn);
  int64_t preset = 1;
  int free = 0;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] < 0)
      return raise(nullptr, errorf(MPI_ERR_DIMS, "dims[%d]=%d is negative", d, dims[d]), fn);
    if (dims[d] == 0) {
      ++free;
    } else {
      preset *= dims[d];
      if (preset > nnodes) break;  // reported below
    }
  }
  if (preset > nnodes || nnodes % preset != 0)
    return raise(nullptr,
                 errorf(MPI_ERR_DIMS, "the preset dims do not divide nnodes=%d", nnodes), fn);
  const int rest = static_cast<int>(nnodes / preset);
  if (free == 0) {
    if (rest != 1)
      return raise(nullptr,
                   errorf(MPI_ERR_DIMS, "the preset dims multiply to %lld, not nnodes=%d",
                          static_cast<long long>(preset), nnodes),
                   fn);
    return MPI_SUCCESS;
  }
  std::vector<int> f = balancedFactors(rest, free);
  size_t next = 0;
  for (int d = 0; d < ndims; ++d)
    if (dims[d] == 0) dims[d] = f[next++];
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Dims_create)

extern "C" int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                                const int periods[], int reorder, MPI_Comm* comm_cart) {
  static const char* fn = "MPI_Cart_create";
  (void)reorder;
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm_old);
  if (!parent) return badComm(fn);
  if (!comm_cart) return raise(parent, errorf(MPI_ERR_ARG, "comm_cart is NULL"), fn);
  int nodes = 0;
  Status st = checkGrid(ndims, dims, periods, parent->size(), &nodes);
  if (!st.isOk()) return raise(parent, st, fn);
  std::vector<int> members = loom::api::firstRanks(nodes);
  const bool in = parent->rank() < nodes;
  st = loom::api::createTopoComm(parent, in ? &members : nullptr,
                                 in ? cartTopo(ndims, dims, periods) : nullptr, comm_cart);
  if (!st.isOk()) return raise(parent, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Cart_create)

namespace {

// The frame of the Cartesian queries: running, valid communicator, a
// Cartesian topology.
int cartQuery(MPI_Comm comm, const char* fn, Comm** c, const ProcTopology** t) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  *c = toComm(comm);
  if (!*c) return badComm(fn);
  Status st = loom::api::needTopo(*c, ProcTopology::Kind::kCart, "Cartesian", t);
  if (!st.isOk()) return raise(*c, st, fn);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  static const char* fn = "MPI_Cartdim_get";
  Comm* c;
  const ProcTopology* t;
  if (int rc = cartQuery(comm, fn, &c, &t)) return rc;
  if (!ndims) return raise(c, errorf(MPI_ERR_ARG, "ndims is NULL"), fn);
  *ndims = t->ndims();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Cartdim_get)

extern "C" int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                             int coords[]) {
  static const char* fn = "MPI_Cart_get";
  Comm* c;
  const ProcTopology* t;
  if (int rc = cartQuery(comm, fn, &c, &t)) return rc;
  const int n = t->ndims();
  if (maxdims < n)
    return raise(c, errorf(MPI_ERR_ARG, "maxdims=%d is less than the %d dimensions", maxdims, n),
                 fn);
  if (n > 0 && (!dims || !periods || !coords))
    return raise(c, errorf(MPI_ERR_ARG, "dims, periods or coords is NULL"), fn);
  for (int d = 0; d < n; ++d) {
    dims[d] = t->dims[d];
    periods[d] = t->periods[d];
  }
  t->cartCoords(c->rank(), coords);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Cart_get)

extern "C" int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  static const char* fn = "MPI_Cart_rank";
  Comm* c;
  const ProcTopology* t;
  if (int rc = cartQuery(comm, fn, &c, &t)) return rc;
  if (!rank || (t->ndims() > 0 && !coords))
    return raise(c, errorf(MPI_ERR_ARG, "coords or rank is NULL"), fn);
  for (int d = 0; d < t->ndims(); ++d)
    if (!t->periods[d] && (coords[d] < 0 || coords[d] >= t->dims[d]))
      return raise(c,
                   errorf(MPI_ERR_ARG,
                          "coords[%d]=%d is outside the non-periodic dimension of extent %d", d,
                          coords[d], t->dims[d]),
                   fn);
  *rank = t->cartRank(coords);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Cart_rank)

extern "C" int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  static const char* fn = "MPI_Cart_coords";
  Comm* c;
  const ProcTopology* t;
  if (int rc = cartQuery(comm, fn, &c, &t)) return rc;
  if (rank < 0 || rank >= c->size())
    return raise(c, errorf(MPI_ERR_RANK, "rank=%d is not a rank of the communicator (size %d)",
                           rank, c->size()),
                 fn);
  if (maxdims < t->ndims())
    return raise(c, errorf(MPI_ERR_ARG, "maxdims=%d is less than the %d dimensions", maxdims,
                           t->ndims()),
                 fn);
  if (t->ndims() > 0 && !coords) return raise(c, errorf(MPI_ERR_ARG, "coords is NULL"), fn);
  t->cartCoords(rank, coords);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Cart_coords)

extern "C" int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source,
                               int* rank_dest) {
  static const char* fn = "MPI_Cart_shift";
  Comm* c;
  const ProcTopology* t;
  if (int rc = cartQuery(comm, fn, &c, &t)) return rc;
  if (!rank_source || !rank_dest)
    return raise(c, errorf(MPI_ERR_ARG, "rank_source or rank_dest is NULL"), fn);
  if (direction < 0 || direction >= t->ndims())
    return raise(c, errorf(MPI_ERR_ARG, "direction=%d is not a dimension (ndims %d)", direction,
                           t->ndims()),
                 fn);
  // Shifting by a multiple of a periodic extent is the identity; the
  // modulo keeps disp + coordinate clear of overflow.
  int64_t step = disp;
  if (t->periods[direction]) step %= t->dims[direction];
  else if (step > t->dims[direction] || step < -t->dims[direction])
    step = step > 0 ? t->dims[direction] : -t->dims[direction];  // off the grid either way
  *rank_dest = t->cartShift(c->rank(), direction, static_cast<int>(step));
  *rank_source = t->cartShift(c->rank(), direction, static_cast<int>(-step));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Cart_shift)

// The processes that agree with the caller on every dropped coordinate form
// its subgrid, in the order of their ranks (which is row-major over the
// kept dimensions). Dropping every dimension leaves each process alone in a
// zero-dimensional grid.
extern "C" int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  static const char* fn = "MPI_Cart_sub";
  Comm* c;
  const ProcTopology* t;
  if (int rc = cartQuery(comm, fn, &c, &t)) return rc;
  const int n = t->ndims();
  if (!newcomm || (n > 0 && !remain_dims))
    return raise(c, errorf(MPI_ERR_ARG, "remain_dims or newcomm is NULL"), fn);
  auto sub = std::make_shared<ProcTopology>();
  sub->kind = ProcTopology::Kind::kCart;
  for (int d = 0; d < n; ++d)
    if (remain_dims[d]) {
      sub->dims.push_back(t->dims[d]);
      sub->periods.push_back(t->periods[d]);
    }
  std::vector<int> mine(n), theirs(n), members;
  t->cartCoords(c->rank(), mine.data());
  for (int q = 0; q < c->size(); ++q) {
    t->cartCoords(q, theirs.data());
    bool same = true;
    for (int d = 0; d < n && same; ++d) same = remain_dims[d] || theirs[d] == mine[d];
    if (same) members.push_back(q);
  }
  Status st = loom::api::createTopoComm(c, &members, std::move(sub), newcomm);
  if (!st.isOk()) return raise(c, st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Cart_sub)

// Without reordering, a process's place in the grid is its own rank.
extern "C" int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                             int* newrank) {
  static const char* fn = "MPI_Cart_map";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!newrank) return raise(c, errorf(MPI_ERR_ARG, "newrank is NULL"), fn);
  int nodes = 0;
  Status st = checkGrid(ndims, dims, periods, c->size(), &nodes);
  if (!st.isOk()) return raise(c, st, fn);
  *newrank = c->rank() < nodes ? c->rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Cart_map)

extern "C" int PMPI_Topo_test(MPI_Comm comm, int* status) {
  static const char* fn = "MPI_Topo_test";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!status) return raise(c, errorf(MPI_ERR_ARG, "status is NULL"), fn);
  const ProcTopology* t = c->topo().get();
  if (!t) {
    *status = MPI_UNDEFINED;
  } else {
    switch (t->kind) {
      case ProcTopology::Kind::kCart:
        *status = MPI_CART;
        break;
      case ProcTopology::Kind::kGraph:
        *status = MPI_GRAPH;
        break;
      case ProcTopology::Kind::kDistGraph:
        *status = MPI_DIST_GRAPH;
        break;
    }
  }
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Topo_test)
