/* Passive target without the target: rank 0 exposes a window and then
 * computes, making no MPI call, until the value it waits for shows up in
 * its own window memory; every other rank locks rank 0 exclusively,
 * increments a counter there with MPI_Fetch_and_op, reads it back with
 * MPI_Get, and unlocks. Rank 0 sees the counter reach np - 1 only if the
 * origins' epochs complete while it computes: on one node they need
 * nothing from it (shared memory), across nodes (loomrun --nodes) the
 * progress thread serves them.
 *
 *   rma_passive [seconds [expect]]   expect: "progress" (default) or
 *                                     "stall" (LOOM_ASYNC_PROGRESS=0 across
 *                                     nodes: the counter must NOT arrive
 *                                     within `seconds`)
 * Prints "rma_passive: rank R ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  double seconds = argc > 1 ? atof(argv[1]) : 30;
  int stall = argc > 2 && strcmp(argv[2], "stall") == 0;
  for (int flavor = 0; flavor < 2; ++flavor) {
    long long* mem;
    long long own[2] = {0, 0};
    MPI_Win win;
    if (flavor == 0) {
      MPI_Win_allocate(2 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &mem, &win);
      mem[0] = mem[1] = 0;
    } else {
      mem = own;
      MPI_Win_create(mem, 2 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int ok = 1;
    if (me == 0) {
      /* Compute: no MPI call until the counter arrives or time is up. */
      double t0 = now();
      while (__atomic_load_n(&mem[0], __ATOMIC_ACQUIRE) < np - 1 && now() - t0 < seconds) {
      }
      long long got = __atomic_load_n(&mem[0], __ATOMIC_ACQUIRE);
      int arrived = got == np - 1;
      if (arrived == stall) {
        printf("rma_passive: rank 0: flavor %d: counter %lld of %d after %.1f s (%s)\n", flavor,
               got, np - 1, now() - t0, stall ? "arrived, but a stall was expected"
                                              : "the origins' epochs did not complete");
        ok = 0;
      }
    } else {
      long long one = 1, old = -1, seen = -1;
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
      MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 0, MPI_SUM, win);
      MPI_Win_flush(0, win);
      MPI_Get(&seen, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win);
      MPI_Win_unlock(0, win);
      if (old < 0 || old >= np - 1 || seen != old + 1) {
        printf("rma_passive: rank %d: flavor %d: fetched %lld, then read %lld\n", me, flavor, old,
               seen);
        ok = 0;
      }
    }
    /* In the stall case the origins' epochs end once rank 0 calls MPI. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0 && mem[0] != np - 1) {
      printf("rma_passive: rank 0: flavor %d: counter %lld, want %d\n", flavor, mem[0], np - 1);
      ok = 0;
    }
    MPI_Win_free(&win);
    if (!ok) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  printf("rma_passive: rank %d ok\n", me);
  MPI_Finalize();
  return 0;
}
