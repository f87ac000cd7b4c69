// MPI_Type_create_darray: the part of a global array that one process of a
// process grid owns under an HPF distribution (MPI 5.0 §5.1.4).
//
// Terms: dimension d of the global array has gsizes[d] elements and is
// split over psizes[d] processes; this process sits at grid coordinate c[d]
// (the grid is numbered row-major, whatever `order`). A distribution hands
// each coordinate a list of blocks, runs of consecutive global indices:
//   NONE        one block, the whole dimension (psizes[d] must be 1);
//   BLOCK(b)    the one block [c*b, min((c+1)*b, g)), b = ceil(g/p) by
//               default, and b*p must cover g;
//   CYCLIC(k)   blocks of k starting at (j*p + c)*k, j = 0, 1, ... while
//               inside g (the last one maybe shorter); k = 1 by default.
//
// Steps: starting from `old` at the fastest-varying dimension (the last in
// C order, the first in Fortran order), each dimension makes an hindexed
// type of its blocks, whose element is the previous dimension's type
// resized to the byte stride of this dimension. The result is resized to
// lb 0 and the extent of the whole global array, like a subarray.
//
// Cost: O(sum over dimensions of blocks in that dimension) constructor
// calls' worth of work; the flattener merges the regular cyclic blocks
// into strided runs, so cyclic(1) over a long dimension costs one run.
#include <algorithm>
#include <vector>

#include "core/datatype.h"

namespace loom {

namespace {

struct Blocks {
  std::vector<int64_t> starts;  // global index of each block's first element
  std::vector<int64_t> lens;
};

Status blocksOf(int64_t g, int distrib, int darg, int p, int c, size_t d, Blocks* out) {
  switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
      if (p != 1)
        return errorf(MPI_ERR_ARG,
                      "dimension %zu is MPI_DISTRIBUTE_NONE but array_of_psizes[%zu] is %d, "
                      "not 1", d, d, p);
      out->starts.push_back(0);
      out->lens.push_back(g);
      return Status::ok();
    case MPI_DISTRIBUTE_BLOCK: {
      int64_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
      if (b * p < g)
        return errorf(MPI_ERR_ARG,
                      "dimension %zu: block size %lld times %d processes does not cover %lld "
                      "elements", d, (long long)b, p, (long long)g);
      int64_t lo = std::min<int64_t>(c * b, g), hi = std::min<int64_t>((c + 1) * b, g);
      if (hi > lo) {
        out->starts.push_back(lo);
        out->lens.push_back(hi - lo);
      }
      return Status::ok();
    }
    case MPI_DISTRIBUTE_CYCLIC: {
      int64_t k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
      for (int64_t s = int64_t{c} * k; s < g; s += int64_t{p} * k) {
        out->starts.push_back(s);
        out->lens.push_back(std::min(k, g - s));
      }
      return Status::ok();
    }
    default:
      return errorf(MPI_ERR_ARG, "array_of_distribs[%zu] is %d, not an MPI_DISTRIBUTE_* value",
                    d, distrib);
  }
}

}  // namespace

Status typeDarray(int size, int rank, std::span<const int64_t> gsizes,
                  std::span<const int> distribs, std::span<const int> dargs,
                  std::span<const int> psizes, int order, Datatype* old, Datatype** out) {
  if (!old || !old->valid()) return errorf(MPI_ERR_TYPE, "invalid datatype");
  const size_t n = gsizes.size();
  if (n == 0) return errorf(MPI_ERR_ARG, "ndims must be positive");
  if (distribs.size() != n || dargs.size() != n || psizes.size() != n)
    return errorf(MPI_ERR_ARG, "darray argument arrays differ in length");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return errorf(MPI_ERR_ARG, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN (got %d)", order);
  if (size <= 0) return errorf(MPI_ERR_ARG, "size must be positive (got %d)", size);
  if (rank < 0 || rank >= size)
    return errorf(MPI_ERR_ARG, "rank %d is outside [0, %d)", rank, size);
  int64_t procs = 1, elems = 1;
  for (size_t d = 0; d < n; ++d) {
    if (gsizes[d] <= 0) return errorf(MPI_ERR_ARG, "array_of_gsizes[%zu] must be positive", d);
    if (psizes[d] <= 0) return errorf(MPI_ERR_ARG, "array_of_psizes[%zu] must be positive", d);
    if (dargs[d] <= 0 && dargs[d] != MPI_DISTRIBUTE_DFLT_DARG)
      return errorf(MPI_ERR_ARG,
                    "array_of_dargs[%zu] is %d: neither positive nor MPI_DISTRIBUTE_DFLT_DARG",
                    d, dargs[d]);
    procs *= psizes[d];
    if (procs > size)
      return errorf(MPI_ERR_ARG, "the process grid holds more than size (%d) processes", size);
    if (__builtin_mul_overflow(elems, gsizes[d], &elems))
      return errorf(MPI_ERR_ARG, "darray size overflows 64 bits");
  }
  if (procs != size)
    return errorf(MPI_ERR_ARG, "the process grid holds %lld processes, not size (%d)",
                  (long long)procs, size);
  int64_t total;
  if (__builtin_mul_overflow(elems, old->extent() < 0 ? -old->extent() : old->extent(), &total))
    return errorf(MPI_ERR_ARG, "darray extent overflows 64 bits");

  // Row-major grid coordinates of `rank`.
  std::vector<int> coord(n);
  for (size_t d = n, r = rank; d-- > 0;) {
    coord[d] = static_cast<int>(r % psizes[d]);
    r /= psizes[d];
  }

  Datatype* cur = old;
  cur->retain();  // balanced below: every intermediate is released once used
  int64_t stride = old->extent();
  for (size_t i = 0; i < n; ++i) {
    const size_t d = order == MPI_ORDER_C ? n - 1 - i : i;
    Blocks b;
    Status st = blocksOf(gsizes[d], distribs[d], dargs[d], psizes[d], coord[d], d, &b);
    if (!st) {
      cur->release();
      return st;
    }
    // The element of this dimension: the slab so far, repeating every
    // `stride` bytes (old itself, with its own extent, for the first).
    Datatype* elem = cur;
    if (i > 0) {
      st = typeResized(cur, 0, stride, &elem);
      cur->release();
      if (!st) return st;
    }
    for (int64_t& s : b.starts) s *= stride;
    st = typeHindexed(b.lens, b.starts, elem, &cur);
    elem->release();
    if (!st) return st;
    stride *= gsizes[d];
  }
  Datatype* t = nullptr;
  Status st = typeResized(cur, 0, stride, &t);
  cur->release();
  if (!st) return st;
  using A = DatatypeArgs;
  A args;
  args.add(A::kInt, size).add(A::kInt, rank).add(A::kInt, static_cast<int64_t>(n));
  args.add(A::kCount, gsizes);
  for (int x : distribs) args.add(A::kInt, x);
  for (int x : dargs) args.add(A::kInt, x);
  for (int x : psizes) args.add(A::kInt, x);
  args.add(A::kInt, order).type(old);
  t->setConstruction(MPI_COMBINER_DARRAY, std::move(args));
  *out = t;
  return Status::ok();
}

}  // namespace loom
