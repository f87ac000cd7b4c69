/* Shared-memory windows: MPI_Win_allocate_shared on the communicator of
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (one node's ranks; under
 * loomrun --nodes each node has its own), segment sizes that differ by
 * rank, are not multiples of 8 bytes, and are 0 on some ranks (rank 0 in
 * one round), disp_unit by rank.
 * - MPI_Win_shared_query of every rank: size, disp_unit, base; rank
 *   MPI_PROC_NULL gives the first segment of non-zero size; without
 *   alloc_shared_noncontig the segments are contiguous (each non-empty one
 *   starts where the previous non-empty one ends);
 * - direct loads and stores: each rank stores into its own segment, then
 *   into its neighbour's, MPI_Win_sync + barrier + MPI_Win_sync inside a
 *   lock_all epoch, loads of every other segment through the queried
 *   pointers;
 * - Put and Get on the same window with fence, seen by loads;
 * - MPI_WIN_CREATE_FLAVOR == MPI_WIN_FLAVOR_SHARED, MPI_WIN_SIZE,
 *   MPI_WIN_BASE, MPI_WIN_DISP_UNIT;
 * - alloc_shared_noncontig=true: the same without the contiguity check;
 * - the MPI 4 forms MPI_Win_allocate_shared_c, MPI_Win_shared_query_c. */
#include <stdint.h>

#include "rma_checks.h"

static int sr, sn; /* rank and size in the node's communicator */
static MPI_Comm shm;

/* Ints in rank r's segment in round v. */
static int ints(int v, int r) {
  if (v == 0) return r % 3 == 1 ? 0 : 5 * r + 3;
  return r == 0 ? 0 : 4 * r + 1;
}
static int unit(int v, int r) {
  return v == 0 ? (int)sizeof(int) : (r % 2 ? 1 : 4);
}

/* Open MPI 4.1.4 (osc sm) reports some sizes rounded up to a page. */
static MPI_Aint laxSize(MPI_Aint got, int n) {
  MPI_Aint want = n * (MPI_Aint)sizeof(int);
  if (lax() && got > want && got % 4096 == 0) {
    fprintf(stderr, "rma_shared: rank %d: [RMA_PEER_LAX] size %ld reported for %ld\n", wrank,
            (long)got, (long)want);
    return want;
  }
  return got;
}

typedef struct {
  int v, noncontig, large;
  MPI_Win win;
  int** seg; /* every rank's segment, from MPI_Win_shared_query */
} S;

static void query(S* s, int r, MPI_Aint* size, MPI_Aint* du, int** base) {
#if MPI_VERSION >= 4
  if (s->large) {
    OK(MPI_Win_shared_query_c(s->win, r, size, du, base));
    return;
  }
#endif
  int d = -1;
  OK(MPI_Win_shared_query(s->win, r, size, &d, base));
  *du = d;
}

static void exercise(int v, int noncontig, int large) {
  S s = {v, noncontig, large, MPI_WIN_NULL, NULL};
  MPI_Info info = MPI_INFO_NULL;
  if (noncontig) {
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
  }
  int* mine = NULL;
  MPI_Aint bytes = ints(v, sr) * (MPI_Aint)sizeof(int);
#if MPI_VERSION >= 4
  if (large)
    OK(MPI_Win_allocate_shared_c(bytes, unit(v, sr), info, shm, &mine, &s.win));
  else
#endif
    OK(MPI_Win_allocate_shared(bytes, unit(v, sr), info, shm, &mine, &s.win));
  if (info != MPI_INFO_NULL) OK(MPI_Info_free(&info));
  OK(MPI_Win_set_errhandler(s.win, MPI_ERRORS_RETURN));
  if (bytes > 0) CHECK(mine != NULL);

  /* Attributes. */
  int *f = NULL, *d = NULL, flag = 0;
  MPI_Aint* sz = NULL;
  void* b = NULL;
  OK(MPI_Win_get_attr(s.win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
  CHECK(flag && f);
  EQ(*f, MPI_WIN_FLAVOR_SHARED);
  OK(MPI_Win_get_attr(s.win, MPI_WIN_SIZE, &sz, &flag));
  CHECK(flag && sz);
  EQ(*sz, bytes);
  OK(MPI_Win_get_attr(s.win, MPI_WIN_DISP_UNIT, &d, &flag));
  CHECK(flag && d);
  EQ(*d, unit(v, sr));
  OK(MPI_Win_get_attr(s.win, MPI_WIN_BASE, &b, &flag));
  CHECK(flag);
  if (bytes > 0) CHECK(b == (void*)mine);

  /* Every rank's segment. */
  s.seg = malloc(sizeof(int*) * (size_t)sn);
  char* end = NULL; /* where the last non-empty segment ended */
  int first = -1;
  for (int r = 0; r < sn; ++r) {
    MPI_Aint size = -1, du = -1;
    int* base = NULL;
    query(&s, r, &size, &du, &base);
    size = laxSize(size, ints(v, r));
    EQ(size, ints(v, r) * (MPI_Aint)sizeof(int));
    EQ(du, unit(v, r));
    s.seg[r] = base;
    if (r == sr && bytes > 0) CHECK(base == mine);
    if (size == 0) continue;
    CHECK(base != NULL);
    if (first < 0) first = r;
    if (!noncontig && end) {
      if ((char*)base != end)
        fprintf(stderr, "rma_shared: rank %d: segment %d at %p, previous ends at %p\n", wrank, r,
                (void*)base, (void*)end);
      CHECK((char*)base == end);
    }
    end = (char*)base + size;
  }
  /* MPI_PROC_NULL: the first non-empty segment. */
  MPI_Aint size = -1, du = -1;
  int* base = NULL;
  query(&s, MPI_PROC_NULL, &size, &du, &base);
  if (first >= 0) {
    size = laxSize(size, ints(v, first));
    EQ(size, ints(v, first) * (MPI_Aint)sizeof(int));
    EQ(du, unit(v, first));
    CHECK(base == s.seg[first]);
  } else {
    EQ(size, 0);
  }

  /* Loads and stores. */
  int n = ints(v, sr), nx = (sr + 1) % sn, pv = (sr + sn - 1) % sn;
  OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, s.win));
  for (int i = 0; i < n; ++i) mine[i] = sr * 1000 + i;
  OK(MPI_Win_sync(s.win));
  OK(MPI_Barrier(shm));
  OK(MPI_Win_sync(s.win));
  for (int r = 0; r < sn; ++r)
    for (int i = 0; i < ints(v, r); ++i) EQ(s.seg[r][i], r * 1000 + i);
  OK(MPI_Barrier(shm)); /* everyone has read before anyone stores again */
  for (int i = 0; i < ints(v, nx); ++i) s.seg[nx][i] = sr * 1000 + 500 + i;
  OK(MPI_Win_sync(s.win));
  OK(MPI_Barrier(shm));
  OK(MPI_Win_sync(s.win));
  for (int i = 0; i < n; ++i) EQ(mine[i], pv * 1000 + 500 + i);
  OK(MPI_Win_unlock_all(s.win));

  /* Put and Get (displacements in the target's unit), seen by loads. */
  int val = sr * 1000 + 900, got = -1;
  OK(MPI_Barrier(shm));
  OK(MPI_Win_fence(0, s.win));
  if (ints(v, nx) > 0) OK(MPI_Put(&val, 1, MPI_INT, nx, 0, 1, MPI_INT, s.win));
  if (ints(v, pv) > 1)
    OK(MPI_Get(&got, 1, MPI_INT, pv, (MPI_Aint)sizeof(int) / unit(v, pv), 1, MPI_INT, s.win));
  OK(MPI_Win_fence(0, s.win));
  if (n > 0) EQ(mine[0], pv * 1000 + 900);
  if (ints(v, pv) > 1) EQ(got, ((pv + sn - 1) % sn) * 1000 + 500 + 1);
  OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, s.win));
  OK(MPI_Win_free(&s.win));
  free(s.seg);
}

int main(int argc, char** argv) {
  prog = "rma_shared";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
  OK(MPI_Comm_rank(shm, &sr));
  OK(MPI_Comm_size(shm, &sn));
  exercise(0, 0, 0);
  exercise(1, 0, 0);
  exercise(0, 1, 0);
  exercise(1, 1, 0);
#if MPI_VERSION >= 4
  exercise(0, 0, 1);
  exercise(1, 1, 1);
#endif
  OK(MPI_Comm_free(&shm));
  OK(MPI_Finalize());
  passed();
  return 0;
}
