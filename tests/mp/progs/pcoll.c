/* Persistent collectives (MPI_*_init): every one started several times with
 * new data between the starts, MPI_Startall over several (in a different
 * order on odd ranks), MPI_Test/Wait/Waitall on them, a blocking collective
 * while one is active, MPI_Request_free of inactive and active ones, the
 * communicator, a datatype and an op freed while the request lives, and
 * wrong arguments at init time under MPI_ERRORS_RETURN. */
#include <string.h>

#include "comm_checks.h"

static int me, np;
enum { ROUNDS = 4 };

static void run(MPI_Request* r) {
  OK(MPI_Start(r));
  OK(MPI_Wait(r, MPI_STATUS_IGNORE));
  CHECK(*r != MPI_REQUEST_NULL);
}

static void test_barrier(void) {
  MPI_Request r;
  OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) run(&r);
  OK(MPI_Request_free(&r));
  CHECK(r == MPI_REQUEST_NULL);
}

static void test_bcast(void) {
  int buf[5];
  MPI_Request r;
  const int root = np - 1;
  OK(MPI_Bcast_init(buf, 5, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < 5; ++i) buf[i] = me == root ? k * 100 + i : -1;
    run(&r);
    for (int i = 0; i < 5; ++i) CHECK(buf[i] == k * 100 + i);
  }
  OK(MPI_Request_free(&r));
}

static void test_gather(void) {
  int sbuf[2], rbuf[2 * 8];
  MPI_Request r;
  OK(MPI_Gather_init(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    sbuf[0] = me * 10 + k;
    sbuf[1] = -k;
    memset(rbuf, 0xff, sizeof rbuf);
    run(&r);
    if (me == 0)
      for (int i = 0; i < np; ++i) CHECK(rbuf[2 * i] == i * 10 + k && rbuf[2 * i + 1] == -k);
  }
  OK(MPI_Request_free(&r));
}

static void test_gatherv(void) {
  int sbuf[8], rbuf[64], counts[8], displs[8], d = 0;
  const int root = np / 2;
  for (int i = 0; i < np; ++i) {
    counts[i] = i + 1;
    displs[i] = d;
    d += i + 2; /* a gap after each block */
  }
  MPI_Request r;
  OK(MPI_Gatherv_init(sbuf, me + 1, MPI_INT, rbuf, counts, displs, MPI_INT, root, MPI_COMM_WORLD,
                      MPI_INFO_NULL, &r));
  /* The counts are copied: scribbling on them must not matter. */
  for (int i = 0; i < np; ++i) counts[i] = -7;
  for (int k = 0; k < ROUNDS; ++k) {
    for (int j = 0; j <= me; ++j) sbuf[j] = me * 100 + j + k;
    memset(rbuf, 0, sizeof rbuf);
    run(&r);
    if (me == root)
      for (int i = 0; i < np; ++i)
        for (int j = 0; j <= i; ++j) CHECK(rbuf[displs[i] + j] == i * 100 + j + k);
  }
  OK(MPI_Request_free(&r));
}

static void test_scatter(void) {
  int sbuf[2 * 8], rbuf[2];
  MPI_Request r;
  OK(MPI_Scatter_init(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < 2 * np; ++i) sbuf[i] = me == 0 ? i * 3 + k : -1;
    rbuf[0] = rbuf[1] = -5;
    run(&r);
    CHECK(rbuf[0] == 2 * me * 3 + k && rbuf[1] == (2 * me + 1) * 3 + k);
  }
  OK(MPI_Request_free(&r));
}

static void test_scatterv(void) {
  int sbuf[64], rbuf[8], counts[8], displs[8], d = 0;
  const int root = np - 1;
  for (int i = 0; i < np; ++i) {
    counts[i] = i + 1;
    displs[i] = d;
    d += i + 1;
  }
  MPI_Request r;
  OK(MPI_Scatterv_init(sbuf, counts, displs, MPI_INT, rbuf, me + 1, MPI_INT, root,
                       MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < d; ++i) sbuf[i] = i + 1000 * k;
    memset(rbuf, 0, sizeof rbuf);
    run(&r);
    for (int j = 0; j <= me; ++j) CHECK(rbuf[j] == displs[me] + j + 1000 * k);
  }
  OK(MPI_Request_free(&r));
}

static void test_allgather(void) {
  int s, rbuf[8];
  MPI_Request r;
  OK(MPI_Allgather_init(&s, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    s = me + 7 * k;
    memset(rbuf, 0, sizeof rbuf);
    run(&r);
    for (int i = 0; i < np; ++i) CHECK(rbuf[i] == i + 7 * k);
  }
  OK(MPI_Request_free(&r));
}

static void test_allgatherv(void) {
  int sbuf[8], rbuf[64], counts[8], displs[8], d = 0;
  for (int i = 0; i < np; ++i) {
    counts[i] = i + 1;
    displs[i] = d;
    d += i + 1;
  }
  MPI_Request r;
  OK(MPI_Allgatherv_init(sbuf, me + 1, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int j = 0; j <= me; ++j) sbuf[j] = me * 10 + j - k;
    memset(rbuf, 0, sizeof rbuf);
    run(&r);
    for (int i = 0; i < np; ++i)
      for (int j = 0; j <= i; ++j) CHECK(rbuf[displs[i] + j] == i * 10 + j - k);
  }
  OK(MPI_Request_free(&r));
}

static void test_alltoall(void) {
  int sbuf[8], rbuf[8];
  MPI_Request r;
  OK(MPI_Alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < np; ++i) sbuf[i] = me * 100 + i + k;
    memset(rbuf, 0, sizeof rbuf);
    run(&r);
    for (int i = 0; i < np; ++i) CHECK(rbuf[i] == i * 100 + me + k);
  }
  OK(MPI_Request_free(&r));
}

/* Rank a sends (a + b) % 3 ints to rank b. */
static void test_alltoallv(void) {
  int sbuf[32], rbuf[32], sc[8], sd[8], rc[8], rd[8], s = 0, t = 0;
  for (int j = 0; j < np; ++j) {
    sc[j] = rc[j] = (me + j) % 3;
    sd[j] = s;
    rd[j] = t;
    s += sc[j];
    t += rc[j] + 1;
  }
  MPI_Request r;
  OK(MPI_Alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int j = 0; j < np; ++j)
      for (int x = 0; x < sc[j]; ++x) sbuf[sd[j] + x] = me * 1000 + j * 10 + x + k;
    memset(rbuf, 0, sizeof rbuf);
    run(&r);
    for (int j = 0; j < np; ++j)
      for (int x = 0; x < rc[j]; ++x) CHECK(rbuf[rd[j] + x] == j * 1000 + me * 10 + x + k);
  }
  OK(MPI_Request_free(&r));
}

/* Ints to even ranks, doubles to odd ones; byte displacements. */
static void test_alltoallw(void) {
  char sbuf[8 * 8], rbuf[8 * 8];
  int sc[8], rc[8], sd[8], rd[8];
  MPI_Datatype st[8], rt[8];
  for (int j = 0; j < np; ++j) {
    sc[j] = 1;
    st[j] = j % 2 ? MPI_DOUBLE : MPI_INT;
    sd[j] = 8 * j;
    rc[j] = 1;
    rt[j] = me % 2 ? MPI_DOUBLE : MPI_INT;
    rd[j] = 8 * (np - 1 - j);
  }
  MPI_Request r;
  OK(MPI_Alltoallw_init(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int j = 0; j < np; ++j) {
      if (j % 2) {
        double v = me * 10 + j + k + 0.5;
        memcpy(sbuf + 8 * j, &v, sizeof v);
      } else {
        int v = me * 10 + j + k;
        memcpy(sbuf + 8 * j, &v, sizeof v);
      }
    }
    memset(rbuf, 0, sizeof rbuf);
    run(&r);
    for (int j = 0; j < np; ++j) {
      if (me % 2) {
        double v;
        memcpy(&v, rbuf + 8 * (np - 1 - j), sizeof v);
        CHECK(v == j * 10 + me + k + 0.5);
      } else {
        int v;
        memcpy(&v, rbuf + 8 * (np - 1 - j), sizeof v);
        CHECK(v == j * 10 + me + k);
      }
    }
  }
  OK(MPI_Request_free(&r));
}

static void absmax(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  int* a = (int*)in;
  int* b = (int*)inout;
  for (int i = 0; i < *len; ++i) {
    int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
    b[i] = x > y ? x : y;
  }
}

static void test_reduce(void) {
  int s[3], rv[3];
  const int root = np - 1;
  MPI_Request r, ru;
  MPI_Op op;
  OK(MPI_Reduce_init(s, rv, 3, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  /* A user op freed right after the init call: the request keeps it. */
  int us, ur;
  OK(MPI_Op_create(absmax, 1, &op));
  OK(MPI_Reduce_init(&us, &ur, 1, MPI_INT, op, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &ru));
  OK(MPI_Op_free(&op));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < 3; ++i) s[i] = (me + 1) * (k + 1) + i;
    rv[0] = rv[1] = rv[2] = -1;
    run(&r);
    if (me == root)
      for (int i = 0; i < 3; ++i) CHECK(rv[i] == (k + 1) * np * (np + 1) / 2 + i * np);
    us = (me % 2 ? -1 : 1) * (me + k);
    ur = -1;
    run(&ru);
    if (me == 0) CHECK(ur == np - 1 + k);
  }
  OK(MPI_Request_free(&r));
  OK(MPI_Request_free(&ru));
}

static void test_allreduce(void) {
  int s[2], rv[2], inplace[2];
  MPI_Request r, ri;
  OK(MPI_Allreduce_init(s, rv, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  OK(MPI_Allreduce_init(MPI_IN_PLACE, inplace, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &ri));
  for (int k = 0; k < ROUNDS; ++k) {
    s[0] = me + k;
    s[1] = -me - k;
    run(&r);
    CHECK(rv[0] == np - 1 + k && rv[1] == -k);
    inplace[0] = me;
    inplace[1] = k;
    run(&ri);
    CHECK(inplace[0] == np * (np - 1) / 2 && inplace[1] == np * k);
  }
  OK(MPI_Request_free(&r));
  OK(MPI_Request_free(&ri));
}

static void test_reduce_scatter(void) {
  int counts[8], total = 0, s[64], rv[8];
  for (int i = 0; i < np; ++i) total += counts[i] = i + 1;
  MPI_Request r;
  OK(MPI_Reduce_scatter_init(s, rv, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  int off = me * (me + 1) / 2;
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < total; ++i) s[i] = i + me + k;
    run(&r);
    for (int j = 0; j <= me; ++j) CHECK(rv[j] == np * (off + j + k) + np * (np - 1) / 2);
  }
  OK(MPI_Request_free(&r));
}

static void test_reduce_scatter_block(void) {
  int s[16], rv[2];
  MPI_Request r;
  OK(MPI_Reduce_scatter_block_init(s, rv, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                   &r));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < 2 * np; ++i) s[i] = i * k + 1;
    run(&r);
    CHECK(rv[0] == np * (2 * me * k + 1) && rv[1] == np * ((2 * me + 1) * k + 1));
  }
  OK(MPI_Request_free(&r));
}

static void test_scans(void) {
  int s, rs, rx;
  MPI_Request r[2];
  OK(MPI_Scan_init(&s, &rs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
  OK(MPI_Exscan_init(&s, &rx, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
  for (int k = 0; k < ROUNDS; ++k) {
    s = me + k;
    rx = -99;
    OK(MPI_Startall(2, r));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(rs == me * (me + 1) / 2 + (me + 1) * k);
    if (me > 0) CHECK(rx == (me - 1) * me / 2 + me * k);
  }
  OK(MPI_Request_free(&r[0]));
  OK(MPI_Request_free(&r[1]));
}

/* Several different persistent collectives started together, in the
 * opposite order on odd ranks, completed with Waitall or a Test loop; a
 * blocking collective runs while they are active. */
static void test_startall(void) {
  int b[3], ag[8], ar, s;
  MPI_Request r[4], rr[4];
  OK(MPI_Bcast_init(b, 3, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
  OK(MPI_Allgather_init(&s, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
  OK(MPI_Allreduce_init(&s, &ar, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
  OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]));
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < 3; ++i) b[i] = me == 0 ? k + i : 0;
    s = me * k + 1;
    for (int i = 0; i < 4; ++i) rr[i] = me % 2 ? r[3 - i] : r[i];
    OK(MPI_Startall(4, rr));
    int x = me == 0 ? 42 + k : 0;
    OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(x == 42 + k);
    if (k % 2) {
      OK(MPI_Waitall(4, rr, MPI_STATUSES_IGNORE));
    } else {
      int flag = 0, rc = MPI_SUCCESS;
      while (!flag && rc == MPI_SUCCESS) rc = MPI_Testall(4, rr, &flag, MPI_STATUSES_IGNORE);
      OK(rc);
    }
    for (int i = 0; i < 4; ++i) CHECK(rr[i] != MPI_REQUEST_NULL);
    for (int i = 0; i < 3; ++i) CHECK(b[i] == k + i);
    for (int i = 0; i < np; ++i) CHECK(ag[i] == i * k + 1);
    CHECK(ar == k * np * (np - 1) / 2 + np);
  }
  /* MPI_Test on one, then MPI_Start on an active one is an error. */
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  s = 1;
  OK(MPI_Start(&r[2]));
  int cls = 0;
  MPI_Error_class(MPI_Start(&r[2]), &cls);
  CHECK(cls == MPI_ERR_REQUEST);
  int flag = 0, rc = MPI_SUCCESS;
  MPI_Status st;
  while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&r[2], &flag, &st);
  OK(rc);
  CHECK(ar == np);
  CHECK(r[2] != MPI_REQUEST_NULL);
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  for (int i = 0; i < 4; ++i) OK(MPI_Request_free(&r[i]));
}

/* The communicator and a datatype freed while the request lives; a
 * request freed while active; one freed without ever starting. */
static void test_lifetimes(void) {
  MPI_Comm dup;
  MPI_Datatype pair;
  int s[2], rv[16];
  MPI_Request r, idle, act;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  OK(MPI_Type_commit(&pair));
  OK(MPI_Allgather_init(s, 1, pair, rv, 1, pair, dup, MPI_INFO_NULL, &r));
  OK(MPI_Type_free(&pair));
  OK(MPI_Comm_free(&dup));
  for (int k = 0; k < ROUNDS; ++k) {
    s[0] = me;
    s[1] = k;
    run(&r);
    for (int i = 0; i < np; ++i) CHECK(rv[2 * i] == i && rv[2 * i + 1] == k);
  }
  OK(MPI_Request_free(&r));

  OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &idle));
  OK(MPI_Request_free(&idle));
  CHECK(idle == MPI_REQUEST_NULL);

  static int as, ar; /* outlive this function: the freed activation may still run */
  as = 1;
  OK(MPI_Allreduce_init(&as, &ar, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &act));
  OK(MPI_Start(&act));
  OK(MPI_Request_free(&act));
  CHECK(act == MPI_REQUEST_NULL);
  OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void expect(int rc, int cls_want) {
  int cls = -1;
  CHECK(rc != MPI_SUCCESS);
  MPI_Error_class(rc, &cls);
  if (cls != cls_want) fprintf(stderr, "pcoll: rank %d: class %d, want %d\n", me, cls, cls_want);
  CHECK(cls == cls_want);
}

static void test_errors(void) {
  int a[16], b[16], counts[8], displs[8];
  MPI_Request r;
  for (int i = 0; i < np; ++i) counts[i] = 1, displs[i] = i;
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  expect(MPI_Bcast_init(a, 1, MPI_INT, np, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_ROOT);
  expect(MPI_Bcast_init(a, 1, MPI_INT, -1, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_ROOT);
  expect(MPI_Bcast_init(a, -1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_COUNT);
  expect(MPI_Bcast_init(a, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_TYPE);
  expect(MPI_Bcast_init(a, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  expect(MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &r), MPI_ERR_COMM);
  expect(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  expect(MPI_Gather_init(a, 1, MPI_INT, b, 1, MPI_INT, np + 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_ROOT);
  expect(MPI_Gatherv_init(a, 1, MPI_INT, b, counts, displs, MPI_INT, -2, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &r),
         MPI_ERR_ROOT);
  expect(MPI_Scatter_init(a, -3, MPI_INT, b, -3, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_COUNT);
  expect(MPI_Scatterv_init(a, counts, displs, MPI_INT, b, 1, MPI_INT, np, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &r),
         MPI_ERR_ROOT);
  expect(MPI_Allgather_init(a, -1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_COUNT);
  expect(MPI_Allgatherv_init(a, 1, MPI_INT, b, NULL, displs, MPI_INT, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &r),
         MPI_ERR_ARG);
  expect(MPI_Alltoall_init(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &r),
         MPI_ERR_TYPE);
  counts[0] = -1;
  expect(MPI_Alltoallv_init(a, counts, displs, MPI_INT, b, counts, displs, MPI_INT,
                            MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_COUNT);
  counts[0] = 1;
  expect(MPI_Alltoallw_init(a, counts, displs, NULL, b, counts, displs, NULL, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &r),
         MPI_ERR_ARG);
  expect(MPI_Reduce_init(a, b, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_OP);
  expect(MPI_Reduce_init(a, b, 1, MPI_INT, MPI_SUM, np, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_ROOT);
  expect(MPI_Allreduce_init(a, b, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_COUNT);
  expect(MPI_Allreduce_init(a, b, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_OP);
  expect(MPI_Allreduce_init(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &r),
         MPI_ERR_TYPE);
  expect(MPI_Reduce_scatter_init(a, b, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_ARG);
  expect(MPI_Reduce_scatter_block_init(a, b, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                       &r),
         MPI_ERR_COUNT);
  expect(MPI_Scan_init(a, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_OP);
  expect(MPI_Exscan_init(a, b, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
         MPI_ERR_COUNT);
  /* After all those failed inits the ranks still agree on the next calls. */
  a[0] = me;
  OK(MPI_Allreduce_init(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  run(&r);
  CHECK(b[0] == np * (np - 1) / 2);
  OK(MPI_Request_free(&r));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  prog = "pcoll";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  if (np > 8) {
    if (me == 0) fprintf(stderr, "pcoll: at most 8 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  test_barrier();
  test_bcast();
  test_gather();
  test_gatherv();
  test_scatter();
  test_scatterv();
  test_allgather();
  test_allgatherv();
  test_alltoall();
  test_alltoallv();
  test_alltoallw();
  test_reduce();
  test_allreduce();
  test_reduce_scatter();
  test_reduce_scatter_block();
  test_scans();
  test_startall();
  test_lifetimes();
  test_errors();
  OK(MPI_Finalize());
  passed();
  return 0;
}
