/* The MPI 4.0 large-count (_c) point-to-point functions at small counts:
 * every one moves the same data as its int twin (a ring: each rank sends to
 * rank+1 and receives from rank-1), reports the same status and counts,
 * and rejects the same bad arguments (negative counts, also ones far below
 * INT_MIN that an int could not hold) with the same error class. */
#include <limits.h>
#include <string.h>

#include "comm_checks.h"

static int size, next, prev;

enum { N = 300 };

static void fill(int* b, int n, int salt) {
  for (int i = 0; i < n; ++i) b[i] = salt * 100000 + i;
}

static int same(const int* b, int n, int salt) {
  for (int i = 0; i < n; ++i)
    if (b[i] != salt * 100000 + i) return 0;
  return 1;
}

/* What came in from prev: salt = prev's rank + 1 + k. */
static int salt(int from, int k) { return from + 1 + k; }

static void checkStatus(const MPI_Status* st, MPI_Datatype t, MPI_Count expect) {
  MPI_Count c = -7, e = -7;
  int ci = -7, ei = -7;
  OK(MPI_Get_count_c(st, t, &c));
  OK(MPI_Get_count(st, t, &ci));
  OK(MPI_Get_elements_c(st, t, &e));
  OK(MPI_Get_elements(st, t, &ei));
  CHECK(c == expect && ci == expect);
  CHECK(e == ei);
  CHECK(st->MPI_SOURCE == prev);
}

/* Blocking sends in every mode, both forms, into receives of both forms. */
static void blocking(void) {
  int sbuf[N], rbuf[N];
  MPI_Request r;
  MPI_Status st;
  for (int mode = 0; mode < 4; ++mode) {
    for (int wide = 0; wide < 2; ++wide) {
      const int k = mode * 2 + wide;
      fill(sbuf, N, salt(wrank, k));
      memset(rbuf, 0, sizeof rbuf);
      if (wide)
        OK(MPI_Irecv_c(rbuf, (MPI_Count)N, MPI_INT, prev, k, MPI_COMM_WORLD, &r));
      else
        OK(MPI_Irecv(rbuf, N, MPI_INT, prev, k, MPI_COMM_WORLD, &r));
      OK(MPI_Barrier(MPI_COMM_WORLD)); /* every receive posted: MPI_Rsend is legal */
      int rc;
      switch (mode) {
        case 0: rc = wide ? MPI_Send_c(sbuf, N, MPI_INT, next, k, MPI_COMM_WORLD)
                          : MPI_Send(sbuf, N, MPI_INT, next, k, MPI_COMM_WORLD); break;
        case 1: rc = wide ? MPI_Ssend_c(sbuf, N, MPI_INT, next, k, MPI_COMM_WORLD)
                          : MPI_Ssend(sbuf, N, MPI_INT, next, k, MPI_COMM_WORLD); break;
        case 2: rc = wide ? MPI_Rsend_c(sbuf, N, MPI_INT, next, k, MPI_COMM_WORLD)
                          : MPI_Rsend(sbuf, N, MPI_INT, next, k, MPI_COMM_WORLD); break;
        default: {
          static char bsendBuf[N * sizeof(int) + 4 * MPI_BSEND_OVERHEAD];
          if (wide)
            OK(MPI_Buffer_attach_c(bsendBuf, (MPI_Count)sizeof bsendBuf));
          else
            OK(MPI_Buffer_attach(bsendBuf, (int)sizeof bsendBuf));
          rc = wide ? MPI_Bsend_c(sbuf, N, MPI_INT, next, k, MPI_COMM_WORLD)
                    : MPI_Bsend(sbuf, N, MPI_INT, next, k, MPI_COMM_WORLD);
          OK(MPI_Wait(&r, &st)); /* before detach: at one rank the Bsend is to self */
          void* addr = NULL;
          if (wide) {
            MPI_Count sz = 0;
            OK(MPI_Buffer_detach_c(&addr, &sz));
            CHECK(sz == (MPI_Count)sizeof bsendBuf);
          } else {
            int sz = 0;
            OK(MPI_Buffer_detach(&addr, &sz));
            CHECK(sz == (int)sizeof bsendBuf);
          }
          CHECK(addr == bsendBuf);
        }
      }
      OK(rc);
      if (mode != 3) OK(MPI_Wait(&r, &st));
      CHECK(same(rbuf, N, salt(prev, k)));
      checkStatus(&st, MPI_INT, N);
      CHECK(st.MPI_TAG == k);
    }
  }
  /* MPI_Recv_c into a blocking receive. */
  for (int wide = 0; wide < 2; ++wide) {
    fill(sbuf, N, salt(wrank, 10 + wide));
    OK(MPI_Isend(sbuf, N, MPI_INT, next, 10, MPI_COMM_WORLD, &r));
    memset(rbuf, 0, sizeof rbuf);
    if (wide)
      OK(MPI_Recv_c(rbuf, (MPI_Count)N, MPI_INT, prev, 10, MPI_COMM_WORLD, &st));
    else
      OK(MPI_Recv(rbuf, N, MPI_INT, prev, 10, MPI_COMM_WORLD, &st));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(same(rbuf, N, salt(prev, 10 + wide)));
    checkStatus(&st, MPI_INT, N);
  }
}

/* MPI_Isend_c and friends, all started at once, against MPI_Irecv_c. */
static void nonblocking(void) {
  int sbuf[4][N], rbuf[4][N];
  MPI_Request req[8];
  MPI_Status st[8];
  static char bsendBuf[N * sizeof(int) + MPI_BSEND_OVERHEAD];
  OK(MPI_Buffer_attach_c(bsendBuf, (MPI_Count)sizeof bsendBuf));
  for (int i = 0; i < 4; ++i) {
    fill(sbuf[i], N, salt(wrank, 20 + i));
    memset(rbuf[i], 0, sizeof rbuf[i]);
    OK(MPI_Irecv_c(rbuf[i], (MPI_Count)N, MPI_INT, prev, 20 + i, MPI_COMM_WORLD, &req[i]));
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Isend_c(sbuf[0], N, MPI_INT, next, 20, MPI_COMM_WORLD, &req[4]));
  OK(MPI_Issend_c(sbuf[1], N, MPI_INT, next, 21, MPI_COMM_WORLD, &req[5]));
  OK(MPI_Irsend_c(sbuf[2], N, MPI_INT, next, 22, MPI_COMM_WORLD, &req[6]));
  OK(MPI_Ibsend_c(sbuf[3], N, MPI_INT, next, 23, MPI_COMM_WORLD, &req[7]));
  OK(MPI_Waitall(8, req, st));
  for (int i = 0; i < 4; ++i) {
    CHECK(same(rbuf[i], N, salt(prev, 20 + i)));
    checkStatus(&st[i], MPI_INT, N);
  }
  void* addr;
  MPI_Count sz;
  OK(MPI_Buffer_detach_c(&addr, &sz));
  CHECK(addr == bsendBuf && sz == (MPI_Count)sizeof bsendBuf);
}

static void sendrecv(void) {
  int sbuf[N], rbuf[N], both[N];
  MPI_Status st;
  for (int wide = 0; wide < 2; ++wide) {
    fill(sbuf, N, salt(wrank, 30 + wide));
    memset(rbuf, 0, sizeof rbuf);
    if (wide)
      OK(MPI_Sendrecv_c(sbuf, N, MPI_INT, next, 30, rbuf, (MPI_Count)N, MPI_INT, prev, 30,
                        MPI_COMM_WORLD, &st));
    else
      OK(MPI_Sendrecv(sbuf, N, MPI_INT, next, 30, rbuf, N, MPI_INT, prev, 30, MPI_COMM_WORLD,
                      &st));
    CHECK(same(rbuf, N, salt(prev, 30 + wide)));
    checkStatus(&st, MPI_INT, N);

    fill(both, N, salt(wrank, 40 + wide));
    if (wide)
      OK(MPI_Sendrecv_replace_c(both, (MPI_Count)N, MPI_INT, next, 40, prev, 40, MPI_COMM_WORLD,
                                &st));
    else
      OK(MPI_Sendrecv_replace(both, N, MPI_INT, next, 40, prev, 40, MPI_COMM_WORLD, &st));
    CHECK(same(both, N, salt(prev, 40 + wide)));
    checkStatus(&st, MPI_INT, N);
  }
  /* With MPI_PROC_NULL peers: nothing moves, the status says so. */
  OK(MPI_Sendrecv_c(sbuf, N, MPI_INT, MPI_PROC_NULL, 0, rbuf, N, MPI_INT, MPI_PROC_NULL, 0,
                    MPI_COMM_WORLD, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  MPI_Count c = -1;
  OK(MPI_Get_count_c(&st, MPI_INT, &c));
  CHECK(c == 0);
}

/* Persistent requests of every kind, started twice. */
static void persistent(void) {
  int sbuf[4][N], rbuf[4][N];
  MPI_Request req[8];
  MPI_Status st[8];
  static char bsendBuf[N * sizeof(int) + MPI_BSEND_OVERHEAD];
  OK(MPI_Buffer_attach(bsendBuf, (int)sizeof bsendBuf));
  for (int i = 0; i < 4; ++i)
    OK(MPI_Recv_init_c(rbuf[i], (MPI_Count)N, MPI_INT, prev, 50 + i, MPI_COMM_WORLD, &req[i]));
  OK(MPI_Send_init_c(sbuf[0], N, MPI_INT, next, 50, MPI_COMM_WORLD, &req[4]));
  OK(MPI_Ssend_init_c(sbuf[1], N, MPI_INT, next, 51, MPI_COMM_WORLD, &req[5]));
  OK(MPI_Rsend_init_c(sbuf[2], N, MPI_INT, next, 52, MPI_COMM_WORLD, &req[6]));
  OK(MPI_Bsend_init_c(sbuf[3], N, MPI_INT, next, 53, MPI_COMM_WORLD, &req[7]));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 4; ++i) {
      fill(sbuf[i], N, salt(wrank, 50 + i + 10 * round));
      memset(rbuf[i], 0, sizeof rbuf[i]);
    }
    OK(MPI_Startall(4, req));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Startall(4, req + 4));
    OK(MPI_Waitall(8, req, st));
    for (int i = 0; i < 4; ++i) {
      CHECK(same(rbuf[i], N, salt(prev, 50 + i + 10 * round)));
      checkStatus(&st[i], MPI_INT, N);
    }
  }
  for (int i = 0; i < 8; ++i) OK(MPI_Request_free(&req[i]));
  void* addr;
  int sz;
  OK(MPI_Buffer_detach(&addr, &sz));
}

/* Matched probes received by MPI_Mrecv_c / MPI_Imrecv_c. */
static void matched(void) {
  int sbuf[N], rbuf[N];
  MPI_Request sreq, rreq;
  MPI_Message msg;
  MPI_Status st;
  for (int wide = 0; wide < 2; ++wide) {
    fill(sbuf, N, salt(wrank, 70 + wide));
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_Isend(sbuf, N, MPI_INT, next, 70, MPI_COMM_WORLD, &sreq));
    OK(MPI_Mprobe(prev, 70, MPI_COMM_WORLD, &msg, &st));
    checkStatus(&st, MPI_INT, N);
    if (wide)
      OK(MPI_Mrecv_c(rbuf, (MPI_Count)N, MPI_INT, &msg, &st));
    else
      OK(MPI_Mrecv(rbuf, N, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL);
    CHECK(same(rbuf, N, salt(prev, 70 + wide)));
    checkStatus(&st, MPI_INT, N);
    OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    fill(sbuf, N, salt(wrank, 72 + wide));
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_Isend(sbuf, N, MPI_INT, next, 72, MPI_COMM_WORLD, &sreq));
    int flag = 0;
    while (!flag) OK(MPI_Improbe(prev, 72, MPI_COMM_WORLD, &flag, &msg, &st));
    if (wide)
      OK(MPI_Imrecv_c(rbuf, (MPI_Count)N, MPI_INT, &msg, &rreq));
    else
      OK(MPI_Imrecv(rbuf, N, MPI_INT, &msg, &rreq));
    OK(MPI_Wait(&rreq, &st));
    CHECK(same(rbuf, N, salt(prev, 72 + wide)));
    checkStatus(&st, MPI_INT, N);
    OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
  }
  /* MPI_MESSAGE_NO_PROC through the _c forms. */
  OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
  OK(MPI_Mrecv_c(rbuf, N, MPI_INT, &msg, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
}

/* Counts through a derived type: a partial element makes MPI_Get_count
 * MPI_UNDEFINED in both forms, while the elements are still counted. */
static void counts(void) {
  MPI_Datatype pair;
  OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  OK(MPI_Type_commit(&pair));
  int sbuf[N], rbuf[N];
  fill(sbuf, N, 1);
  MPI_Request r;
  MPI_Status st;
  OK(MPI_Isend_c(sbuf, 7, MPI_INT, next, 80, MPI_COMM_WORLD, &r));
  OK(MPI_Recv_c(rbuf, N / 2, pair, prev, 80, MPI_COMM_WORLD, &st));
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  MPI_Count c, e;
  int ci, ei;
  OK(MPI_Get_count_c(&st, pair, &c));
  OK(MPI_Get_count(&st, pair, &ci));
  OK(MPI_Get_elements_c(&st, pair, &e));
  OK(MPI_Get_elements(&st, pair, &ei));
  CHECK(c == MPI_UNDEFINED && ci == MPI_UNDEFINED);
  CHECK(e == 7 && ei == 7);
  OK(MPI_Type_free(&pair));
}

/* Wrong arguments: the same class from both forms, and counts an int
 * cannot hold rejected too. */
static void errors(void) {
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int buf[4];
  int cls;
  MPI_Request r;
  MPI_Status st;
  const MPI_Count huge = -((MPI_Count)1 << 40);
  CHECK(MPI_Send(buf, -1, MPI_INT, next, 0, MPI_COMM_WORLD) != MPI_SUCCESS);
#define EXPECT(call, klass)                   \
  do {                                        \
    int rc_ = (call);                         \
    CHECK(rc_ != MPI_SUCCESS);                \
    OK(MPI_Error_class(rc_, &cls));           \
    CHECK(cls == (klass));                    \
  } while (0)
  EXPECT(MPI_Send_c(buf, -1, MPI_INT, next, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Send_c(buf, huge, MPI_INT, next, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Ssend_c(buf, huge, MPI_INT, next, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  /* count * size past 2^63 bytes: refused, not wrapped to a small size. */
  EXPECT(MPI_Send_c(buf, (MPI_Count)1 << 62, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD),
         MPI_ERR_COUNT);
  EXPECT(MPI_Irecv_c(buf, (MPI_Count)1 << 62, MPI_INT, prev, 0, MPI_COMM_WORLD, &r),
         MPI_ERR_COUNT);
  EXPECT(MPI_Recv_c(buf, huge, MPI_INT, prev, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
  EXPECT(MPI_Irecv_c(buf, -5, MPI_INT, prev, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  EXPECT(MPI_Isend_c(buf, 1, MPI_DATATYPE_NULL, next, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
  EXPECT(MPI_Isend_c(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
  EXPECT(MPI_Isend_c(buf, 1, MPI_INT, next, -3, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
  EXPECT(MPI_Isend_c(buf, 1, MPI_INT, next, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
  EXPECT(MPI_Isend_c(NULL, 4, MPI_INT, next, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  EXPECT(MPI_Send_init_c(buf, huge, MPI_INT, next, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  EXPECT(MPI_Recv_init_c(buf, huge, MPI_INT, prev, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  EXPECT(MPI_Sendrecv_c(buf, huge, MPI_INT, next, 0, buf, 1, MPI_INT, prev, 0, MPI_COMM_WORLD,
                        &st), MPI_ERR_COUNT);
  EXPECT(MPI_Sendrecv_replace_c(buf, huge, MPI_INT, next, 0, prev, 0, MPI_COMM_WORLD, &st),
         MPI_ERR_COUNT);
  EXPECT(MPI_Bsend_c(buf, 1, MPI_INT, next, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER); /* no buffer */
  EXPECT(MPI_Buffer_attach_c(buf, -1), MPI_ERR_ARG);
  /* A buffer size an int cannot hold (never written: nothing is sent):
   * MPI_Buffer_detach refuses it and leaves it attached, the _c form
   * returns it. */
  {
    const MPI_Count big = (MPI_Count)1 << 33;
    void* addr = NULL;
    int isz = -1;
    MPI_Count csz = -1;
    OK(MPI_Buffer_attach_c(buf, big));
    EXPECT(MPI_Buffer_detach(&addr, &isz), MPI_ERR_VALUE_TOO_LARGE);
    CHECK(isz == -1);
    OK(MPI_Buffer_detach_c(&addr, &csz));
    CHECK(addr == buf && csz == big);
  }
  MPI_Message msg = MPI_MESSAGE_NULL;
  EXPECT(MPI_Mrecv_c(buf, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
  MPI_Count c;
  EXPECT(MPI_Get_count_c(&st, MPI_DATATYPE_NULL, &c), MPI_ERR_TYPE);
  EXPECT(MPI_Get_elements_c(&st, MPI_INT, NULL), MPI_ERR_ARG);
  /* A message that does not fit: MPI_ERR_TRUNCATE from MPI_Recv_c too. */
  OK(MPI_Isend(buf, 4, MPI_INT, next, 90, MPI_COMM_WORLD, &r));
  EXPECT(MPI_Recv_c(buf, 2, MPI_INT, prev, 90, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  prog = "bigcount_p2p";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  next = (wrank + 1) % size;
  prev = (wrank + size - 1) % size;
  blocking();
  nonblocking();
  sendrecv();
  persistent();
  matched();
  counts();
  errors();
  OK(MPI_Barrier(MPI_COMM_WORLD));
  passed();
  OK(MPI_Finalize());
  return 0;
}
