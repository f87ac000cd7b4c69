/* p2p_requests: completion calls and request management. MPI_Waitany,
 * MPI_Waitsome, MPI_Testall, MPI_Testany, MPI_Testsome over arrays mixing
 * live, null and inactive persistent requests; MPI_Request_get_status;
 * MPI_Cancel + MPI_Test_cancelled on receives; MPI_Request_free on live and
 * persistent requests; empty statuses. Each rank sends to its right
 * neighbour and receives from its left one.
 * Prints "p2p_requests: rank R ok". */
#include "p2p_util.h"

enum { K = 6 };
static int right, left;

static void checkEmpty(const MPI_Status* st) {
  int n = -1, c = -1;
  MPI_OK(MPI_Get_count(st, MPI_BYTE, &n));
  MPI_OK(MPI_Test_cancelled(st, &c));
  CHECKF(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0 && c == 0,
         "not an empty status: source=%d tag=%d count=%d cancelled=%d", st->MPI_SOURCE,
         st->MPI_TAG, n, c);
}

/* The right neighbour's K messages of round `base`: tags base..base+K-1,
 * sent in reverse order, int payload = tag * 1000 + sender. */
static void sendRound(int base, int* vals, MPI_Request* reqs) {
  for (int i = K - 1; i >= 0; --i) {
    vals[i] = (base + i) * 1000 + g_rank;
    MPI_OK(MPI_Isend(&vals[i], 1, MPI_INT, right, base + i, MPI_COMM_WORLD, &reqs[i]));
  }
}

/* reqs[0..K) receive tags base..; reqs[K] is MPI_REQUEST_NULL, reqs[K+1]
 * an inactive persistent receive (skipped by every completion call). */
static void postRound(int base, int* got, MPI_Request* reqs, MPI_Request inactive) {
  for (int i = 0; i < K; ++i) {
    got[i] = -1;
    MPI_OK(MPI_Irecv(&got[i], 1, MPI_INT, left, base + i, MPI_COMM_WORLD, &reqs[i]));
  }
  reqs[K] = MPI_REQUEST_NULL;
  reqs[K + 1] = inactive;
}

static void checkOne(int i, const MPI_Status* st, const int* got, int base, int* seen) {
  CHECKF(i >= 0 && i < K, "index %d", i);
  CHECKF(!seen[i], "index %d completed twice", i);
  seen[i] = 1;
  CHECK(st->MPI_SOURCE == left && st->MPI_TAG == base + i);
  CHECK(got[i] == (base + i) * 1000 + left);
}

int main(int argc, char** argv) {
  p2p_init(&argc, &argv, "p2p_requests");
  right = (g_rank + 1) % g_size;
  left = (g_rank - 1 + g_size) % g_size;
  int vals[K], got[K], seen[K], idx, flag, outcount, indices[K + 2];
  MPI_Request sreqs[K], reqs[K + 2];
  MPI_Status st, sts[K + 2];
  int dummy;
  MPI_Request inactive;
  MPI_OK(MPI_Recv_init(&dummy, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &inactive));

  /* Empty statuses: null and inactive requests. */
  MPI_Request nul = MPI_REQUEST_NULL;
  MPI_OK(MPI_Wait(&nul, &st));
  checkEmpty(&st);
  MPI_OK(MPI_Test(&nul, &flag, &st));
  CHECK(flag == 1);
  checkEmpty(&st);
  MPI_Request tmp = inactive;
  MPI_OK(MPI_Wait(&tmp, &st));
  CHECK(tmp == inactive); /* an inactive persistent request stays allocated */
  checkEmpty(&st);
  MPI_OK(MPI_Request_get_status(inactive, &flag, &st));
  CHECK(flag == 1);
  checkEmpty(&st);

  /* Waitany. */
  memset(seen, 0, sizeof seen);
  postRound(100, got, reqs, inactive);
  sendRound(100, vals, sreqs);
  for (int k = 0; k < K; ++k) {
    MPI_OK(MPI_Waitany(K + 2, reqs, &idx, &st));
    checkOne(idx, &st, got, 100, seen);
    CHECK(reqs[idx] == MPI_REQUEST_NULL);
  }
  MPI_OK(MPI_Waitany(K + 2, reqs, &idx, &st));
  CHECK(idx == MPI_UNDEFINED);
  checkEmpty(&st);
  MPI_OK(MPI_Waitall(K, sreqs, MPI_STATUSES_IGNORE));

  /* Waitsome. */
  memset(seen, 0, sizeof seen);
  postRound(200, got, reqs, inactive);
  sendRound(200, vals, sreqs);
  int done = 0;
  for (;;) {
    MPI_OK(MPI_Waitsome(K + 2, reqs, &outcount, indices, sts));
    if (outcount == MPI_UNDEFINED) break;
    CHECK(outcount >= 1 && outcount <= K);
    for (int j = 0; j < outcount; ++j) checkOne(indices[j], &sts[j], got, 200, seen);
    done += outcount;
  }
  CHECK(done == K);
  MPI_OK(MPI_Waitall(K, sreqs, MPI_STATUSES_IGNORE));

  /* Testall: false until all are complete, then every status filled
   * (the null and inactive ones empty). */
  postRound(300, got, reqs, inactive);
  MPI_OK(MPI_Testall(K + 2, reqs, &flag, sts));
  if (g_size == 1) CHECK(flag == 0); /* nothing was sent yet */
  sendRound(300, vals, sreqs);
  while (!flag) MPI_OK(MPI_Testall(K + 2, reqs, &flag, sts));
  memset(seen, 0, sizeof seen);
  for (int i = 0; i < K; ++i) {
    checkOne(i, &sts[i], got, 300, seen);
    CHECK(reqs[i] == MPI_REQUEST_NULL);
  }
  checkEmpty(&sts[K]);
  checkEmpty(&sts[K + 1]);
  CHECK(reqs[K + 1] == inactive);
  MPI_OK(MPI_Testall(K, sreqs, &flag, MPI_STATUSES_IGNORE));
  if (!flag) MPI_OK(MPI_Waitall(K, sreqs, MPI_STATUSES_IGNORE));

  /* Testany. */
  memset(seen, 0, sizeof seen);
  postRound(400, got, reqs, inactive);
  sendRound(400, vals, sreqs);
  for (int k = 0; k < K;) {
    MPI_OK(MPI_Testany(K + 2, reqs, &idx, &flag, &st));
    if (!flag) {
      CHECK(idx == MPI_UNDEFINED);
      continue;
    }
    checkOne(idx, &st, got, 400, seen);
    ++k;
  }
  MPI_OK(MPI_Testany(K + 2, reqs, &idx, &flag, &st));
  CHECK(flag == 1 && idx == MPI_UNDEFINED); /* no active request left */
  MPI_OK(MPI_Waitall(K, sreqs, MPI_STATUSES_IGNORE));

  /* Testsome. */
  memset(seen, 0, sizeof seen);
  postRound(500, got, reqs, inactive);
  sendRound(500, vals, sreqs);
  done = 0;
  for (;;) {
    MPI_OK(MPI_Testsome(K + 2, reqs, &outcount, indices, sts));
    if (outcount == MPI_UNDEFINED) break;
    for (int j = 0; j < outcount; ++j) checkOne(indices[j], &sts[j], got, 500, seen);
    done += outcount;
  }
  CHECK(done == K);
  MPI_OK(MPI_Waitall(K, sreqs, MPI_STATUSES_IGNORE));

  /* Request_get_status: reports completion without freeing. */
  int v = g_rank + 7, w = -1;
  MPI_Request rr, sr;
  MPI_OK(MPI_Irecv(&w, 1, MPI_INT, left, 600, MPI_COMM_WORLD, &rr));
  MPI_OK(MPI_Isend(&v, 1, MPI_INT, right, 600, MPI_COMM_WORLD, &sr));
  do {
    MPI_OK(MPI_Request_get_status(rr, &flag, &st));
  } while (!flag);
  CHECK(rr != MPI_REQUEST_NULL && st.MPI_SOURCE == left && st.MPI_TAG == 600);
  CHECK(w == left + 7);
  MPI_OK(MPI_Request_get_status(rr, &flag, MPI_STATUS_IGNORE));
  CHECK(flag == 1);
  MPI_OK(MPI_Wait(&rr, &st));
  CHECK(rr == MPI_REQUEST_NULL && st.MPI_TAG == 600);
  MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));

  /* Cancel a receive nobody will match. */
  MPI_OK(MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 700, MPI_COMM_WORLD, &rr));
  MPI_OK(MPI_Cancel(&rr));
  MPI_OK(MPI_Wait(&rr, &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1 && rr == MPI_REQUEST_NULL);
  /* Cancel a receive that already completed: no effect. */
  MPI_OK(MPI_Irecv(&w, 1, MPI_INT, left, 701, MPI_COMM_WORLD, &rr));
  MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 701, MPI_COMM_WORLD));
  do {
    MPI_OK(MPI_Request_get_status(rr, &flag, MPI_STATUS_IGNORE));
  } while (!flag);
  MPI_OK(MPI_Cancel(&rr));
  MPI_OK(MPI_Wait(&rr, &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 0 && w == left + 7 && st.MPI_SOURCE == left);
  /* A cancelled persistent receive can be started again. */
  MPI_Request pr;
  MPI_OK(MPI_Recv_init(&w, 1, MPI_INT, left, 702, MPI_COMM_WORLD, &pr));
  MPI_OK(MPI_Start(&pr));
  MPI_OK(MPI_Cancel(&pr));
  MPI_OK(MPI_Wait(&pr, &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1 && pr != MPI_REQUEST_NULL);
  /* The left neighbour sends 702 only once this rank says its cancel is
   * done (tag 703), or the first start could have matched it. */
  MPI_OK(MPI_Send(NULL, 0, MPI_INT, left, 703, MPI_COMM_WORLD));
  w = -1;
  MPI_OK(MPI_Start(&pr));
  MPI_OK(MPI_Recv(NULL, 0, MPI_INT, right, 703, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 702, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&pr, &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 0 && w == left + 7);
  MPI_OK(MPI_Request_free(&pr));
  CHECK(pr == MPI_REQUEST_NULL);

  /* Request_free on a live send (the message still arrives), on an active
   * persistent send, and on an inactive persistent request. */
  static int big[50000];
  for (int i = 0; i < 50000; ++i) big[i] = i ^ g_rank;
  MPI_OK(MPI_Isend(big, 50000, MPI_INT, right, 800, MPI_COMM_WORLD, &sr));
  MPI_OK(MPI_Request_free(&sr));
  CHECK(sr == MPI_REQUEST_NULL);
  MPI_OK(MPI_Send_init(&v, 1, MPI_INT, right, 801, MPI_COMM_WORLD, &pr));
  MPI_OK(MPI_Start(&pr));
  MPI_OK(MPI_Request_free(&pr));
  CHECK(pr == MPI_REQUEST_NULL);
  int* in = malloc(sizeof(int) * 50000);
  CHECK(in);
  MPI_OK(MPI_Recv(in, 50000, MPI_INT, left, 800, MPI_COMM_WORLD, &st));
  for (int i = 0; i < 50000; ++i) CHECK(in[i] == (i ^ left));
  MPI_OK(MPI_Recv(&w, 1, MPI_INT, left, 801, MPI_COMM_WORLD, &st));
  CHECK(w == left + 7);
  free(in);
  MPI_OK(MPI_Request_free(&inactive));
  CHECK(inactive == MPI_REQUEST_NULL);

  /* Cancelling a send has no effect: it completes and is delivered. */
  MPI_OK(MPI_Isend(&v, 1, MPI_INT, right, 804, MPI_COMM_WORLD, &sr));
  MPI_OK(MPI_Cancel(&sr));
  MPI_OK(MPI_Wait(&sr, &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 0);
  MPI_OK(MPI_Recv(&w, 1, MPI_INT, left, 804, MPI_COMM_WORLD, &st));
  CHECK(w == left + 7);

  /* Zero-count arrays. */
  MPI_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
  MPI_OK(MPI_Testall(0, NULL, &flag, MPI_STATUSES_IGNORE));
  CHECK(flag == 1);
  MPI_OK(MPI_Waitany(0, NULL, &idx, &st));
  CHECK(idx == MPI_UNDEFINED);

  p2p_barrier(MPI_COMM_WORLD);
  p2p_done();
  return 0;
}
