/* Every collective on device buffers, blocking and nonblocking, with
 * MPI_IN_PLACE, displaced blocks (gaps the call must not write), a
 * non-contiguous type, float16/bfloat16 sums and MINLOC/MAXLOC pairs. Each
 * call runs twice, on host buffers and on this rank's device buffers, and
 * the two results must be the same bytes (the host run is the reference:
 * the same algorithm runs both, selection does not depend on where the
 * buffers are, so even float sums of random bits agree; a sum that makes a
 * NaN may make another NaN on a GPU, which counts as the same).
 *
 *   gpu_coll [mixed] [quick]   mixed: odd ranks use host buffers in the
 *                              device run; quick: one small count */
#include <math.h>

#include "gpu_util.h"

static int g_n; /* elements per block */
static int g_root;

/* One call: `s` and `r` are the send and receive buffers (either kind),
 * `req` NULL for the blocking form. */
typedef void (*CallFn)(void* s, void* r, MPI_Request* req);

typedef struct {
  const char* name;
  size_t sbytes, rbytes; /* this rank's buffer sizes */
  CallFn call;
  /* Bytes of the result the standard defines (0: all of rbytes); -1:
   * none on rank 0 (exscan). The rest may hold what the algorithm left. */
  long defined;
  int fk; /* floating kind of a reduction's elements (gpu_util.h), else 0 */
} Case;

/* Runs `c` with buffers of kind `dev`; returns the receive buffer's bytes. */
static unsigned char* run(const Case* c, int dev, int nb) {
  Buf s = buf_alloc(dev, c->sbytes), r = buf_alloc(dev, c->rbytes);
  unsigned char* h = malloc(c->sbytes + c->rbytes + 1);
  pattern(h, c->sbytes, 7 + (unsigned)g_rank);
  pattern(h + c->sbytes, c->rbytes, 1000 + (unsigned)g_rank);
  buf_put(&s, h, c->sbytes);
  buf_put(&r, h + c->sbytes, c->rbytes);
  if (nb) {
    MPI_Request q = MPI_REQUEST_NULL;
    c->call(s.p, r.p, &q);
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  } else {
    c->call(s.p, r.p, NULL);
  }
  unsigned char* out = malloc(c->rbytes + 1);
  buf_get(out, &r, c->rbytes);
  buf_free(&s);
  buf_free(&r);
  free(h);
  return out;
}

static void check(const Case* c) {
  for (int nb = 0; nb < 2; ++nb) {
    unsigned char* want = run(c, 0, nb);
    unsigned char* got = run(c, on_device(g_rank), nb);
    size_t upto = c->defined > 0 ? (size_t)c->defined : c->rbytes;
    if (c->defined < 0 && g_rank == 0) upto = 0;
    for (size_t i = 0; i < upto; ++i)
      CHECKF(same_byte(got, want, i, c->fk == FK_HALF || c->fk == FK_BF16 ? 2 : 4, c->fk),
             "%s%s (n=%d, root %d): byte %zu of %zu: device %u, host %u",
             nb ? "nonblocking " : "", c->name, g_n, g_root, i, c->rbytes, got[i], want[i]);
    free(want);
    free(got);
  }
}

#define NB(req, blocking, nonblocking) \
  do {                                 \
    if (req)                           \
      MPI_OK(nonblocking);             \
    else                               \
      MPI_OK(blocking);                \
  } while (0)

static const void* in_place_if(int cond, const void* s) {
  return cond ? MPI_IN_PLACE : s;
}

/* ---- the calls */

static void c_barrier(void* s, void* r, MPI_Request* q) {
  (void)s, (void)r;
  NB(q, MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, q));
}
static void c_bcast(void* s, void* r, MPI_Request* q) {
  (void)s;
  NB(q, MPI_Bcast(r, g_n, MPI_INT, g_root, MPI_COMM_WORLD),
     MPI_Ibcast(r, g_n, MPI_INT, g_root, MPI_COMM_WORLD, q));
}
static void c_reduce(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Reduce(s, r, g_n, MPI_INT, MPI_SUM, g_root, MPI_COMM_WORLD),
     MPI_Ireduce(s, r, g_n, MPI_INT, MPI_SUM, g_root, MPI_COMM_WORLD, q));
}
static void c_reduce_ip(void* s, void* r, MPI_Request* q) {
  const void* sb = in_place_if(g_rank == g_root, s);
  NB(q, MPI_Reduce(sb, r, g_n, MPI_INT, MPI_MAX, g_root, MPI_COMM_WORLD),
     MPI_Ireduce(sb, r, g_n, MPI_INT, MPI_MAX, g_root, MPI_COMM_WORLD, q));
}
static void c_allreduce_f(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Allreduce(s, r, g_n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Iallreduce(s, r, g_n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, q));
}
static void c_allreduce_ip(void* s, void* r, MPI_Request* q) {
  (void)s;
  NB(q, MPI_Allreduce(MPI_IN_PLACE, r, g_n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD),
     MPI_Iallreduce(MPI_IN_PLACE, r, g_n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD, q));
}
static void c_allreduce_h(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Allreduce(s, r, g_n, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD),
     MPI_Iallreduce(s, r, g_n, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD, q));
}
static void c_allreduce_bf(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Allreduce(s, r, g_n, MPIX_BFLOAT16, MPI_SUM, MPI_COMM_WORLD),
     MPI_Iallreduce(s, r, g_n, MPIX_BFLOAT16, MPI_SUM, MPI_COMM_WORLD, q));
}
static void c_minloc(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Allreduce(s, r, g_n, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD),
     MPI_Iallreduce(s, r, g_n, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD, q));
}
static void c_maxloc(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Reduce(s, r, g_n, MPI_2INT, MPI_MAXLOC, g_root, MPI_COMM_WORLD),
     MPI_Ireduce(s, r, g_n, MPI_2INT, MPI_MAXLOC, g_root, MPI_COMM_WORLD, q));
}
static MPI_Datatype g_every_other; /* x.x.x.x (extent 7 ints): 2 of them span 14 */
static void c_allreduce_vec(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Allreduce(s, r, 2, g_every_other, MPI_BOR, MPI_COMM_WORLD),
     MPI_Iallreduce(s, r, 2, g_every_other, MPI_BOR, MPI_COMM_WORLD, q));
}
static void c_gather(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Gather(s, g_n, MPI_INT, r, g_n, MPI_INT, g_root, MPI_COMM_WORLD),
     MPI_Igather(s, g_n, MPI_INT, r, g_n, MPI_INT, g_root, MPI_COMM_WORLD, q));
}
static void c_gather_ip(void* s, void* r, MPI_Request* q) {
  const void* sb = in_place_if(g_rank == g_root, s);
  NB(q, MPI_Gather(sb, g_n, MPI_INT, r, g_n, MPI_INT, g_root, MPI_COMM_WORLD),
     MPI_Igather(sb, g_n, MPI_INT, r, g_n, MPI_INT, g_root, MPI_COMM_WORLD, q));
}
static int g_counts[64], g_displs[64], g_scounts[64], g_sdispls[64];
static void c_gatherv(void* s, void* r, MPI_Request* q) {
  const int mine = g_counts[g_rank];
  NB(q, MPI_Gatherv(s, mine, MPI_INT, r, g_counts, g_displs, MPI_INT, g_root, MPI_COMM_WORLD),
     MPI_Igatherv(s, mine, MPI_INT, r, g_counts, g_displs, MPI_INT, g_root, MPI_COMM_WORLD, q));
}
static void c_scatter(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Scatter(s, g_n, MPI_INT, r, g_n, MPI_INT, g_root, MPI_COMM_WORLD),
     MPI_Iscatter(s, g_n, MPI_INT, r, g_n, MPI_INT, g_root, MPI_COMM_WORLD, q));
}
static void c_scatterv(void* s, void* r, MPI_Request* q) {
  const int mine = g_counts[g_rank];
  NB(q, MPI_Scatterv(s, g_counts, g_displs, MPI_INT, r, mine, MPI_INT, g_root, MPI_COMM_WORLD),
     MPI_Iscatterv(s, g_counts, g_displs, MPI_INT, r, mine, MPI_INT, g_root, MPI_COMM_WORLD, q));
}
static void c_allgather(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Allgather(s, g_n, MPI_INT, r, g_n, MPI_INT, MPI_COMM_WORLD),
     MPI_Iallgather(s, g_n, MPI_INT, r, g_n, MPI_INT, MPI_COMM_WORLD, q));
}
static void c_allgather_ip(void* s, void* r, MPI_Request* q) {
  (void)s;
  NB(q, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, g_n, MPI_INT, MPI_COMM_WORLD),
     MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, g_n, MPI_INT, MPI_COMM_WORLD, q));
}
static void c_allgatherv(void* s, void* r, MPI_Request* q) {
  const int mine = g_counts[g_rank];
  NB(q, MPI_Allgatherv(s, mine, MPI_INT, r, g_counts, g_displs, MPI_INT, MPI_COMM_WORLD),
     MPI_Iallgatherv(s, mine, MPI_INT, r, g_counts, g_displs, MPI_INT, MPI_COMM_WORLD, q));
}
static void c_alltoall(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Alltoall(s, g_n, MPI_INT, r, g_n, MPI_INT, MPI_COMM_WORLD),
     MPI_Ialltoall(s, g_n, MPI_INT, r, g_n, MPI_INT, MPI_COMM_WORLD, q));
}
static void c_alltoall_ip(void* s, void* r, MPI_Request* q) {
  (void)s;
  NB(q, MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, g_n, MPI_INT, MPI_COMM_WORLD),
     MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, g_n, MPI_INT, MPI_COMM_WORLD, q));
}
/* alltoallv: the same count and displacement table for both sides. */
static void c_alltoallv(void* s, void* r, MPI_Request* q) {
  NB(q,
     MPI_Alltoallv(s, g_scounts, g_sdispls, MPI_INT, r, g_scounts, g_sdispls, MPI_INT,
                   MPI_COMM_WORLD),
     MPI_Ialltoallv(s, g_scounts, g_sdispls, MPI_INT, r, g_scounts, g_sdispls, MPI_INT,
                    MPI_COMM_WORLD, q));
}
static int g_wdispls[64];
static MPI_Datatype g_wtypes[64];
static void c_alltoallw(void* s, void* r, MPI_Request* q) {
  NB(q,
     MPI_Alltoallw(s, g_scounts, g_wdispls, g_wtypes, r, g_scounts, g_wdispls, g_wtypes,
                   MPI_COMM_WORLD),
     MPI_Ialltoallw(s, g_scounts, g_wdispls, g_wtypes, r, g_scounts, g_wdispls, g_wtypes,
                    MPI_COMM_WORLD, q));
}
static void c_reduce_scatter(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Reduce_scatter(s, r, g_counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Ireduce_scatter(s, r, g_counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q));
}
static void c_reduce_scatter_block(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Reduce_scatter_block(s, r, g_n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Ireduce_scatter_block(s, r, g_n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, q));
}
static void c_reduce_scatter_block_ip(void* s, void* r, MPI_Request* q) {
  (void)s;
  NB(q, MPI_Reduce_scatter_block(MPI_IN_PLACE, r, g_n, MPI_INT, MPI_BXOR, MPI_COMM_WORLD),
     MPI_Ireduce_scatter_block(MPI_IN_PLACE, r, g_n, MPI_INT, MPI_BXOR, MPI_COMM_WORLD, q));
}
static void c_scan(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Scan(s, r, g_n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Iscan(s, r, g_n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q));
}
static void c_scan_ip(void* s, void* r, MPI_Request* q) {
  (void)s;
  NB(q, MPI_Scan(MPI_IN_PLACE, r, g_n, MPI_INT, MPI_PROD, MPI_COMM_WORLD),
     MPI_Iscan(MPI_IN_PLACE, r, g_n, MPI_INT, MPI_PROD, MPI_COMM_WORLD, q));
}
static void c_exscan(void* s, void* r, MPI_Request* q) {
  NB(q, MPI_Exscan(s, r, g_n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Iexscan(s, r, g_n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q));
}

int main(int argc, char** argv) {
  int quick = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "mixed") == 0) g_mixed = 1;
    if (strcmp(argv[i], "quick") == 0) quick = 1;
  }
  gpu_init(&argc, &argv, "gpu_coll");
  const int p = g_size;
  CHECK(p <= 64);
  MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &g_every_other));
  MPI_OK(MPI_Type_commit(&g_every_other));
  const int counts[] = {1, 5, 1001, 20000};
  const int ncounts = quick ? 2 : 4;
  for (int ci = 0; ci < ncounts; ++ci) {
    g_n = counts[ci];
    const size_t n = (size_t)g_n, P = (size_t)p;
    /* v forms: rank i has n + i elements, blocks 3 elements apart. */
    int total = 0, span = 0;
    for (int i = 0; i < p; ++i) {
      g_counts[i] = g_n + i;
      g_displs[i] = span;
      span += g_counts[i] + 3;
      total += g_counts[i];
    }
    /* alltoallv/w: n + (r + j) % 2 elements between ranks r and j (the
     * same both ways), 2 elements of gap between blocks. */
    int aspan = 0;
    for (int i = 0; i < p; ++i) {
      g_scounts[i] = g_n + (g_rank + i) % 2;
      g_sdispls[i] = aspan;
      g_wdispls[i] = aspan * (int)sizeof(int);
      g_wtypes[i] = MPI_INT;
      aspan += g_scounts[i] + 2;
    }
    const size_t I = sizeof(int);
    const Case cases[] = {
        {"barrier", 0, 0, c_barrier},
        {"bcast", 0, n * I, c_bcast},
        {"reduce", n * I, n * I, c_reduce},
        {"reduce in place", n * I, n * I, c_reduce_ip},
        {"allreduce float", n * 4, n * 4, c_allreduce_f, 0, FK_FLOAT},
        {"allreduce in place", n * 8, n * 8, c_allreduce_ip},
        {"allreduce float16", n * 2, n * 2, c_allreduce_h, 0, FK_HALF},
        {"allreduce bfloat16", n * 2, n * 2, c_allreduce_bf, 0, FK_BF16},
        {"allreduce minloc double_int", n * 16, n * 16, c_minloc},
        {"reduce maxloc 2int", n * 8, n * 8, c_maxloc},
        {"allreduce every other int", 14 * I, 14 * I, c_allreduce_vec},
        {"gather", n * I, n * P * I, c_gather},
        {"gather in place", n * I, n * P * I, c_gather_ip},
        {"gatherv", (n + P) * I, (size_t)span * I, c_gatherv},
        {"scatter", n * P * I, n * I, c_scatter},
        {"scatterv", (size_t)span * I, (n + P) * I, c_scatterv},
        {"allgather", n * I, n * P * I, c_allgather},
        {"allgather in place", n * I, n * P * I, c_allgather_ip},
        {"allgatherv", (n + P) * I, (size_t)span * I, c_allgatherv},
        {"alltoall", n * P * I, n * P * I, c_alltoall},
        {"alltoall in place", n * P * I, n * P * I, c_alltoall_ip},
        {"alltoallv", (size_t)aspan * I, (size_t)aspan * I, c_alltoallv},
        {"alltoallw", (size_t)aspan * I, (size_t)aspan * I, c_alltoallw},
        {"reduce_scatter", (size_t)total * I, (n + P) * I, c_reduce_scatter},
        {"reduce_scatter_block", n * P * 4, n * 4, c_reduce_scatter_block, 0, FK_FLOAT},
        {"reduce_scatter_block in place", n * P * I, n * P * I, c_reduce_scatter_block_ip,
         (long)(n * I)},
        {"scan", n * I, n * I, c_scan},
        {"scan in place", n * I, n * I, c_scan_ip},
        {"exscan", n * I, n * I, c_exscan, -1},
    };
    for (g_root = 0; g_root < p; g_root += (p > 2 ? p - 1 : 1))
      for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) check(&cases[k]);
  }
  MPI_OK(MPI_Type_free(&g_every_other));
  gpu_done();
  return 0;
}
