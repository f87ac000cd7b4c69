/* Partitioned point-to-point: every rank sends to the next (ring) and
 * receives from the previous, several rounds, the sender with 8 partitions
 * of 4 ints and the receiver with 4 of 8 (or 32 of 1), partitions marked
 * ready in different orders and with Pready_range/Pready_list, Parrived
 * polled; an ordinary message with the same tag must not be taken by the
 * partitioned receive; wrong arguments under MPI_ERRORS_RETURN.
 * order(): three requests of one pair, communicator and tag match in the
 * order of their init calls, whatever the order of MPI_Start and
 * MPI_Pready (and a receive started before its sender's init still gets
 * its data); the status names the source and tag; an ordinary zero-count
 * MPI_DATATYPE_NULL message on the same communicator afterwards. */
#include <string.h>

#include "comm_checks.h"

static int me, np, next, prev;
enum { N = 32, ROUNDS = 5, TAG = 7 };

static void expect(int rc, int want) {
  int cls = -1;
  CHECK(rc != MPI_SUCCESS);
  MPI_Error_class(rc, &cls);
  if (cls != want) fprintf(stderr, "part: rank %d: class %d, want %d\n", me, cls, want);
  CHECK(cls == want);
}

static void mark(MPI_Request s, int round) {
  int list[8] = {5, 2, 7, 0, 3, 6, 1, 4};
  switch (round % 4) {
    case 0:
      for (int p = 0; p < 8; ++p) OK(MPI_Pready(p, s));
      break;
    case 1:
      for (int p = 7; p >= 0; --p) OK(MPI_Pready(p, s));
      break;
    case 2:
      OK(MPI_Pready_range(4, 7, s));
      OK(MPI_Pready_range(0, 3, s));
      break;
    default:
      OK(MPI_Pready_list(8, list, s));
      break;
  }
}

static void rounds(int rparts) {
  int sbuf[N], rbuf[N], plain = -1;
  MPI_Request s, r;
  OK(MPI_Psend_init(sbuf, 8, N / 8, MPI_INT, next, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
  OK(MPI_Precv_init(rbuf, rparts, N / rparts, MPI_INT, prev, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                    &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < N; ++i) sbuf[i] = me * 1000 + k * 100 + i;
    memset(rbuf, 0xff, sizeof rbuf);
    /* An ordinary message with the same tag, sent first. */
    int v = me + k;
    OK(MPI_Send(&v, 1, MPI_INT, next, TAG, MPI_COMM_WORLD));
    OK(MPI_Start(&r));
    OK(MPI_Start(&s));
    OK(MPI_Recv(&plain, 1, MPI_INT, prev, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(plain == prev + k);
    mark(s, k);
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS) rc = MPI_Parrived(r, rparts - 1, &flag);
    OK(rc);
    for (int p = 0; p < rparts; ++p) {
      OK(MPI_Parrived(r, p, &flag));
      CHECK(flag);
    }
    if (k % 2) {
      MPI_Request both[2] = {s, r};
      OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    } else {
      OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
      OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < N; ++i) CHECK(rbuf[i] == prev * 1000 + k * 100 + i);
  }
  OK(MPI_Request_free(&s));
  OK(MPI_Request_free(&r));
  CHECK(s == MPI_REQUEST_NULL && r == MPI_REQUEST_NULL);
}

/* Large rounds (rendezvous-sized): 8 partitions of 32768 ints sent, 2 of
 * 131072 received. */
static void big(void) {
  const int n = 8 * 32768;
  int* sb = malloc(sizeof(int) * (size_t)n);
  int* rb = malloc(sizeof(int) * (size_t)n);
  MPI_Request s, r;
  OK(MPI_Psend_init(sb, 8, n / 8, MPI_INT, next, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
  OK(MPI_Precv_init(rb, 2, n / 2, MPI_INT, prev, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < n; ++i) sb[i] = me + i + k;
    OK(MPI_Start(&r));
    OK(MPI_Start(&s));
    mark(s, k + 1);
    MPI_Request both[2] = {r, s};
    OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += rb[i] != prev + i + k;
    CHECK(bad == 0);
  }
  OK(MPI_Request_free(&s));
  OK(MPI_Request_free(&r));
  free(sb);
  free(rb);
}

static void order(void) {
  enum { K = 3, M = 16 };
  int sb[K][M], rb[K][M];
  MPI_Request s[K], r[K];
  MPI_Status st[K];
  /* Receives first, started in reverse order before any send exists. */
  for (int j = 0; j < K; ++j) {
    OK(MPI_Precv_init(rb[j], 2, M / 2, MPI_INT, prev, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r[j]));
    for (int i = 0; i < M; ++i) rb[j][i] = -1;
  }
  for (int j = K - 1; j >= 0; --j) OK(MPI_Start(&r[j]));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int j = 0; j < K; ++j)
    OK(MPI_Psend_init(sb[j], 4, M / 4, MPI_INT, next, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &s[j]));
  /* Started and marked ready in the order 2, 0, 1. */
  const int seq[K] = {2, 0, 1};
  for (int q = 0; q < K; ++q) {
    int j = seq[q];
    OK(MPI_Start(&s[j]));
    for (int i = 0; i < M; ++i) sb[j][i] = me * 100 + j * 10 + i;
    OK(MPI_Pready_range(0, 3, s[j]));
  }
  OK(MPI_Waitall(K, s, MPI_STATUSES_IGNORE));
  OK(MPI_Waitall(K, r, st));
  for (int j = 0; j < K; ++j) {
    int bad = 0, n = -1;
    for (int i = 0; i < M; ++i) bad += rb[j][i] != prev * 100 + j * 10 + i;
    if (bad) fprintf(stderr, "part: rank %d: request %d got %d (want %d)\n", me, j, rb[j][0],
                     prev * 100 + j * 10);
    CHECK(bad == 0);
    CHECK(st[j].MPI_SOURCE == prev && st[j].MPI_TAG == TAG);
    OK(MPI_Get_count(&st[j], MPI_INT, &n));
    CHECK(n == M);
  }
  for (int j = 0; j < K; ++j) {
    OK(MPI_Request_free(&s[j]));
    OK(MPI_Request_free(&r[j]));
  }
  /* A receive initialised before an MPI_Intercomm_create with the same tag
   * on the same communicator, the send after it: neither takes the other's
   * messages (ranks 0 and 1). */
  if (np >= 2 && me < 2) {
    int v = -1, w = 41;
    MPI_Request pr;
    MPI_Comm ic;
    if (me == 1) OK(MPI_Precv_init(&v, 1, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
    OK(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 1 - me, 0, &ic));
    if (me == 0) OK(MPI_Psend_init(&w, 1, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
    OK(MPI_Start(&pr));
    if (me == 0) OK(MPI_Pready(0, pr));
    OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    if (me == 1) CHECK(v == 41);
    int rs = 0;
    OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(rs == 1);
    OK(MPI_Request_free(&pr));
    OK(MPI_Comm_free(&ic));
  }
  /* A zero-count message may name MPI_DATATYPE_NULL. */
  MPI_Status z;
  OK(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, next, TAG, NULL, 0, MPI_DATATYPE_NULL, prev, TAG,
                  MPI_COMM_WORLD, &z));
  CHECK(z.MPI_SOURCE == prev && z.MPI_TAG == TAG);
}

static void errors(void) {
  int buf[8], flag;
  MPI_Request s, r;
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  expect(MPI_Psend_init(buf, 2, -1, MPI_INT, next, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
         MPI_ERR_COUNT);
  expect(MPI_Psend_init(buf, -1, 1, MPI_INT, next, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
         MPI_ERR_ARG);
  expect(MPI_Psend_init(buf, 2, 1, MPI_INT, np, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
         MPI_ERR_RANK);
  expect(MPI_Precv_init(buf, 2, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_RANK);
  expect(MPI_Precv_init(buf, 2, 1, MPI_INT, prev, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_TAG);
  expect(MPI_Precv_init(buf, 2, 1, MPI_DATATYPE_NULL, prev, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_TYPE);
  expect(MPI_Psend_init(buf, 2, 1, MPI_INT, next, 1, MPI_COMM_NULL, MPI_INFO_NULL, &s),
         MPI_ERR_COMM);
  OK(MPI_Psend_init(buf, 4, 2, MPI_INT, next, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
  OK(MPI_Precv_init(buf, 2, 4, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  /* Inactive send request. */
  expect(MPI_Pready(0, s), MPI_ERR_REQUEST);
  /* The wrong side. */
  expect(MPI_Pready(0, r), MPI_ERR_REQUEST);
  expect(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST);
  expect(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST);
  /* A never-started receive reports its partitions arrived. */
  OK(MPI_Parrived(r, 0, &flag));
  CHECK(flag);
  OK(MPI_Start(&r));
  OK(MPI_Start(&s));
  expect(MPI_Pready(4, s), MPI_ERR_ARG);
  expect(MPI_Pready(-1, s), MPI_ERR_ARG);
  expect(MPI_Pready_range(3, 1, s), MPI_ERR_ARG);
  expect(MPI_Parrived(r, 2, &flag), MPI_ERR_ARG);
  expect(MPI_Parrived(r, 0, NULL), MPI_ERR_ARG);
  OK(MPI_Pready(1, s));
  expect(MPI_Pready(1, s), MPI_ERR_ARG);
  int rest[3] = {0, 2, 3};
  OK(MPI_Pready_list(3, rest, s));
  OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  expect(MPI_Pready(0, s), MPI_ERR_REQUEST); /* inactive again */
  OK(MPI_Request_free(&s));
  OK(MPI_Request_free(&r));
  /* MPI_PROC_NULL: a round completes at once. */
  OK(MPI_Psend_init(buf, 2, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
  OK(MPI_Start(&s));
  OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
  OK(MPI_Request_free(&s));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  prog = "part";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  next = (me + 1) % np;
  prev = (me + np - 1) % np;
  rounds(4);
  rounds(32);
  rounds(8);
  big();
  order();
  errors();
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Finalize());
  passed();
  return 0;
}
