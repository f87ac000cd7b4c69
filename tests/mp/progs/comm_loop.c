/* comm_loop: many communicators created and freed, with messages of the same
 * tag in flight on a communicator and its parent at the same time: nothing
 * may cross. More creations than Loom has context ids, so ids must be
 * recycled; some communicators stay alive across iterations so the free
 * ids have holes. */
#include "comm_checks.h"

#define ITERS 4500 /* > 4096 context ids per process */
#define TALK_EVERY 50
#define KEEP 8

/* Sends on `a` then `b` (same tag, same peer), receives on `b` first: if
 * the two shared a context the first receive would take a's message. */
static void noCrossing(MPI_Comm a, MPI_Comm b, int salt) {
  int r, n, va = 1000 * salt + 1, vb = 1000 * salt + 2, ga = -1, gb = -1;
  MPI_Request s[2];
  OK(MPI_Comm_rank(a, &r));
  OK(MPI_Comm_size(a, &n));
  int next = (r + 1) % n, prev = (r + n - 1) % n;
  OK(MPI_Isend(&va, 1, MPI_INT, next, 5, a, &s[0]));
  OK(MPI_Isend(&vb, 1, MPI_INT, next, 5, b, &s[1]));
  OK(MPI_Recv(&gb, 1, MPI_INT, prev, 5, b, MPI_STATUS_IGNORE));
  OK(MPI_Recv(&ga, 1, MPI_INT, prev, 5, a, MPI_STATUS_IGNORE));
  OK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
  CHECK(ga == va && gb == vb);
}

int main(int argc, char** argv) {
  int size;
  MPI_Comm keep[KEEP];
  prog = "comm_loop";

  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  for (int i = 0; i < KEEP; ++i) keep[i] = MPI_COMM_NULL;

  for (int it = 0; it < ITERS; ++it) {
    MPI_Comm d, s;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    if (it % TALK_EVERY == 0) {
      noCrossing(MPI_COMM_WORLD, d, it);
      /* A split and its parent (the dup), and two siblings. */
      OK(MPI_Comm_split(d, wrank % 2, wrank, &s));
      MPI_Comm s2;
      OK(MPI_Comm_dup(s, &s2));
      noCrossing(s, s2, it + 1);
      noCrossing(d, MPI_COMM_WORLD, it + 2);
      /* Free in creation order this time, reverse next time. */
      if ((it / TALK_EVERY) % 2) {
        OK(MPI_Comm_free(&s));
        OK(MPI_Comm_free(&s2));
      } else {
        OK(MPI_Comm_free(&s2));
        OK(MPI_Comm_free(&s));
      }
    }
    /* Every 97th dup survives a while, replacing an older survivor. */
    if (it % 97 == 0) {
      int slot = (it / 97) % KEEP;
      if (keep[slot] != MPI_COMM_NULL) {
        noCrossing(keep[slot], d, it + 3);
        OK(MPI_Comm_free(&keep[slot]));
      }
      keep[slot] = d;
    } else {
      OK(MPI_Comm_free(&d));
    }
  }
  for (int i = 0; i < KEEP; ++i) {
    if (keep[i] == MPI_COMM_NULL) continue;
    noCrossing(keep[i], MPI_COMM_WORLD, i);
    OK(MPI_Comm_free(&keep[i]));
  }
  passed();
  OK(MPI_Finalize());
  return 0;
}
