/* The rest of the API on device buffers: MPI_Reduce_local (the device
 * kernels, and staging for user ops and mixed buffers), persistent
 * collectives, MPI_Pack/MPI_Unpack, one-sided operations with device origin
 * and result buffers (put, get, accumulate, get_accumulate, fetch_and_op,
 * compare_and_swap), a window on device memory (refused with
 * MPI_ERR_UNSUPPORTED_OPERATION on every rank), partitioned requests and an
 * intercommunicator's collectives.
 *
 *   gpu_misc */
#include "gpu_util.h"

static void user_max(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  double* a = in;
  double* b = inout;
  for (int i = 0; i < *len; ++i) b[i] = a[i] > b[i] ? a[i] : b[i];
}

static void reduce_local(void) {
  enum { N = 1000 };
  static double a[N], b[N], got[N];
  for (int i = 0; i < N; ++i) a[i] = i * 0.25 - 30, b[i] = 100 - i * 0.5;
  Buf da = buf_alloc(1, sizeof a), db = buf_alloc(1, sizeof b);
  buf_put(&da, a, sizeof a);
  buf_put(&db, b, sizeof b);
  MPI_OK(MPI_Reduce_local(da.p, db.p, N, MPI_DOUBLE, MPI_SUM));
  buf_get(got, &db, sizeof got);
  for (int i = 0; i < N; ++i) CHECK(got[i] == a[i] + b[i]);
  /* Host input, device inout, a user op. */
  MPI_Op op;
  MPI_OK(MPI_Op_create(user_max, 1, &op));
  buf_put(&db, b, sizeof b);
  MPI_OK(MPI_Reduce_local(a, db.p, N, MPI_DOUBLE, op));
  buf_get(got, &db, sizeof got);
  for (int i = 0; i < N; ++i) CHECK(got[i] == (a[i] > b[i] ? a[i] : b[i]));
  MPI_OK(MPI_Op_free(&op));
  /* float16 on the device: 1.5 + 2.25 = 3.75 exactly. */
  unsigned short h1[64], h2[64], hg[64];
  for (int i = 0; i < 64; ++i) h1[i] = 0x3e00, h2[i] = 0x4080; /* 1.5, 2.25 */
  Buf d1 = buf_alloc(1, sizeof h1), d2 = buf_alloc(1, sizeof h2);
  buf_put(&d1, h1, sizeof h1);
  buf_put(&d2, h2, sizeof h2);
  MPI_OK(MPI_Reduce_local(d1.p, d2.p, 64, MPIX_C_FLOAT16, MPI_SUM));
  buf_get(hg, &d2, sizeof hg);
  for (int i = 0; i < 64; ++i) CHECKF(hg[i] == 0x4380, "float16 sum %#x", hg[i]);
  /* MAXLOC on (float, int) pairs. */
  struct {
    float v;
    int i;
  } p1[10], p2[10], pg[10];
  for (int i = 0; i < 10; ++i) p1[i].v = (float)i, p1[i].i = 1, p2[i].v = 5.0f, p2[i].i = 2;
  Buf dp1 = buf_alloc(1, sizeof p1), dp2 = buf_alloc(1, sizeof p2);
  buf_put(&dp1, p1, sizeof p1);
  buf_put(&dp2, p2, sizeof p2);
  MPI_OK(MPI_Reduce_local(dp1.p, dp2.p, 10, MPI_FLOAT_INT, MPI_MAXLOC));
  buf_get(pg, &dp2, sizeof pg);
  for (int i = 0; i < 10; ++i) {
    CHECK(pg[i].v == (i > 5 ? (float)i : 5.0f));
    CHECK(pg[i].i == (i > 5 ? 1 : i == 5 ? 1 : 2));
  }
  buf_free(&dp1);
  buf_free(&dp2);
  buf_free(&d1);
  buf_free(&d2);
  buf_free(&da);
  buf_free(&db);
}

static void persistent_coll(void) {
  enum { N = 3000 };
  static int in[N], out[N];
  Buf s = buf_alloc(1, sizeof in), r = buf_alloc(1, sizeof out);
  MPI_Request q;
  MPI_OK(MPI_Allreduce_init(s.p, r.p, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < N; ++i) in[i] = i + g_rank * round;
    buf_put(&s, in, sizeof in);
    MPI_OK(MPI_Start(&q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    buf_get(out, &r, sizeof out);
    const int ranks = g_size * (g_size - 1) / 2;
    for (int i = 0; i < N; ++i) CHECK(out[i] == i * g_size + ranks * round);
  }
  MPI_OK(MPI_Request_free(&q));
  MPI_Request b;
  MPI_OK(MPI_Bcast_init(r.p, N, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &b));
  if (g_rank == 0) buf_put(&r, in, sizeof in);
  MPI_OK(MPI_Start(&b));
  MPI_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
  buf_get(out, &r, sizeof out);
  for (int i = 0; i < N; ++i) CHECK(out[i] == i); /* rank 0's last input: i + 0 */
  MPI_OK(MPI_Request_free(&b));
  buf_free(&s);
  buf_free(&r);
}

static void pack_unpack(void) {
  int src[30], back[30];
  for (int i = 0; i < 30; ++i) src[i] = i * 3 + 1;
  MPI_Datatype v;
  MPI_OK(MPI_Type_vector(10, 2, 3, MPI_INT, &v)); /* xx.xx. ... */
  MPI_OK(MPI_Type_commit(&v));
  Buf d = buf_alloc(1, sizeof src), packed = buf_alloc(1, 20 * sizeof(int));
  buf_put(&d, src, sizeof src);
  int pos = 0;
  MPI_OK(MPI_Pack(d.p, 1, v, packed.p, 20 * (int)sizeof(int), &pos, MPI_COMM_WORLD));
  CHECK(pos == 20 * (int)sizeof(int));
  int zero[30] = {0};
  buf_put(&d, zero, sizeof zero);
  pos = 0;
  MPI_OK(MPI_Unpack(packed.p, 20 * (int)sizeof(int), &pos, d.p, 1, v, MPI_COMM_WORLD));
  buf_get(back, &d, sizeof back);
  for (int i = 0; i < 30; ++i) CHECK(back[i] == (i % 3 == 2 ? 0 : src[i]));
  MPI_OK(MPI_Type_free(&v));
  buf_free(&d);
  buf_free(&packed);
}

static void rma(void) {
  enum { N = 512 };
  long* mem = NULL;
  MPI_Win win;
  MPI_OK(
      MPI_Win_allocate(N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < N; ++i) mem[i] = 0;
  const int target = (g_rank + 1) % g_size;
  long h[N], got[N];
  for (int i = 0; i < N; ++i) h[i] = g_rank * 1000 + i;
  Buf o = buf_alloc(1, sizeof h), res = buf_alloc(1, sizeof got);
  buf_put(&o, h, sizeof h);
  MPI_OK(MPI_Win_fence(0, win));
  MPI_OK(MPI_Put(o.p, N / 2, MPI_LONG, target, 0, N / 2, MPI_LONG, win));
  MPI_OK(MPI_Accumulate(o.p, N / 2, MPI_LONG, target, N / 2, N / 2, MPI_LONG, MPI_SUM, win));
  MPI_OK(MPI_Win_fence(0, win));
  const int src = (g_rank + g_size - 1) % g_size;
  for (int i = 0; i < N; ++i)
    CHECKF(mem[i] == src * 1000 + (i < N / 2 ? i : i - N / 2), "window[%d] = %ld", i, mem[i]);
  /* Get into a device buffer. */
  MPI_OK(MPI_Get(res.p, N, MPI_LONG, target, 0, N, MPI_LONG, win));
  MPI_OK(MPI_Win_fence(0, win));
  buf_get(got, &res, sizeof got);
  for (int i = 0; i < N; ++i) CHECK(got[i] == g_rank * 1000 + (i < N / 2 ? i : i - N / 2));
  /* Get_accumulate, fetch_and_op, compare_and_swap: device origin and
   * result. */
  MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
  MPI_OK(MPI_Get_accumulate(o.p, 4, MPI_LONG, res.p, 4, MPI_LONG, target, 0, 4, MPI_LONG,
                            MPI_REPLACE, win));
  MPI_OK(MPI_Win_flush(target, win));
  buf_get(got, &res, 4 * sizeof(long));
  for (int i = 0; i < 4; ++i) CHECK(got[i] == g_rank * 1000 + i);
  MPI_OK(MPI_Fetch_and_op(o.p, res.p, MPI_LONG, target, 1, MPI_SUM, win));
  MPI_OK(MPI_Win_flush(target, win));
  buf_get(got, &res, sizeof(long));
  CHECK(got[0] == g_rank * 1000 + 1);
  long cmp = 2 * g_rank * 1000 + 1; /* (rank 1000 + 1) + rank 1000 (o[0]) */
  Buf dc = buf_alloc(1, sizeof cmp), dn = buf_alloc(1, sizeof cmp);
  long nv = -7;
  buf_put(&dc, &cmp, sizeof cmp);
  buf_put(&dn, &nv, sizeof nv);
  MPI_OK(MPI_Compare_and_swap(dn.p, dc.p, res.p, MPI_LONG, target, 1, win));
  MPI_OK(MPI_Win_unlock(target, win));
  buf_get(got, &res, sizeof(long));
  CHECK(got[0] == cmp);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(mem[1] == -7);
  MPI_OK(MPI_Win_free(&win));
  /* Window memory on the device: refused on every rank. */
  Buf wm = buf_alloc(1, 4096);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rc = MPI_Win_create(wm.p, 4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECKF(cls == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_create on device memory: class %d", cls);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  buf_free(&wm);
  buf_free(&dc);
  buf_free(&dn);
  buf_free(&o);
  buf_free(&res);
}

/* Partitioned: 4 partitions of 1000 ints each, around the ring. */
static void partitioned(void) {
  enum { P = 4, C = 1000 };
  static int in[P * C], out[P * C];
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  for (int i = 0; i < P * C; ++i) in[i] = g_rank * 100000 + i;
  Buf s = buf_alloc(1, sizeof in), r = buf_alloc(1, sizeof out);
  buf_put(&s, in, sizeof in);
  MPI_Request q[2];
  MPI_OK(MPI_Precv_init(r.p, P, C, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
  MPI_OK(MPI_Psend_init(s.p, P, C, MPI_INT, next, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
  MPI_OK(MPI_Startall(2, q));
  for (int k = P - 1; k >= 0; --k) MPI_OK(MPI_Pready(k, q[1]));
  MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
  buf_get(out, &r, sizeof out);
  for (int i = 0; i < P * C; ++i) CHECK(out[i] == prev * 100000 + i);
  MPI_OK(MPI_Request_free(&q[0]));
  MPI_OK(MPI_Request_free(&q[1]));
  buf_free(&s);
  buf_free(&r);
}

/* Intercommunicator: even ranks against odd ranks (needs 2 ranks). */
static void inter(void) {
  if (g_size < 2) return;
  MPI_Comm local, ic;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &local));
  MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g_rank % 2 ? 0 : 1, 5, &ic));
  int rsize = 0;
  MPI_OK(MPI_Comm_remote_size(ic, &rsize));
  enum { N = 100 };
  int in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = i + g_rank;
  Buf s = buf_alloc(1, sizeof in), r = buf_alloc(1, sizeof out);
  buf_put(&s, in, sizeof in);
  MPI_OK(MPI_Allreduce(s.p, r.p, N, MPI_INT, MPI_SUM, ic));
  buf_get(out, &r, sizeof out);
  /* The remote group's ranks: the other parity. */
  int sum = 0;
  for (int k = (g_rank + 1) % 2; k < g_size; k += 2) sum += k;
  for (int i = 0; i < N; ++i) CHECKF(out[i] == i * rsize + sum, "inter allreduce %d", out[i]);
  MPI_OK(MPI_Comm_free(&ic));
  MPI_OK(MPI_Comm_free(&local));
  buf_free(&s);
  buf_free(&r);
}

/* A staging copy that fails (the mock checks a copy's bounds; a real
 * device may not notice): MPI_ERR_OTHER, the message naming the call. */
static void copy_failure(void) {
  if (!g_mock) return;
  Buf small = buf_alloc(1, 64);
  int out[64];
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rc = MPI_Allreduce(small.p, out, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* 256 > 64 bytes */
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING];
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, msg, &len);
  CHECKF(cls == MPI_ERR_OTHER, "class %d (%s)", cls, msg);
  /* The communicator still works. */
  int one = 1, sum = 0;
  MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == g_size);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  buf_free(&small);
}

int main(int argc, char** argv) {
  gpu_init(&argc, &argv, "gpu_misc");
  reduce_local();
  persistent_coll();
  pack_unpack();
  rma();
  partitioned();
  inter();
  copy_failure();
  gpu_done();
  return 0;
}
