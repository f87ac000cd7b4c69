/* The native point-to-point paths for device buffers (p2p/device_path.h):
 * the IPC rendezvous on a node, chunked staging, whole staging, and their
 * fallbacks, for every direction (device->device, device->host,
 * host->device) and sizes around every threshold. Each rank sends to the
 * next and receives from the previous (a ring), so 2..N ranks work, on one
 * node or several (loomrun --nodes).
 *
 *   gpu_p2p_native EXPECT
 *
 * EXPECT names the path the run's parameters force, checked at the end
 * through Loom's MPI_T counters (loom_p2p_device_*) under the mock (on a
 * real GPU they are printed, not checked: whether IPC works there depends
 * on the machine):
 *   ipc       every rank received by IPC and never declined it
 *   declined  receivers refused IPC and asked for the pipeline instead
 *   chunked   no IPC; device sends went through chunk slots
 *   staged    no IPC, no chunked send; device sends staged whole
 *   nodes     several nodes: chunked sends happened (IPC only where a ring
 *             pair shares a node) */
#include "gpu_util.h"

static const size_t kSizes[] = {
    0,     1,     1001,   16383,  16384,          16385,    32767,          32768,
    32769, 65537, 262143, 262145, (1u << 20) - 1, 1u << 20, (1u << 20) + 1, (3u << 20) + 5};
#define NSIZES (sizeof kSizes / sizeof kSizes[0])
#define BIG ((size_t)64 << 20)

static int next(void) {
  return (g_rank + 1) % g_size;
}
static int prev(void) {
  return (g_rank + g_size - 1) % g_size;
}

/* ---- MPI_T counters of the device paths -------------------------------- */

enum { kIpcRecv, kIpcMapped, kIpcDeclined, kChunkSent, kChunkRecv, kStaged, kCounters };
static const char* kCounterNames[kCounters] = {
    "loom_p2p_device_ipc_received",     "loom_p2p_device_ipc_mapped",
    "loom_p2p_device_ipc_declined",     "loom_p2p_device_chunked_sent",
    "loom_p2p_device_chunked_received", "loom_p2p_device_staged_whole"};
static MPI_T_pvar_session g_session;
static MPI_T_pvar_handle g_handle[kCounters];

static void counters_start(void) {
  int provided = 0, idx = -1, count = 0;
  MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_OK(MPI_T_pvar_session_create(&g_session));
  for (int i = 0; i < kCounters; ++i) {
    MPI_OK(MPI_T_pvar_get_index(kCounterNames[i], MPI_T_PVAR_CLASS_COUNTER, &idx));
    MPI_OK(MPI_T_pvar_handle_alloc(g_session, idx, NULL, &g_handle[i], &count));
    MPI_OK(MPI_T_pvar_start(g_session, g_handle[i]));
  }
}

static unsigned long long counter(int i) {
  unsigned long long v = 0;
  MPI_OK(MPI_T_pvar_read(g_session, g_handle[i], &v));
  return v;
}

static void counters_stop(void) {
  for (int i = 0; i < kCounters; ++i) MPI_OK(MPI_T_pvar_handle_free(g_session, &g_handle[i]));
  MPI_OK(MPI_T_pvar_session_free(&g_session));
  MPI_OK(MPI_T_finalize());
}

/* ---- buffers ------------------------------------------------------------ */

static void put_pattern(Buf* b, size_t n, unsigned seed) {
  unsigned char* h = malloc(n + 1);
  pattern(h, n, seed);
  buf_put(b, h, n);
  free(h);
}

/* Bytes [0, n) are the pattern of `seed`, bytes [n, total) are `fill`. */
static void expect_bytes(const Buf* b, size_t n, size_t total, unsigned seed, int fill,
                         const char* what, size_t size) {
  unsigned char* got = malloc(total + 1);
  unsigned char* want = malloc(n + 1);
  pattern(want, n, seed);
  buf_get(got, b, total);
  for (size_t i = 0; i < total; ++i) {
    const int w = i < n ? want[i] : fill;
    CHECKF(got[i] == w, "%s (%zu B): byte %zu of %zu is %u, expected %u", what, size, i, total,
           got[i], w);
  }
  free(got);
  free(want);
}

static Buf alloc_filled(int device, size_t n, int fill) {
  Buf b = buf_alloc(device, n);
  unsigned char* h = malloc(n + 1);
  memset(h, fill, n + 1);
  buf_put(&b, h, n);
  free(h);
  return b;
}

/* ---- the cases ---------------------------------------------------------- */

/* Directions: 0 device->device, 1 device->host, 2 host->device. */
static const char* kDir[] = {"device->device", "device->host", "host->device"};
static int sends_from_device(int d) {
  return d != 2;
}
static int receives_into_device(int d) {
  return d != 1;
}

/* One message of every size around the thresholds, each direction, through
 * isend/irecv and through blocking send/recv with the receive posted late
 * (the request arrives unexpected: an IpcRts kept aside). */
static void sizes(void) {
  for (int d = 0; d < 3; ++d)
    for (size_t k = 0; k < NSIZES; ++k) {
      const size_t n = kSizes[k];
      const unsigned seed = 100 + 17 * (unsigned)k + (unsigned)d;
      Buf s = buf_alloc(sends_from_device(d), n);
      Buf r = alloc_filled(receives_into_device(d), n + 64, 0xEE);
      put_pattern(&s, n, seed + (unsigned)g_rank);
      MPI_Request q[2];
      MPI_Status st;
      MPI_OK(MPI_Irecv(r.p, (int)n, MPI_BYTE, prev(), 1, MPI_COMM_WORLD, &q[0]));
      MPI_OK(MPI_Isend(s.p, (int)n, MPI_BYTE, next(), 1, MPI_COMM_WORLD, &q[1]));
      MPI_OK(MPI_Wait(&q[0], &st));
      MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
      int count = -1;
      MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
      CHECKF(count == (int)n, "%s: count %d, expected %zu", kDir[d], count, n);
      expect_bytes(&r, n, n + 64, seed + (unsigned)prev(), 0xEE, kDir[d], n);
      /* Unexpected: the send goes first, the receive after a barrier. */
      put_pattern(&s, n, seed + 50 + (unsigned)g_rank);
      MPI_OK(MPI_Isend(s.p, (int)n, MPI_BYTE, next(), 2, MPI_COMM_WORLD, &q[1]));
      MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
      MPI_OK(MPI_Recv(r.p, (int)n, MPI_BYTE, prev(), 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
      expect_bytes(&r, n, n, seed + 50 + (unsigned)prev(), 0, kDir[d], n);
      buf_free(&s);
      buf_free(&r);
    }
}

/* 64 MiB device to device, once each way round the ring. */
static void big(void) {
  Buf s = buf_alloc(1, BIG), r = buf_alloc(1, BIG);
  put_pattern(&s, BIG, 7 + (unsigned)g_rank);
  MPI_OK(MPI_Sendrecv(s.p, (int)BIG, MPI_BYTE, next(), 3, r.p, (int)BIG, MPI_BYTE, prev(), 3,
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  expect_bytes(&r, BIG, BIG, 7 + (unsigned)prev(), 0, "64 MiB", BIG);
  buf_free(&s);
  buf_free(&r);
}

/* Many messages of one tag in flight, of sizes that take different
 * protocols (eager, IPC, chunked): they must match in order. */
static void ordering(void) {
  enum { K = 24 };
  static const size_t sz[4] = {100, 40000, 1100000, 20000};
  Buf s[K], r[K];
  MPI_Request q[2 * K];
  for (int i = 0; i < K; ++i) {
    const size_t n = sz[i % 4];
    s[i] = buf_alloc(i % 3 != 2, n); /* every third send from host memory */
    r[i] = buf_alloc(i % 5 != 4, n);
    put_pattern(&s[i], n, 300 + (unsigned)i + 1000u * (unsigned)g_rank);
  }
  for (int i = 0; i < K; ++i)
    MPI_OK(MPI_Irecv(r[i].p, (int)r[i].bytes, MPI_BYTE, prev(), 4, MPI_COMM_WORLD, &q[i]));
  for (int i = 0; i < K; ++i)
    MPI_OK(MPI_Isend(s[i].p, (int)s[i].bytes, MPI_BYTE, next(), 4, MPI_COMM_WORLD, &q[K + i]));
  MPI_OK(MPI_Waitall(2 * K, q, MPI_STATUSES_IGNORE));
  for (int i = 0; i < K; ++i) {
    expect_bytes(&r[i], r[i].bytes, r[i].bytes, 300 + (unsigned)i + 1000u * (unsigned)prev(), 0,
                 "ordering", r[i].bytes);
    buf_free(&s[i]);
    buf_free(&r[i]);
  }
}

/* Rank 0 receives from every other rank with MPI_ANY_SOURCE into device
 * buffers; the status says whose message landed where. */
static void any_source(void) {
  const size_t n = 300000;
  if (g_size < 2) return;
  if (g_rank == 0) {
    for (int i = 1; i < g_size; ++i) {
      Buf r = buf_alloc(1, n);
      MPI_Status st;
      MPI_OK(MPI_Recv(r.p, (int)n, MPI_BYTE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
      CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < g_size);
      expect_bytes(&r, n, n, 500 + (unsigned)st.MPI_SOURCE, 0, "any source", n);
      buf_free(&r);
    }
  } else {
    Buf s = buf_alloc(1, n);
    put_pattern(&s, n, 500 + (unsigned)g_rank);
    MPI_OK(MPI_Send(s.p, (int)n, MPI_BYTE, 0, 5, MPI_COMM_WORLD));
    buf_free(&s);
  }
}

/* Matched probe of a large device message, then (i)mrecv into a device
 * buffer; and iprobe then recv into host memory. */
static void probes(void) {
  const size_t n = 200000;
  Buf s = buf_alloc(1, n), r = buf_alloc(1, n), h = buf_alloc(0, n);
  put_pattern(&s, n, 600 + (unsigned)g_rank);
  MPI_Request sq;
  MPI_OK(MPI_Isend(s.p, (int)n, MPI_BYTE, next(), 6, MPI_COMM_WORLD, &sq));
  MPI_Message msg;
  MPI_Status st;
  MPI_OK(MPI_Mprobe(prev(), 6, MPI_COMM_WORLD, &msg, &st));
  int count = -1;
  MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
  CHECK(count == (int)n);
  MPI_Request rq;
  MPI_OK(MPI_Imrecv(r.p, count, MPI_BYTE, &msg, &rq));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  expect_bytes(&r, n, n, 600 + (unsigned)prev(), 0, "mprobe/imrecv", n);
  MPI_OK(MPI_Isend(s.p, (int)n, MPI_BYTE, next(), 7, MPI_COMM_WORLD, &sq));
  int flag = 0;
  while (!flag) MPI_OK(MPI_Iprobe(prev(), 7, MPI_COMM_WORLD, &flag, &st));
  MPI_OK(MPI_Recv(h.p, (int)n, MPI_BYTE, prev(), 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  expect_bytes(&h, n, n, 600 + (unsigned)prev(), 0, "iprobe/recv", n);
  buf_free(&s);
  buf_free(&r);
  buf_free(&h);
}

/* A device receive that never matches is cancelled; its buffer is untouched. */
static void cancel(void) {
  const size_t n = 100000;
  Buf r = alloc_filled(1, n, 0x5A);
  MPI_Request q;
  MPI_Status st;
  int cancelled = 0;
  MPI_OK(MPI_Irecv(r.p, (int)n, MPI_BYTE, prev(), 99, MPI_COMM_WORLD, &q));
  MPI_OK(MPI_Cancel(&q));
  MPI_OK(MPI_Wait(&q, &st));
  MPI_OK(MPI_Test_cancelled(&st, &cancelled));
  CHECK(cancelled);
  expect_bytes(&r, 0, n, 0, 0x5A, "cancelled receive", n);
  buf_free(&r);
}

/* A message longer than the receive: MPI_ERR_TRUNCATE, the receive's
 * bytes filled, nothing past them written. Every protocol's size. */
static void truncation(void) {
  static const size_t sz[] = {1000, 20000, 100000, 3u << 20};
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  for (int d = 0; d < 3; ++d)
    for (size_t k = 0; k < sizeof sz / sizeof sz[0]; ++k) {
      const size_t n = sz[k], cap = n / 2 + 3, guard = 4096;
      Buf s = buf_alloc(sends_from_device(d), n);
      Buf r = alloc_filled(receives_into_device(d), cap + guard, 0xC3);
      put_pattern(&s, n, 700 + (unsigned)k + (unsigned)g_rank);
      MPI_Request q[2];
      MPI_Status st[2];
      MPI_OK(MPI_Irecv(r.p, (int)cap, MPI_BYTE, prev(), 8, MPI_COMM_WORLD, &q[0]));
      MPI_OK(MPI_Isend(s.p, (int)n, MPI_BYTE, next(), 8, MPI_COMM_WORLD, &q[1]));
      const int rc = MPI_Waitall(2, q, st);
      CHECKF(rc == MPI_ERR_IN_STATUS, "%s truncation of %zu B: Waitall gave %d", kDir[d], n, rc);
      CHECKF(st[0].MPI_ERROR == MPI_ERR_TRUNCATE, "%s: receive error %d", kDir[d], st[0].MPI_ERROR);
      CHECK(st[1].MPI_ERROR == MPI_SUCCESS);
      expect_bytes(&r, cap, cap + guard, 700 + (unsigned)k + (unsigned)prev(), 0xC3,
                   "truncated receive", n);
      buf_free(&s);
      buf_free(&r);
    }
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* The same allocation sent again and again, from different offsets and
 * with new contents: the receiver maps it once (when IPC is used). Then
 * the sender frees it and allocates again (often at the same address)
 * before each message: the receiver must see the new memory, never the
 * old mapping. */
static void reuse(int strict) {
  const size_t n = 1u << 20, off = 4096;
  const int rounds = 6;
  Buf s = buf_alloc(1, n + off), r = buf_alloc(1, n);
  const unsigned long long mapped0 = counter(kIpcMapped), ipc0 = counter(kIpcRecv);
  for (int i = 0; i < rounds; ++i) {
    Buf view = s;
    if (i % 2) view.p = (char*)s.p + off; /* the same allocation, another offset */
    put_pattern(&view, n, 800 + (unsigned)i + 10u * (unsigned)g_rank);
    MPI_OK(MPI_Sendrecv(view.p, (int)n, MPI_BYTE, next(), 9, r.p, (int)n, MPI_BYTE, prev(), 9,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    expect_bytes(&r, n, n, 800 + (unsigned)i + 10u * (unsigned)prev(), 0, "same allocation", n);
  }
  const unsigned long long mappedSame = counter(kIpcMapped) - mapped0;
  const unsigned long long ipcSame = counter(kIpcRecv) - ipc0;
  for (int i = 0; i < rounds; ++i) {
    buf_free(&s);
    s = buf_alloc(1, n + off);
    put_pattern(&s, n, 900 + (unsigned)i + 10u * (unsigned)g_rank);
    MPI_OK(MPI_Sendrecv(s.p, (int)n, MPI_BYTE, next(), 10, r.p, (int)n, MPI_BYTE, prev(), 10,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    expect_bytes(&r, n, n, 900 + (unsigned)i + 10u * (unsigned)prev(), 0, "reallocated", n);
  }
  const unsigned long long mappedNew = counter(kIpcMapped) - mapped0 - mappedSame;
  if (strict) {
    /* By IPC: one mapping for all rounds on one allocation (none if an
     * earlier case mapped it already), one per new allocation. */
    CHECKF(ipcSame == (unsigned long long)rounds, "IPC receives of one allocation: %llu", ipcSame);
    CHECKF(mappedSame <= 1, "one allocation was mapped %llu times", mappedSame);
    CHECKF(mappedNew == (unsigned long long)rounds, "%d new allocations, %llu mappings", rounds,
           mappedNew);
  }
  buf_free(&s);
  buf_free(&r);
}

int main(int argc, char** argv) {
  const char* expect = argc > 1 ? argv[1] : "any";
  gpu_init(&argc, &argv, "gpu_p2p_native");
  counters_start();
  const int ipc = strcmp(expect, "ipc") == 0;
  sizes();
  big();
  ordering();
  any_source();
  probes();
  cancel();
  truncation();
  reuse(ipc && g_mock);

  unsigned long long c[kCounters], sum[kCounters];
  for (int i = 0; i < kCounters; ++i) c[i] = counter(i);
  MPI_OK(MPI_Allreduce(c, sum, kCounters, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  if (g_rank == 0)
    printf(
        "gpu_p2p_native: %s: ipc received %llu, mapped %llu, declined %llu; chunked sent %llu, "
        "received %llu; staged whole %llu\n",
        expect, sum[kIpcRecv], sum[kIpcMapped], sum[kIpcDeclined], sum[kChunkSent], sum[kChunkRecv],
        sum[kStaged]);
  if (g_mock && g_size > 1) {
    if (ipc) {
      CHECKF(c[kIpcRecv] > 0 && c[kIpcDeclined] == 0, "ipc: received %llu, declined %llu",
             c[kIpcRecv], c[kIpcDeclined]);
    } else if (strcmp(expect, "declined") == 0) {
      CHECKF(c[kIpcRecv] == 0 && c[kIpcDeclined] > 0 && c[kChunkSent] > 0,
             "declined: ipc %llu, declined %llu, chunked %llu", c[kIpcRecv], c[kIpcDeclined],
             c[kChunkSent]);
    } else if (strcmp(expect, "chunked") == 0) {
      CHECKF(c[kIpcRecv] == 0 && c[kChunkSent] > 0 && c[kChunkRecv] > 0,
             "chunked: ipc %llu, chunked sent %llu, received %llu", c[kIpcRecv], c[kChunkSent],
             c[kChunkRecv]);
    } else if (strcmp(expect, "staged") == 0) {
      CHECKF(c[kIpcRecv] == 0 && c[kChunkSent] == 0 && c[kStaged] > 0,
             "staged: ipc %llu, chunked sent %llu, staged %llu", c[kIpcRecv], c[kChunkSent],
             c[kStaged]);
    } else if (strcmp(expect, "nodes") == 0) {
      CHECKF(sum[kChunkSent] > 0 && sum[kChunkRecv] > 0, "nodes: chunked sent %llu, received %llu",
             sum[kChunkSent], sum[kChunkRecv]);
    }
  }
  counters_stop();
  gpu_done();
  return 0;
}
