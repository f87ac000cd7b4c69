/* Point-to-point on device buffers: blocking, nonblocking, sendrecv(_replace),
 * synchronous and buffered sends, probe + mrecv, persistent requests, sends
 * to oneself, sizes 0, 1, odd, 64 KiB and 3 MiB, and non-contiguous types
 * (holes of the receive buffer kept; two receives into interleaved columns
 * of one device buffer at once). Every rank sends to the next and receives
 * from the previous one (a ring), so any rank count >= 1 works.
 *
 *   gpu_p2p [mixed]   mixed: odd ranks use host buffers */
#include "gpu_util.h"

static const size_t kSizes[] = {0, 1, 1001, 65536, 3u << 20};
#define NSIZES (sizeof kSizes / sizeof kSizes[0])

static int next(void) {
  return (g_rank + 1) % g_size;
}
static int prev(void) {
  return (g_rank + g_size - 1) % g_size;
}

/* Checks a received buffer against the pattern of `seed`. */
static void expect(const Buf* b, size_t n, unsigned seed, const char* what) {
  unsigned char* want = malloc(n + 1);
  unsigned char* got = malloc(n + 1);
  pattern(want, n, seed);
  buf_get(got, b, n);
  for (size_t i = 0; i < n; ++i)
    CHECKF(got[i] == want[i], "%s: byte %zu of %zu is %u, expected %u", what, i, n, got[i],
           want[i]);
  free(want);
  free(got);
}

static Buf filled(size_t n, unsigned seed) {
  Buf b = buf_alloc(on_device(g_rank), n);
  unsigned char* h = malloc(n + 1);
  pattern(h, n, seed);
  buf_put(&b, h, n);
  free(h);
  return b;
}

static void ring_blocking_and_nonblocking(void) {
  for (size_t k = 0; k < NSIZES; ++k) {
    const size_t n = kSizes[k];
    /* Nonblocking ring. */
    Buf s = filled(n, 10 + g_rank), r = buf_alloc(on_device(g_rank), n);
    MPI_Request q[2];
    MPI_OK(MPI_Irecv(r.p, (int)n, MPI_BYTE, prev(), 1, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Isend(s.p, (int)n, MPI_BYTE, next(), 1, MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    expect(&r, n, 10 + prev(), "isend/irecv ring");
    /* Sendrecv ring. */
    MPI_OK(MPI_Sendrecv(s.p, (int)n, MPI_BYTE, next(), 2, r.p, (int)n, MPI_BYTE, prev(), 2,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    expect(&r, n, 10 + prev(), "sendrecv ring");
    /* Blocking: even ranks send first, odd ranks receive first. */
    MPI_Status st;
    if (g_rank % 2 == 0) {
      MPI_OK(MPI_Send(s.p, (int)n, MPI_BYTE, next(), 3, MPI_COMM_WORLD));
      MPI_OK(MPI_Recv(r.p, (int)n, MPI_BYTE, prev(), 3, MPI_COMM_WORLD, &st));
    } else {
      MPI_OK(MPI_Recv(r.p, (int)n, MPI_BYTE, prev(), 3, MPI_COMM_WORLD, &st));
      MPI_OK(MPI_Send(s.p, (int)n, MPI_BYTE, next(), 3, MPI_COMM_WORLD));
    }
    int count = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == (int)n);
    expect(&r, n, 10 + prev(), "send/recv ring");
    /* Synchronous sends, nonblocking. */
    MPI_OK(MPI_Irecv(r.p, (int)n, MPI_BYTE, prev(), 4, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Issend(s.p, (int)n, MPI_BYTE, next(), 4, MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    expect(&r, n, 10 + prev(), "issend ring");
    buf_free(&s);
    buf_free(&r);
  }
}

/* A shorter message than the receive buffer: only its bytes change. */
static void short_message(void) {
  const size_t n = 5000, m = 1234;
  Buf s = filled(n, 20 + g_rank), r = filled(n, 99);
  MPI_Request q[2];
  MPI_OK(MPI_Irecv(r.p, (int)n, MPI_BYTE, prev(), 5, MPI_COMM_WORLD, &q[0]));
  MPI_OK(MPI_Isend(s.p, (int)m, MPI_BYTE, next(), 5, MPI_COMM_WORLD, &q[1]));
  MPI_Status st[2];
  MPI_OK(MPI_Waitall(2, q, st));
  int count = -1;
  MPI_OK(MPI_Get_count(&st[0], MPI_BYTE, &count));
  CHECK(count == (int)m);
  unsigned char* got = malloc(n);
  unsigned char* a = malloc(n);
  unsigned char* b = malloc(n);
  pattern(a, n, 20 + prev());
  pattern(b, n, 99);
  buf_get(got, &r, n);
  for (size_t i = 0; i < n; ++i) CHECKF(got[i] == (i < m ? a[i] : b[i]), "byte %zu", i);
  free(got);
  free(a);
  free(b);
  buf_free(&s);
  buf_free(&r);
}

static void probe_and_mrecv(void) {
  for (size_t k = 0; k < NSIZES; ++k) {
    const size_t n = kSizes[k];
    Buf s = filled(n, 30 + g_rank), r = buf_alloc(on_device(g_rank), n);
    MPI_Request sq;
    MPI_OK(MPI_Isend(s.p, (int)n, MPI_BYTE, next(), 6, MPI_COMM_WORLD, &sq));
    MPI_Message msg;
    MPI_Status st;
    MPI_OK(MPI_Mprobe(prev(), 6, MPI_COMM_WORLD, &msg, &st));
    int count = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == (int)n);
    if (k % 2) {
      MPI_OK(MPI_Mrecv(r.p, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE));
    } else {
      MPI_Request rq;
      MPI_OK(MPI_Imrecv(r.p, count, MPI_BYTE, &msg, &rq));
      MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    expect(&r, n, 30 + prev(), "mprobe/mrecv");
    /* Iprobe until it is there, then a plain receive. */
    MPI_OK(MPI_Isend(s.p, (int)n, MPI_BYTE, next(), 7, MPI_COMM_WORLD, &sq));
    int flag = 0;
    while (!flag) MPI_OK(MPI_Iprobe(prev(), 7, MPI_COMM_WORLD, &flag, &st));
    MPI_OK(MPI_Recv(r.p, (int)n, MPI_BYTE, prev(), 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    expect(&r, n, 30 + prev(), "iprobe/recv");
    buf_free(&s);
    buf_free(&r);
  }
}

static void persistent(void) {
  const size_t n = 100000;
  Buf s = buf_alloc(on_device(g_rank), n), r = buf_alloc(on_device(g_rank), n);
  MPI_Request q[2];
  MPI_OK(MPI_Recv_init(r.p, (int)n, MPI_BYTE, prev(), 8, MPI_COMM_WORLD, &q[0]));
  MPI_OK(MPI_Send_init(s.p, (int)n, MPI_BYTE, next(), 8, MPI_COMM_WORLD, &q[1]));
  unsigned char* h = malloc(n);
  for (int round = 0; round < 3; ++round) {
    pattern(h, n, 40 + 7 * round + g_rank);
    buf_put(&s, h, n);
    MPI_OK(MPI_Startall(2, q));
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    expect(&r, n, 40 + 7 * round + prev(), "persistent");
  }
  MPI_OK(MPI_Request_free(&q[0]));
  MPI_OK(MPI_Request_free(&q[1]));
  free(h);
  buf_free(&s);
  buf_free(&r);
}

static void replace_bsend_self(void) {
  const size_t n = 70000;
  /* Sendrecv_replace: the buffer is the next rank's data afterwards. */
  Buf b = filled(n, 50 + g_rank);
  MPI_OK(MPI_Sendrecv_replace(b.p, (int)n, MPI_BYTE, next(), 9, prev(), 9, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
  expect(&b, n, 50 + prev(), "sendrecv_replace");
  /* Buffered send from a device buffer. */
  int size = (int)n + MPI_BSEND_OVERHEAD;
  void* attach = malloc((size_t)size);
  MPI_OK(MPI_Buffer_attach(attach, size));
  Buf s = filled(n, 60 + g_rank), r = buf_alloc(on_device(g_rank), n);
  MPI_Request rq;
  MPI_OK(MPI_Irecv(r.p, (int)n, MPI_BYTE, prev(), 10, MPI_COMM_WORLD, &rq));
  MPI_OK(MPI_Bsend(s.p, (int)n, MPI_BYTE, next(), 10, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  expect(&r, n, 60 + prev(), "bsend");
  MPI_OK(MPI_Buffer_detach(&attach, &size));
  free(attach);
  /* To oneself, both buffers on the device. */
  MPI_OK(MPI_Sendrecv(s.p, (int)n, MPI_BYTE, g_rank, 11, r.p, (int)n, MPI_BYTE, g_rank, 11,
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  expect(&r, n, 60 + g_rank, "self");
  buf_free(&s);
  buf_free(&r);
  buf_free(&b);
}

/* Columns of a rows x cols matrix of doubles (row-major) on the device: the
 * previous rank's column 1 lands in column 0, the next rank's column
 * cols-2 in column cols-1, both receives pending at once; every other
 * element must keep its value. */
static void columns(void) {
  const int rows = 300, cols = 7;
  const size_t bytes = (size_t)rows * cols * sizeof(double);
  MPI_Datatype col;
  MPI_OK(MPI_Type_vector(rows, 1, cols, MPI_DOUBLE, &col));
  MPI_OK(MPI_Type_commit(&col));
  double* h = malloc(bytes);
  for (int i = 0; i < rows * cols; ++i) h[i] = g_rank * 1e6 + i;
  Buf m = buf_alloc(on_device(g_rank), bytes);
  buf_put(&m, h, bytes);
  MPI_Request q[4];
  double* base = (double*)m.p;
  MPI_OK(MPI_Irecv(base + 0, 1, col, prev(), 12, MPI_COMM_WORLD, &q[0]));
  MPI_OK(MPI_Irecv(base + cols - 1, 1, col, next(), 13, MPI_COMM_WORLD, &q[1]));
  MPI_OK(MPI_Isend(base + 1, 1, col, next(), 12, MPI_COMM_WORLD, &q[2]));
  MPI_OK(MPI_Isend(base + cols - 2, 1, col, prev(), 13, MPI_COMM_WORLD, &q[3]));
  MPI_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
  double* got = malloc(bytes);
  buf_get(got, &m, bytes);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      double want = g_rank * 1e6 + i * cols + j;
      if (j == 0) want = prev() * 1e6 + i * cols + 1;
      if (j == cols - 1) want = next() * 1e6 + i * cols + cols - 2;
      CHECKF(got[i * cols + j] == want, "columns: (%d, %d) is %g, expected %g", i, j,
             got[i * cols + j], want);
    }
  /* A struct-like type with holes, to a contiguous receive and back. */
  MPI_Datatype blocks;
  MPI_OK(MPI_Type_vector(50, 3, 5, MPI_DOUBLE, &blocks));
  MPI_OK(MPI_Type_commit(&blocks));
  Buf packed = buf_alloc(on_device(g_rank), 150 * sizeof(double));
  MPI_OK(MPI_Sendrecv(m.p, 1, blocks, next(), 14, packed.p, 150, MPI_DOUBLE, prev(), 14,
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  double* p = malloc(150 * sizeof(double));
  buf_get(p, &packed, 150 * sizeof(double));
  buf_get(got, &m, bytes); /* prev's matrix is what prev sent: rebuild it */
  for (int b = 0, k = 0; b < 50; ++b)
    for (int e = 0; e < 3; ++e, ++k) {
      const int idx = b * 5 + e, j = idx % cols, i = idx / cols;
      double want = prev() * 1e6 + idx;
      if (j == 0) want = ((prev() + g_size - 1) % g_size) * 1e6 + i * cols + 1;
      if (j == cols - 1) want = g_rank * 1e6 + i * cols + cols - 2;
      CHECKF(p[k] == want, "blocks: element %d is %g, expected %g", k, p[k], want);
    }
  free(p);
  free(got);
  free(h);
  buf_free(&packed);
  buf_free(&m);
  MPI_OK(MPI_Type_free(&col));
  MPI_OK(MPI_Type_free(&blocks));
}

int main(int argc, char** argv) {
  g_mixed = argc > 1 && strcmp(argv[1], "mixed") == 0;
  gpu_init(&argc, &argv, "gpu_p2p");
  ring_blocking_and_nonblocking();
  short_message();
  probe_and_mrecv();
  persistent();
  replace_bsend_self();
  columns();
  gpu_done();
  return 0;
}
