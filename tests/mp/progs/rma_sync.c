/* One-sided communication, every synchronization mode on one window:
 * - fence with the assertions MPI_MODE_NOPRECEDE, NOSTORE, NOPUT and
 *   NOSUCCEED;
 * - general active target (post/start/complete/wait): every rank both
 *   origin and target of its ring neighbours (itself at 1 rank), rounds
 *   ended by MPI_Win_wait or by an MPI_Win_test loop, a round with
 *   MPI_MODE_NOSTORE; then rank 0 the target of all others;
 * - passive target: MPI_Win_lock/unlock exclusive (a read-modify-write
 *   counter on rank 0) and shared, MPI_Win_lock_all/unlock_all with
 *   MPI_Win_flush, flush_all, flush_local, flush_local_all, MPI_Win_sync
 *   with local stores seen remotely and remote Puts seen by local loads;
 * - request-based MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate
 *   inside a lock_all epoch, completed by MPI_Wait, MPI_Waitall and an
 *   MPI_Test loop; same-origin accumulates ordered (the default
 *   accumulate_ordering). */
#include "rma_checks.h"

static int me, np, next, prev;
static MPI_Win win;
static int* b; /* the local window memory */

/* Where each part works in the window (ints). */
enum { A = 0, C = 2, CNT = 3, D = 4, E = 12, E2 = 13, F = 16, FEN = 24, B = 64 };

static void fences(void) {
  int r[2] = {-1, -1};
  /* The stores of main() come before this first synchronization. */
  OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  int v = me * 10 + 1;
  OK(MPI_Put(&v, 1, MPI_INT, next, FEN, 1, MPI_INT, win));
  /* No local stores since the last fence; the next epoch has no Put. */
  OK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
  OK(MPI_Get(&r[0], 1, MPI_INT, next, FEN, 1, MPI_INT, win));
  OK(MPI_Get(&r[1], 1, MPI_INT, prev, FEN, 1, MPI_INT, win));
  OK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win));
  EQ(b[FEN], prev * 10 + 1);
  EQ(r[0], me * 10 + 1);
  EQ(r[1], ((prev + np - 1) % np) * 10 + 1);
}

static void pscw(void) {
  MPI_Group world, nb;
  OK(MPI_Win_get_group(win, &world));
  int ranks[2] = {prev, next};
  OK(MPI_Group_incl(world, prev == next ? 1 : 2, ranks, &nb));
  for (int round = 0; round < 4; ++round) {
    int v[2] = {me * 100 + round, me * 100 + 50 + round};
    if (round == 0) b[A] = b[A + 1] = -1;
    OK(MPI_Win_post(nb, round == 0 ? 0 : MPI_MODE_NOSTORE, win));
    OK(MPI_Win_start(nb, 0, win));
    OK(MPI_Put(&v[0], 1, MPI_INT, next, A, 1, MPI_INT, win));
    OK(MPI_Put(&v[1], 1, MPI_INT, prev, A + 1, 1, MPI_INT, win));
    OK(MPI_Win_complete(win));
    if (round % 2) {
      int flag = 0, spins = 0;
      while (!flag) {
        OK(MPI_Win_test(win, &flag));
        ++spins;
      }
      CHECK(spins >= 1);
    } else {
      OK(MPI_Win_wait(win));
    }
    EQ(b[A], prev * 100 + round);
    EQ(b[A + 1], next * 100 + 50 + round);
  }
  OK(MPI_Group_free(&nb));

  /* Rank 0 the target of every other rank, each into its own element. */
  if (np > 1) {
    if (me == 0) {
      MPI_Group others;
      int zero[1] = {0};
      OK(MPI_Group_excl(world, 1, zero, &others));
      for (int i = 0; i < np; ++i) b[B + i] = -1;
      OK(MPI_Win_post(others, 0, win));
      OK(MPI_Win_wait(win));
      for (int i = 1; i < np; ++i) EQ(b[B + i], i * 7);
      EQ(b[B], -1);
      OK(MPI_Group_free(&others));
    } else {
      MPI_Group zero;
      int z[1] = {0}, v = me * 7;
      OK(MPI_Group_incl(world, 1, z, &zero));
      OK(MPI_Win_start(zero, 0, win));
      OK(MPI_Put(&v, 1, MPI_INT, 0, B + me, 1, MPI_INT, win));
      OK(MPI_Win_complete(win));
      OK(MPI_Group_free(&zero));
    }
  }
  OK(MPI_Group_free(&world));
}

/* Local loads of the window, in a passive epoch on oneself. */
static int local(int at) {
  OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
  int v = b[at];
  OK(MPI_Win_unlock(me, win));
  return v;
}

enum { ROUNDS = 20 };

static void locks(void) {
  /* Exclusive: a Put to next. */
  int w = me + 7;
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
  OK(MPI_Put(&w, 1, MPI_INT, next, C, 1, MPI_INT, win));
  OK(MPI_Win_unlock(next, win));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  EQ(local(C), prev + 7);

  /* Exclusive: read-modify-write of a counter on rank 0, Get, flush, Put. */
  for (int k = 0; k < ROUNDS; ++k) {
    int c = -1;
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    OK(MPI_Get(&c, 1, MPI_INT, 0, CNT, 1, MPI_INT, win));
    OK(MPI_Win_flush(0, win));
    CHECK(c >= 0 && c < ROUNDS * np);
    ++c;
    OK(MPI_Put(&c, 1, MPI_INT, 0, CNT, 1, MPI_INT, win));
    OK(MPI_Win_unlock(0, win));
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) EQ(local(CNT), ROUNDS * np);

  /* Shared: everyone reads every rank's C at once. */
  for (int t = 0; t < np; ++t) {
    int got = -1;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    OK(MPI_Get(&got, 1, MPI_INT, t, C, 1, MPI_INT, win));
    OK(MPI_Win_unlock(t, win));
    EQ(got, (t + np - 1) % np + 7);
  }
  /* Shared with MPI_MODE_NOCHECK is not used: no conflicting lock may
   * exist, which holds here, but it says nothing more. */
  OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void lockAll(void) {
  int src[8], got[8];
  OK(MPI_Win_lock_all(0, win));
  /* Put, flush, Get back: the Put is complete at next. */
  for (int i = 0; i < 4; ++i) src[i] = me * 1000 + i;
  OK(MPI_Put(src, 4, MPI_INT, next, D, 4, MPI_INT, win));
  OK(MPI_Win_flush(next, win));
  for (int i = 0; i < 4; ++i) got[i] = -1;
  OK(MPI_Get(got, 4, MPI_INT, next, D, 4, MPI_INT, win));
  OK(MPI_Win_flush(next, win));
  EQA("Get after flush", got, src, 4);
  /* flush_local: the origin buffer may be reused at once. */
  src[4] = me * 1000 + 4;
  OK(MPI_Put(&src[4], 1, MPI_INT, next, D + 4, 1, MPI_INT, win));
  OK(MPI_Win_flush_local(next, win));
  src[4] = -5; /* must not reach the target */
  src[5] = me * 1000 + 5;
  src[6] = me * 1000 + 6;
  OK(MPI_Put(&src[5], 1, MPI_INT, next, D + 5, 1, MPI_INT, win));
  OK(MPI_Put(&src[6], 1, MPI_INT, prev, D + 6, 1, MPI_INT, win));
  OK(MPI_Win_flush_local_all(win));
  src[5] = src[6] = -5;
  OK(MPI_Win_flush_all(win));
  for (int i = 4; i < 8; ++i) got[i] = -1;
  OK(MPI_Get(&got[4], 2, MPI_INT, next, D + 4, 2, MPI_INT, win));
  OK(MPI_Get(&got[6], 1, MPI_INT, prev, D + 6, 1, MPI_INT, win));
  OK(MPI_Win_flush_all(win));
  EQ(got[4], me * 1000 + 4);
  EQ(got[5], me * 1000 + 5);
  EQ(got[6], me * 1000 + 6);

  /* MPI_Win_sync: a local store seen by a remote Get ... */
  b[E] = me * 3 + 1;
  OK(MPI_Win_sync(win));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  int e = -1;
  OK(MPI_Get(&e, 1, MPI_INT, prev, E, 1, MPI_INT, win));
  OK(MPI_Win_flush(prev, win));
  EQ(e, prev * 3 + 1);
  /* ... and a remote Put seen by a local load. */
  int x = me * 3 + 2;
  OK(MPI_Put(&x, 1, MPI_INT, next, E2, 1, MPI_INT, win));
  OK(MPI_Win_flush(next, win));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Win_sync(win));
  EQ(b[E2], prev * 3 + 2);
  OK(MPI_Win_unlock_all(win));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  EQ(local(D), prev * 1000);
  EQ(local(D + 3), prev * 1000 + 3);
  EQ(local(D + 4), prev * 1000 + 4);
  EQ(local(D + 5), prev * 1000 + 5);
  EQ(local(D + 6), next * 1000 + 6);
}

static void requests(void) {
  int src[4], got[4], one = 5, res = -1, res2 = -1, nothing = 0;
  MPI_Request r[4];
  OK(MPI_Win_lock_all(0, win));
  for (int i = 0; i < 4; ++i) src[i] = me * 100 + i;
  OK(MPI_Rput(src, 4, MPI_INT, next, F, 4, MPI_INT, win, &r[0]));
  OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
  CHECK(r[0] == MPI_REQUEST_NULL);
  OK(MPI_Win_flush(next, win));
  for (int i = 0; i < 4; ++i) got[i] = -1;
  OK(MPI_Rget(got, 4, MPI_INT, next, F, 4, MPI_INT, win, &r[0]));
  OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
  EQA("MPI_Rget after MPI_Rput, flush", got, src, 4);
  /* Element F + 4 at next: 0 (from main()), then only this rank's
   * accumulates, ordered. */
  OK(MPI_Raccumulate(&one, 1, MPI_INT, next, F + 4, 1, MPI_INT, MPI_SUM, win, &r[0]));
  one = 1;
  OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
  OK(MPI_Rget_accumulate(&one, 1, MPI_INT, &res, 1, MPI_INT, next, F + 4, 1, MPI_INT, MPI_SUM, win,
                         &r[1]));
  OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
  EQ(res, 5);
  OK(MPI_Rget_accumulate(&nothing, 1, MPI_INT, &res2, 1, MPI_INT, next, F + 4, 1, MPI_INT,
                         MPI_NO_OP, win, &r[2]));
  int flag = 0;
  while (!flag) OK(MPI_Test(&r[2], &flag, MPI_STATUS_IGNORE));
  EQ(res2, 6);
  /* Several at once, to next and prev, Waitall. */
  int a = me + 1, g2 = -1;
  int p[2] = {me * 100 + 77, me * 100 + 78};
  OK(MPI_Rput(&p[0], 1, MPI_INT, next, F + 5, 1, MPI_INT, win, &r[0]));
  OK(MPI_Raccumulate(&a, 1, MPI_INT, prev, F + 6, 1, MPI_INT, MPI_SUM, win, &r[1]));
  OK(MPI_Rget(&g2, 1, MPI_INT, next, F, 1, MPI_INT, win, &r[2]));
  MPI_Status st[3];
  OK(MPI_Waitall(3, r, st));
  for (int i = 0; i < 3; ++i) CHECK(r[i] == MPI_REQUEST_NULL);
  EQ(g2, me * 100); /* next's F: this rank's own flushed Rput */
  OK(MPI_Win_flush_all(win));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Win_unlock_all(win));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  EQ(local(F), prev * 100);
  EQ(local(F + 4), 6);
  EQ(local(F + 5), prev * 100 + 77);
  EQ(local(F + 6), next + 1);
}

int main(int argc, char** argv) {
  prog = "rma_sync";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  next = (me + 1) % np;
  prev = (me + np - 1) % np;
  /* A multiple of 16 ints: MPICH 4.0.2 (ch4) misplaces remote accesses
   * to MPI_Win_allocate windows of other sizes at 2+ ranks (8 bytes
   * off at 264 bytes); rma_shared covers odd sizes. */
  int n = (B + np + 15) / 16 * 16;
  OK(MPI_Win_allocate((MPI_Aint)sizeof(int) * n, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &b,
                      &win));
  OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  for (int i = 0; i < n; ++i) b[i] = 0;
  fences();
  pscw();
  locks();
  lockAll();
  requests();
  OK(MPI_Win_free(&win));
  OK(MPI_Finalize());
  passed();
  return 0;
}
