/* The stream-ordered API (mpi-ext.h: MPIX_Stream_*, MPIX_*_enqueue).
 *
 *   gpu_stream [host|hostdev] [quick]
 *     (default)  a device stream (CUDA, or the mock with LOOM_DEVICE_MOCK=1)
 *                and device buffers: every operation is queued on the
 *                stream behind "kernels" that write its input, and read back
 *                by stream copies, with no host synchronisation in between
 *     host       host streams and host buffers: needs no device
 *     hostdev    host streams with device buffers (staged at once)
 *     quick      fewer sizes and iterations
 *
 * Checks: send/recv, isend/irecv with wait and waitall, every collective
 * with enqueued forms (in place too, gaps that must stay untouched),
 * host buffers on a device stream, ordering (the call returns while the
 * kernel before it still runs, and the result is right), many operations
 * in a row, and the errors (their classes). */
#include "stream_util.h"

static void* g_s;     /* the program's stream; NULL: a host stream */
static MPI_Comm g_sc; /* the stream communicator */
static int g_dev = 1; /* buffers on the device */
static int g_quick = 0;
static const int kSentinel = -7;

static Buf ibuf(size_t n) {
  return buf_alloc(g_dev, n * sizeof(int) + sizeof(int));
}
/* Sets every element (synchronously: only for buffers no queued work uses). */
static void iset(Buf* b, size_t n, int v) {
  int* h = malloc(n * sizeof(int) + 1);
  for (size_t i = 0; i < n; ++i) h[i] = v;
  buf_put(b, h, n * sizeof(int));
  free(h);
}
/* The elements, once the stream has run everything queued so far. */
static int* iget(const Buf* b, size_t n) {
  ts_sync(g_s);
  int* h = malloc(n * sizeof(int) + 1);
  buf_get(h, b, n * sizeof(int));
  return h;
}
/* p[i] = base + i, as stream work. */
static void ifill(Buf* b, size_t n, int base) {
  ts_fill(g_s, (int*)b->p, n, base, 0, b->dev);
}

#define EXPECT(got, want, what, i) \
  CHECKF((got) == (want), "%s: element %zu is %d, expected %d", what, (size_t)(i), got, want)

/* ---- point-to-point */

static void p2p_blocking(int n) {
  const int to = (g_rank + 1) % g_size, from = (g_rank + g_size - 1) % g_size;
  Buf s = ibuf(n), r = ibuf(n + 4);
  iset(&r, n + 4, kSentinel);
  ifill(&s, n, g_rank * 100000);
  MPI_Status st;
  if (g_size == 1 || g_rank % 2 == 0) {
    MPI_OK(MPIX_Send_enqueue(s.p, n, MPI_INT, to, 5, g_sc));
    MPI_OK(MPIX_Recv_enqueue(r.p, n + 4, MPI_INT, from, 5, g_sc, &st));
  } else {
    MPI_OK(MPIX_Recv_enqueue(r.p, n + 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, g_sc, &st));
    MPI_OK(MPIX_Send_enqueue(s.p, n, MPI_INT, to, 5, g_sc));
  }
  int* h = iget(&r, n + 4);
  for (int i = 0; i < n; ++i) EXPECT(h[i], from * 100000 + i, "send/recv", i);
  for (int i = n; i < n + 4; ++i) EXPECT(h[i], kSentinel, "send/recv past the message", i);
  int count = -1;
  MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
  CHECKF(st.MPI_SOURCE == from && st.MPI_TAG == 5 && count == n, "status %d/%d/%d", st.MPI_SOURCE,
         st.MPI_TAG, count);
  free(h);
  buf_free(&s);
  buf_free(&r);
}

static void p2p_nonblocking(int n, int waitall) {
  const int to = (g_rank + 1) % g_size, from = (g_rank + g_size - 1) % g_size;
  Buf s = ibuf(n), r = ibuf(n);
  iset(&r, n, kSentinel);
  ifill(&s, n, g_rank * 100000 + 1);
  MPI_Request q[2];
  MPI_Status st[2];
  MPI_OK(MPIX_Irecv_enqueue(r.p, n, MPI_INT, from, 9, g_sc, &q[0]));
  MPI_OK(MPIX_Isend_enqueue(s.p, n, MPI_INT, to, 9, g_sc, &q[1]));
  if (waitall) {
    MPI_OK(MPIX_Waitall_enqueue(2, q, st));
  } else {
    MPI_OK(MPIX_Wait_enqueue(&q[1], MPI_STATUS_IGNORE));
    MPI_OK(MPIX_Wait_enqueue(&q[0], &st[0]));
  }
  CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL);
  int* h = iget(&r, n);
  for (int i = 0; i < n; ++i) EXPECT(h[i], from * 100000 + 1 + i, "isend/irecv", i);
  CHECKF(st[0].MPI_SOURCE == from && st[0].MPI_TAG == 9, "status %d/%d", st[0].MPI_SOURCE,
         st[0].MPI_TAG);
  free(h);
  buf_free(&s);
  buf_free(&r);
}

/* ---- collectives: inputs written by stream work, results read back after */

static int tri(int p) {
  return p * (p - 1) / 2;
}

static void coll_allreduce(int n, int in_place) {
  Buf s = ibuf(n), r = ibuf(n);
  if (in_place) {
    ifill(&r, n, g_rank);
    MPI_OK(MPIX_Allreduce_enqueue(MPI_IN_PLACE, r.p, n, MPI_INT, MPI_SUM, g_sc));
  } else {
    ifill(&s, n, g_rank);
    MPI_OK(MPIX_Allreduce_enqueue(s.p, r.p, n, MPI_INT, MPI_SUM, g_sc));
  }
  int* h = iget(&r, n);
  for (int i = 0; i < n; ++i) EXPECT(h[i], g_size * i + tri(g_size), "allreduce", i);
  free(h);
  buf_free(&s);
  buf_free(&r);
}

static void coll_reduce_scatter(int n) {
  const int p = g_size;
  /* block form */
  Buf s = ibuf((size_t)n * p), r = ibuf(n + 1);
  iset(&r, n + 1, kSentinel);
  ifill(&s, (size_t)n * p, g_rank);
  MPI_OK(MPIX_Reduce_scatter_block_enqueue(s.p, r.p, n, MPI_INT, MPI_SUM, g_sc));
  int* h = iget(&r, n + 1);
  for (int k = 0; k < n; ++k)
    EXPECT(h[k], p * (g_rank * n + k) + tri(p), "reduce_scatter_block", k);
  EXPECT(h[n], kSentinel, "reduce_scatter_block past the block", n);
  free(h);
  buf_free(&s);
  buf_free(&r);
  /* uneven counts */
  int* counts = malloc(sizeof(int) * p);
  int total = 0, off = 0;
  for (int i = 0; i < p; ++i) {
    counts[i] = n + i % 2;
    if (i < g_rank) off += counts[i];
    total += counts[i];
  }
  s = ibuf(total);
  r = ibuf(counts[g_rank]);
  ifill(&s, total, g_rank);
  MPI_OK(MPIX_Reduce_scatter_enqueue(s.p, r.p, counts, MPI_INT, MPI_SUM, g_sc));
  h = iget(&r, counts[g_rank]);
  for (int k = 0; k < counts[g_rank]; ++k)
    EXPECT(h[k], p * (off + k) + tri(p), "reduce_scatter", k);
  free(h);
  free(counts);
  buf_free(&s);
  buf_free(&r);
}

static void coll_allgather(int n) {
  const int p = g_size;
  Buf s = ibuf(n), r = ibuf((size_t)n * p);
  ifill(&s, n, g_rank * 100000);
  MPI_OK(MPIX_Allgather_enqueue(s.p, n, MPI_INT, r.p, n, MPI_INT, g_sc));
  int* h = iget(&r, (size_t)n * p);
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < n; ++i) EXPECT(h[j * n + i], j * 100000 + i, "allgather", j * n + i);
  free(h);
  buf_free(&s);
  buf_free(&r);
  /* v form: block j has n - j elements (at least 1) at j * (n + 3): gaps */
  int* counts = malloc(sizeof(int) * p);
  int* displs = malloc(sizeof(int) * p);
  for (int j = 0; j < p; ++j) {
    counts[j] = n - j > 0 ? n - j : 1;
    displs[j] = j * (n + 3);
  }
  const size_t rn = (size_t)p * (n + 3);
  s = ibuf(counts[g_rank]);
  r = ibuf(rn);
  iset(&r, rn, kSentinel);
  ifill(&s, counts[g_rank], g_rank * 100000);
  MPI_OK(MPIX_Allgatherv_enqueue(s.p, counts[g_rank], MPI_INT, r.p, counts, displs, MPI_INT, g_sc));
  h = iget(&r, rn);
  for (size_t k = 0; k < rn; ++k) {
    int j = (int)(k / (size_t)(n + 3)), i = (int)(k % (size_t)(n + 3));
    EXPECT(h[k], i < counts[j] ? j * 100000 + i : kSentinel, "allgatherv", k);
  }
  free(h);
  free(counts);
  free(displs);
  buf_free(&s);
  buf_free(&r);
}

static void coll_alltoall(int n) {
  const int p = g_size;
  Buf s = ibuf((size_t)n * p), r = ibuf((size_t)n * p);
  ifill(&s, (size_t)n * p, g_rank * 100000);
  MPI_OK(MPIX_Alltoall_enqueue(s.p, n, MPI_INT, r.p, n, MPI_INT, g_sc));
  int* h = iget(&r, (size_t)n * p);
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < n; ++i)
      EXPECT(h[j * n + i], j * 100000 + g_rank * n + i, "alltoall", j * n + i);
  free(h);
  buf_free(&s);
  buf_free(&r);
  /* v form: (j + me) % 3 + 1 elements each way, at j * 4 (send) and j * 5
   * (receive): gaps on both sides */
  int *sc = malloc(sizeof(int) * p), *sd = malloc(sizeof(int) * p);
  int *rc = malloc(sizeof(int) * p), *rd = malloc(sizeof(int) * p);
  for (int j = 0; j < p; ++j) {
    sc[j] = rc[j] = (j + g_rank) % 3 + 1;
    sd[j] = j * 4;
    rd[j] = j * 5;
  }
  s = ibuf((size_t)p * 4);
  r = ibuf((size_t)p * 5);
  iset(&r, (size_t)p * 5, kSentinel);
  ifill(&s, (size_t)p * 4, g_rank * 100000);
  MPI_OK(MPIX_Alltoallv_enqueue(s.p, sc, sd, MPI_INT, r.p, rc, rd, MPI_INT, g_sc));
  h = iget(&r, (size_t)p * 5);
  for (int k = 0; k < p * 5; ++k) {
    int j = k / 5, i = k % 5;
    EXPECT(h[k], i < rc[j] ? j * 100000 + g_rank * 4 + i : kSentinel, "alltoallv", k);
  }
  free(h);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  buf_free(&s);
  buf_free(&r);
}

static void coll_rooted(int n) {
  const int root = g_size - 1;
  Buf b = ibuf(n);
  if (g_rank == root)
    ifill(&b, n, 4242);
  else
    iset(&b, n, kSentinel);
  MPI_OK(MPIX_Bcast_enqueue(b.p, n, MPI_INT, root, g_sc));
  int* h = iget(&b, n);
  for (int i = 0; i < n; ++i) EXPECT(h[i], 4242 + i, "bcast", i);
  free(h);
  buf_free(&b);
  Buf s = ibuf(n), r = ibuf(n);
  iset(&r, n, kSentinel);
  ifill(&s, n, g_rank);
  MPI_OK(MPIX_Reduce_enqueue(s.p, r.p, n, MPI_INT, MPI_SUM, 0, g_sc));
  MPI_OK(MPIX_Barrier_enqueue(g_sc));
  h = iget(&r, n);
  for (int i = 0; i < n; ++i)
    EXPECT(h[i], g_rank == 0 ? g_size * i + tri(g_size) : kSentinel, "reduce", i);
  free(h);
  buf_free(&s);
  buf_free(&r);
}

/* ---- ordering: the call returns at once, the operation waits for the
 * kernel before it, and the copy after it waits for the operation */

static void ordering(void) {
  const int n = 4096;
  const unsigned delay_us = g_quick ? 100000 : 300000;
  Buf s = ibuf(n), r = ibuf(n);
  int* out = malloc(sizeof(int) * n);
  for (int i = 0; i < n; ++i) out[i] = kSentinel;
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  ts_fill(g_s, (int*)s.p, n, g_rank, delay_us, s.dev);
  const double t0 = now_s();
  MPI_OK(MPIX_Allreduce_enqueue(s.p, r.p, n, MPI_INT, MPI_SUM, g_sc));
  const double took = now_s() - t0;
  ts_copy(out, r.p, n * sizeof(int), g_s);
  ts_sync(g_s);
  if (g_s)
    CHECKF(took < delay_us * 0.5e-6,
           "MPIX_Allreduce_enqueue took %.3f s: it waited for the "
           "kernel before it (%.3f s)",
           took, delay_us * 1e-6);
  for (int i = 0; i < n; ++i) EXPECT(out[i], g_size * i + tri(g_size), "ordered allreduce", i);
  free(out);
  buf_free(&s);
  buf_free(&r);
}

/* ---- many in a row: each input is rewritten by the next kernel, so every
 * operation must have taken its input before the next kernel runs */

static void many(void) {
  const int n = 16, iters = g_quick ? 30 : 200;
  const int to = (g_rank + 1) % g_size, from = (g_rank + g_size - 1) % g_size;
  Buf in = ibuf(n), out = ibuf((size_t)n * iters), ring = ibuf((size_t)n * iters);
  iset(&ring, (size_t)n * iters, kSentinel);
  for (int k = 0; k < iters; ++k) {
    ifill(&in, n, g_rank + k);
    MPI_OK(MPIX_Allreduce_enqueue(in.p, (int*)out.p + (size_t)k * n, n, MPI_INT, MPI_SUM, g_sc));
    if (k % 10 == 0) {
      MPI_Request q[2];
      MPI_OK(MPIX_Irecv_enqueue((int*)ring.p + (size_t)k * n, n, MPI_INT, from, k, g_sc, &q[0]));
      MPI_OK(MPIX_Isend_enqueue(in.p, n, MPI_INT, to, k, g_sc, &q[1]));
      MPI_OK(MPIX_Waitall_enqueue(2, q, MPI_STATUSES_IGNORE));
    }
  }
  int* h = iget(&out, (size_t)n * iters);
  int* g = iget(&ring, (size_t)n * iters);
  for (int k = 0; k < iters; ++k)
    for (int i = 0; i < n; ++i) {
      EXPECT(h[k * n + i], g_size * (k + i) + tri(g_size), "allreduce in a row", k * n + i);
      EXPECT(g[k * n + i], k % 10 == 0 ? from + k + i : kSentinel, "ring in a row", k * n + i);
    }
  free(h);
  free(g);
  buf_free(&in);
  buf_free(&out);
  buf_free(&ring);
}

/* Host buffers on a device stream: still stream-ordered. */
static void host_buffers(void) {
  const int n = 1000;
  int* s = malloc(sizeof(int) * n);
  int* r = malloc(sizeof(int) * n);
  ts_fill(g_s, s, n, g_rank, g_quick ? 0 : 20000, 0);
  MPI_OK(MPIX_Allreduce_enqueue(s, r, n, MPI_INT, MPI_SUM, g_sc));
  ts_sync(g_s);
  for (int i = 0; i < n; ++i) EXPECT(r[i], g_size * i + tri(g_size), "host-buffer allreduce", i);
  free(s);
  free(r);
}

/* ---- errors */

static int cls(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}
#define EXPECT_ERR(call, klass)                                                  \
  do {                                                                           \
    const int c_ = cls(call);                                                    \
    CHECKF(c_ == (klass), "%s: error class %d, expected %s", #call, c_, #klass); \
  } while (0)

static void info_error(const char* type, const char* value, int klass) {
  MPI_Info info;
  MPIX_Stream x = MPIX_STREAM_NULL;
  MPI_OK(MPI_Info_create(&info));
  if (type) MPI_OK(MPI_Info_set(info, "type", type));
  if (value) MPI_OK(MPI_Info_set(info, "value", value));
  int rc = MPIX_Stream_create(info, &x);
  CHECKF(cls(rc) == klass, "MPIX_Stream_create(type=%s, value=%s): class %d, expected %d",
         type ? type : "-", value ? value : "-", cls(rc), klass);
  MPI_OK(MPI_Info_free(&info));
}

static void errors(MPIX_Stream ms) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(g_sc, MPI_ERRORS_RETURN));
  int x[8] = {0};
  Buf b = ibuf(8);
  /* communicators without a stream */
  EXPECT_ERR(MPIX_Allreduce_enqueue(x, x + 4, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COMM);
  MPI_Comm nc, dup;
  MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, MPIX_STREAM_NULL, &nc));
  MPI_OK(MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN));
  EXPECT_ERR(MPIX_Send_enqueue(x, 1, MPI_INT, 0, 0, nc), MPI_ERR_COMM);
  MPIX_Stream got = ms;
  MPI_OK(MPIX_Comm_get_stream(nc, 0, &got));
  CHECK(got == MPIX_STREAM_NULL);
  MPI_OK(MPI_Comm_free(&nc));
  MPI_OK(MPI_Comm_dup(g_sc, &dup)); /* a duplicate is an ordinary communicator */
  MPI_OK(MPIX_Comm_get_stream(dup, 0, &got));
  CHECK(got == MPIX_STREAM_NULL);
  MPI_OK(MPI_Comm_free(&dup));
  MPI_OK(MPIX_Comm_get_stream(g_sc, 0, &got));
  CHECK(got == ms);
  EXPECT_ERR(MPIX_Comm_get_stream(g_sc, 1, &got), MPI_ERR_ARG);
  EXPECT_ERR(MPIX_Allreduce_enqueue(x, x + 4, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
  /* arguments, as the blocking calls check them */
  EXPECT_ERR(MPIX_Send_enqueue(b.p, 1, MPI_INT, g_size, 0, g_sc), MPI_ERR_RANK);
  EXPECT_ERR(MPIX_Send_enqueue(b.p, -1, MPI_INT, 0, 0, g_sc), MPI_ERR_COUNT);
  EXPECT_ERR(MPIX_Send_enqueue(b.p, 1, MPI_INT, 0, -5, g_sc), MPI_ERR_TAG);
  EXPECT_ERR(MPIX_Recv_enqueue(b.p, 1, MPI_DATATYPE_NULL, 0, 0, g_sc, MPI_STATUS_IGNORE),
             MPI_ERR_TYPE);
  MPI_Request q = MPI_REQUEST_NULL;
  EXPECT_ERR(MPIX_Isend_enqueue(b.p, 1, MPI_INT, 0, 0, g_sc, NULL), MPI_ERR_ARG);
  EXPECT_ERR(MPIX_Allreduce_enqueue(b.p, (int*)b.p + 4, 1, MPI_INT, MPI_OP_NULL, g_sc), MPI_ERR_OP);
  EXPECT_ERR(MPIX_Allreduce_enqueue(b.p, b.p, 1, MPI_INT, MPI_SUM, g_sc), MPI_ERR_BUFFER);
  EXPECT_ERR(MPIX_Bcast_enqueue(b.p, 1, MPI_INT, g_size, g_sc), MPI_ERR_ROOT);
  EXPECT_ERR(MPIX_Alltoall_enqueue(b.p, -2, MPI_INT, (int*)b.p + 4, 1, MPI_INT, g_sc),
             MPI_ERR_COUNT);
  EXPECT_ERR(MPIX_Reduce_scatter_enqueue(b.p, (int*)b.p + 4, NULL, MPI_INT, MPI_SUM, g_sc),
             MPI_ERR_ARG);
  /* requests */
  MPI_Request stale, tmp;
  MPI_OK(MPI_Send_init(x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &stale));
  tmp = stale;
  MPI_OK(MPI_Request_free(&tmp)); /* freed: `stale` is a stale handle */
  EXPECT_ERR(MPIX_Wait_enqueue(NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG);
  EXPECT_ERR(MPIX_Waitall_enqueue(-1, &q, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
  EXPECT_ERR(MPIX_Wait_enqueue(&stale, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  if (g_s) {
    /* An enqueued request: MPI_Wait refuses it (and frees it: the send
     * finishes unwatched); mixed with an ordinary one in a waitall, refused. */
    MPI_Request e[2], o;
    MPI_OK(MPIX_Irecv_enqueue(x + 4, 1, MPI_INT, g_rank, 77, g_sc, &e[0]));
    MPI_OK(MPIX_Isend_enqueue(b.p, 1, MPI_INT, g_rank, 77, g_sc, &e[1]));
    EXPECT_ERR(MPI_Wait(&e[1], MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    CHECK(e[1] == MPI_REQUEST_NULL);
    MPI_OK(MPI_Irecv(x + 6, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &o));
    MPI_Request mix[2] = {e[0], o};
    EXPECT_ERR(MPIX_Waitall_enqueue(2, mix, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    MPI_OK(MPI_Wait(&o, MPI_STATUS_IGNORE));
    MPI_OK(MPIX_Wait_enqueue(&e[0], MPI_STATUS_IGNORE));
    ts_sync(g_s);
    /* A message longer than the receive: the enqueued receive fails when it
     * completes (the handler returns: the stream goes on), in its status. */
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    MPI_OK(MPIX_Isend_enqueue(b.p, 4, MPI_INT, g_rank, 78, g_sc, &q));
    MPI_OK(MPIX_Recv_enqueue((int*)b.p + 4, 2, MPI_INT, g_rank, 78, g_sc, &st));
    MPI_OK(MPIX_Wait_enqueue(&q, MPI_STATUS_IGNORE));
    ts_sync(g_s);
    CHECKF(cls(st.MPI_ERROR) == MPI_ERR_TRUNCATE, "truncated enqueued receive: class %d",
           cls(st.MPI_ERROR));
    /* A second stream object on the same stream: not freed while requests
     * enqueued on it were not waited for. */
    MPIX_Stream ms2 = ts_mpix(g_s);
    MPI_Comm c2;
    MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms2, &c2));
    MPI_OK(MPIX_Irecv_enqueue(x + 4, 1, MPI_INT, g_rank, 79, c2, &e[0]));
    MPI_OK(MPIX_Isend_enqueue(b.p, 1, MPI_INT, g_rank, 79, c2, &e[1]));
    MPI_OK(MPI_Comm_free(&c2));
    EXPECT_ERR(MPIX_Stream_free(&ms2), MPI_ERR_OTHER);
    MPI_OK(MPIX_Waitall_enqueue(2, e, MPI_STATUSES_IGNORE));
    MPI_OK(MPIX_Stream_free(&ms2));
    ts_sync(g_s);
  } else {
    MPI_OK(MPIX_Isend_enqueue(x, 4, MPI_INT, g_rank, 78, g_sc, &q));
    EXPECT_ERR(MPIX_Recv_enqueue(x + 4, 2, MPI_INT, g_rank, 78, g_sc, MPI_STATUS_IGNORE),
               MPI_ERR_TRUNCATE);
    MPI_OK(MPIX_Wait_enqueue(&q, MPI_STATUS_IGNORE));
  }
  /* streams and infos */
  MPIX_Stream none = MPIX_STREAM_NULL;
  EXPECT_ERR(MPIX_Stream_free(&none), MPI_ERR_ARG);
  EXPECT_ERR(MPIX_Stream_free(&ms), MPI_ERR_OTHER); /* still attached to g_sc */
  EXPECT_ERR(MPIX_Stream_create(MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  EXPECT_ERR(MPIX_Stream_progress(MPIX_STREAM_NULL), MPI_SUCCESS);
  EXPECT_ERR(MPIX_Stream_progress(ms), MPI_SUCCESS);
  info_error("cudaStream_t", NULL, MPI_ERR_INFO_NOKEY);
  info_error(NULL, "0000000000000000", MPI_ERR_INFO_NOKEY);
  info_error("hipStream_t", "0000000000000000", MPI_ERR_INFO_VALUE);
  info_error("cudaStream_t", "zz", MPI_ERR_INFO_VALUE);
  info_error("cudaStream_t", "0000", MPI_ERR_INFO_VALUE);
  if (g_mock) /* hex of something that is not a stream */
    info_error("cudaStream_t", "[4]EFBEADDE", MPI_ERR_ARG);
  else if (MPIX_Query_cuda_support() == 0) /* no device at all */
    info_error("cudaStream_t", "[8]", MPI_ERR_UNSUPPORTED_OPERATION);
  MPI_Info info;
  MPI_OK(MPI_Info_create(&info));
  EXPECT_ERR(MPIX_Info_set_hex(MPI_INFO_NULL, "value", x, 4), MPI_ERR_INFO);
  EXPECT_ERR(MPIX_Info_set_hex(info, "value", x, -1), MPI_ERR_ARG);
  EXPECT_ERR(MPIX_Info_set_hex(info, "", x, 4), MPI_ERR_INFO_KEY);
  unsigned v = 0xdeadbeefu;
  MPI_OK(MPIX_Info_set_hex(info, "value", &v, sizeof v));
  char text[64];
  int flag = 0;
  MPI_OK(MPI_Info_get_string(info, "value", &(int){sizeof text}, text, &flag));
  CHECKF(flag && strcmp(text, "EFBEADDE") == 0, "MPIX_Info_set_hex wrote \"%s\"", text);
  MPI_OK(MPI_Info_free(&info));
  buf_free(&b);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "host") == 0) g_host_stream = g_no_device = 1, g_dev = 0;
    if (strcmp(argv[i], "hostdev") == 0) g_host_stream = 1;
    if (strcmp(argv[i], "quick") == 0) g_quick = 1;
  }
  if (g_host_stream && !g_dev) { /* no device needed */
    g_prog = "gpu_stream";
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  } else {
    gpu_init(&argc, &argv, "gpu_stream");
  }
  g_s = ts_create();
  MPIX_Stream ms = ts_mpix(g_s);
  MPI_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &g_sc));

  const int sizes[] = {1, 1000, 70000};
  const int nsizes = g_quick ? 2 : 3;
  for (int k = 0; k < nsizes; ++k) {
    const int n = sizes[k];
    if (g_size > 1 || n <= 1000) p2p_blocking(n); /* to self, a long send would wait forever */
    p2p_nonblocking(n, 0);
    p2p_nonblocking(n, 1);
    coll_allreduce(n, 0);
    coll_allreduce(n, 1);
    coll_reduce_scatter(n);
    coll_allgather(n);
    coll_alltoall(n);
    coll_rooted(n);
  }
  ordering();
  many();
  if (g_s) host_buffers();
  errors(ms);

  MPI_OK(MPI_Comm_free(&g_sc));
  MPI_OK(MPIX_Stream_free(&ms));
  CHECK(ms == MPIX_STREAM_NULL);
  ts_destroy(g_s);
  if (g_host_stream && !g_dev) {
    printf("%s: rank %d ok\n", g_prog, g_rank);
    fflush(stdout);
    MPI_OK(MPI_Finalize());
  } else {
    gpu_done();
  }
  return 0;
}
