/* Reductions that run on device buffers as they are (ring and Rabenseifner
 * allreduce, ring reduce-scatter): every call runs on host buffers and on
 * this rank's device buffers, and the results must be the same bytes (the
 * same algorithm runs both: the device rules pick what the host rules pick,
 * or an override forces it for both). Counts 0, 1, odd, not divisible by
 * the rank count or the chunk, sizes on both sides of the native
 * thresholds; float, double, int, float16, bfloat16 sums, MINLOC/MAXLOC
 * pairs (float_int runs on the device, double_int is staged: it has a
 * hole), MPI_IN_PLACE, nonblocking calls with computation before the wait,
 * and allgather/alltoall blocks large enough for their device forms.
 *
 *   gpu_coll_native [mixed] [quick] [big]
 *     mixed: odd ranks use host buffers in the device run
 *     quick: fewer counts; big: one 16 MiB allreduce more */
#include <math.h>

#include "gpu_util.h"

static long g_n; /* elements of the call (allreduce) or per block (reduce-scatter) */
static MPI_Datatype g_type;
static MPI_Op g_op;
static size_t g_esize; /* bytes of one element (its extent) */
static size_t g_data;  /* of which data (MPI_DOUBLE_INT: 12 of 16) */
static int g_inplace, g_nb;
static int g_counts[64];

typedef enum { ALLREDUCE, RSB, RS, ALLGATHER, ALLTOALL } Kind;

/* Computation between starting a nonblocking call and waiting for it: a
 * few hundred microseconds of arithmetic, testing the request now and then
 * (the progress this gives is what an application's MPI_Test gives). */
static double compute_while(MPI_Request* q) {
  volatile double x = 1.0;
  int done = 0;
  for (int i = 0; i < 200 && !done; ++i) {
    for (int k = 0; k < 2000; ++k) x = x * 1.0000001 + 1e-9;
    MPI_OK(MPI_Test(q, &done, MPI_STATUS_IGNORE));
  }
  if (!done) MPI_OK(MPI_Wait(q, MPI_STATUS_IGNORE));
  return x;
}

static void call(Kind k, void* s, void* r) {
  MPI_Request q = MPI_REQUEST_NULL;
  MPI_Request* qp = g_nb ? &q : NULL;
  const void* sb = g_inplace ? MPI_IN_PLACE : s;
  int n = (int)g_n;
  switch (k) {
    case ALLREDUCE:
      if (qp)
        MPI_OK(MPI_Iallreduce(sb, r, n, g_type, g_op, MPI_COMM_WORLD, qp));
      else
        MPI_OK(MPI_Allreduce(sb, r, n, g_type, g_op, MPI_COMM_WORLD));
      break;
    case RSB:
      if (qp)
        MPI_OK(MPI_Ireduce_scatter_block(sb, r, n, g_type, g_op, MPI_COMM_WORLD, qp));
      else
        MPI_OK(MPI_Reduce_scatter_block(sb, r, n, g_type, g_op, MPI_COMM_WORLD));
      break;
    case RS:
      if (qp)
        MPI_OK(MPI_Ireduce_scatter(sb, r, g_counts, g_type, g_op, MPI_COMM_WORLD, qp));
      else
        MPI_OK(MPI_Reduce_scatter(sb, r, g_counts, g_type, g_op, MPI_COMM_WORLD));
      break;
    case ALLGATHER:
      if (qp)
        MPI_OK(MPI_Iallgather(g_inplace ? MPI_IN_PLACE : s, n, g_type, r, n, g_type, MPI_COMM_WORLD,
                              qp));
      else
        MPI_OK(
            MPI_Allgather(g_inplace ? MPI_IN_PLACE : s, n, g_type, r, n, g_type, MPI_COMM_WORLD));
      break;
    case ALLTOALL:
      if (qp)
        MPI_OK(MPI_Ialltoall(g_inplace ? MPI_IN_PLACE : s, n, g_type, r, n, g_type, MPI_COMM_WORLD,
                             qp));
      else
        MPI_OK(MPI_Alltoall(g_inplace ? MPI_IN_PLACE : s, n, g_type, r, n, g_type, MPI_COMM_WORLD));
      break;
  }
  if (qp) (void)compute_while(qp);
}

/* The floating kind of g_type's elements, for same_byte (gpu_util.h). */
static int float_kind(void) {
  if (g_type == MPI_FLOAT) return FK_FLOAT;
  if (g_type == MPI_DOUBLE) return FK_DOUBLE;
  if (g_type == MPIX_C_FLOAT16) return FK_HALF;
  if (g_type == MPIX_BFLOAT16) return FK_BF16;
  return FK_NONE;
}

/* Element values: finite, of many magnitudes (float sums then depend on
 * their order in the last bits: a different order shows). */
static void fill(unsigned char* p, size_t count, unsigned seed) {
  unsigned x = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < count; ++i) {
    unsigned char* e = p + i * g_esize;
    x = x * 1103515245u + 12345u;
    double v = ((double)(x >> 8) / 16777216.0 - 0.5) * pow(10.0, (double)((x >> 3) % 9) - 4);
    if (g_type == MPI_DOUBLE) {
      memcpy(e, &v, 8);
    } else if (g_type == MPI_FLOAT) {
      float f = (float)v;
      memcpy(e, &f, 4);
    } else if (g_type == MPIX_C_FLOAT16 || g_type == MPIX_BFLOAT16) {
      unsigned short h = (unsigned short)(x >> 7);
      unsigned short mask = g_type == MPIX_C_FLOAT16 ? 0x7c00 : 0x7f80;
      if ((h & mask) == mask) h = (unsigned short)(h & ~0x4000); /* finite */
      memcpy(e, &h, 2);
    } else if (g_type == MPI_FLOAT_INT || g_type == MPI_DOUBLE_INT) {
      int idx = (int)(x % 1000);
      if (g_type == MPI_FLOAT_INT) {
        float f = (float)((x >> 4) % 7);
        memcpy(e, &f, 4);
        memcpy(e + 4, &idx, 4);
      } else {
        double d = (double)((x >> 4) % 7);
        memcpy(e, &d, 8);
        memcpy(e + 8, &idx, 4);
        memset(e + 12, 0, 4);
      }
    } else { /* int, 2int */
      for (size_t b = 0; b < g_esize; ++b) e[b] = (unsigned char)(x >> (b % 4 * 8));
    }
  }
}

/* Runs the call with buffers of kind `dev`; returns the receive buffer. */
static unsigned char* run(Kind k, int dev, size_t sElems, size_t rElems) {
  const size_t sbytes = sElems * g_esize, rbytes = rElems * g_esize;
  Buf s = buf_alloc(dev, sbytes), r = buf_alloc(dev, rbytes);
  unsigned char* h = malloc(sbytes + rbytes + 1);
  fill(h, sElems, 7 + (unsigned)g_rank);
  fill(h + sbytes, rElems, 1000 + (unsigned)g_rank);
  buf_put(&s, h, sbytes);
  buf_put(&r, h + sbytes, rbytes);
  call(k, s.p, r.p);
  unsigned char* out = malloc(rbytes + 1);
  buf_get(out, &r, rbytes);
  buf_free(&s);
  buf_free(&r);
  free(h);
  return out;
}

static const char* kind_name(Kind k) {
  static const char* n[] = {"allreduce", "reduce_scatter_block", "reduce_scatter", "allgather",
                            "alltoall"};
  return n[k];
}

static void check(Kind k) {
  const size_t p = (size_t)g_size, n = (size_t)g_n;
  size_t total = 0;
  for (size_t i = 0; i < p; ++i) total += (size_t)g_counts[i];
  size_t sElems = 0, rElems = 0, defined = 0;
  switch (k) {
    case ALLREDUCE:
      sElems = rElems = defined = n;
      break;
    case RSB:
      sElems = n * p;
      rElems = g_inplace ? n * p : n;
      defined = n;
      break;
    case RS:
      sElems = total;
      rElems = g_inplace ? total : (size_t)g_counts[g_rank];
      defined = (size_t)g_counts[g_rank];
      break;
    case ALLGATHER:
      sElems = n;
      rElems = defined = n * p;
      break;
    case ALLTOALL:
      sElems = rElems = defined = n * p;
      break;
  }
  unsigned char* want = run(k, 0, sElems, rElems);
  unsigned char* got = run(k, on_device(g_rank), sElems, rElems);
  char tn[MPI_MAX_OBJECT_NAME];
  int len = 0;
  MPI_OK(MPI_Type_get_name(g_type, tn, &len));
  for (size_t i = 0; i < defined * g_esize; ++i)
    CHECKF(i % g_esize >= g_data || same_byte(got, want, i, g_esize, float_kind()),
           "%s%s%s %s n=%ld: byte %zu of %zu: device %u, host %u", g_nb ? "nonblocking " : "",
           kind_name(k), g_inplace ? " in place" : "", tn, g_n, i, defined * g_esize, got[i],
           want[i]);
  free(want);
  free(got);
}

typedef struct {
  MPI_Datatype type;
  MPI_Op op;
  size_t size, data;
} TypeOp;

int main(int argc, char** argv) {
  int quick = 0, big = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "mixed") == 0) g_mixed = 1;
    if (strcmp(argv[i], "quick") == 0) quick = 1;
    if (strcmp(argv[i], "big") == 0) big = 1;
  }
  gpu_init(&argc, &argv, "gpu_coll_native");
  const int p = g_size;
  CHECK(p <= 64);
  const TypeOp types[] = {{MPI_FLOAT, MPI_SUM, 4, 4},     {MPI_DOUBLE, MPI_SUM, 8, 8},
                          {MPI_INT, MPI_SUM, 4, 4},       {MPIX_C_FLOAT16, MPI_SUM, 2, 2},
                          {MPIX_BFLOAT16, MPI_SUM, 2, 2}, {MPI_FLOAT_INT, MPI_MINLOC, 8, 8},
                          {MPI_2INT, MPI_MAXLOC, 8, 8},   {MPI_DOUBLE_INT, MPI_MINLOC, 16, 12}};
  const int ntypes = (int)(sizeof types / sizeof types[0]);
  /* Elements: 0, 1, odd, not divisible by p, around the 64 KiB device
   * threshold, and (with LOOM_COLL_REDUCE_CHUNK=16k) many chunks. */
  const long all[] = {0, 1, 7, 1001, 16411, 40013}, few[] = {0, 1, 1001, 40013};
  const long* counts = quick ? few : all;
  const int ncounts = quick ? 4 : 6;
  for (int ti = 0; ti < ntypes; ++ti) {
    g_type = types[ti].type;
    g_op = types[ti].op;
    g_esize = types[ti].size;
    g_data = types[ti].data;
    for (int ci = 0; ci < ncounts; ++ci) {
      g_n = counts[ci];
      for (int i = 0; i < p; ++i) g_counts[i] = (int)g_n + i % 3;
      for (g_nb = 0; g_nb < 2; ++g_nb)
        for (g_inplace = 0; g_inplace < 2; ++g_inplace) {
          check(ALLREDUCE);
          /* reduce-scatter: per-rank blocks of n/p (block) and n/p + r%3 */
          long keep = g_n;
          g_n = keep / p;
          for (int i = 0; i < p; ++i) g_counts[i] = (int)g_n + i % 3;
          check(RSB);
          check(RS);
          g_n = keep;
        }
    }
  }
  /* Data movement with device forms: blocks above 32 KiB. */
  g_type = MPI_INT;
  g_esize = g_data = 4;
  g_op = MPI_OP_NULL;
  for (g_n = 1; g_n <= 12000; g_n += 11999)
    for (g_nb = 0; g_nb < 2; ++g_nb)
      for (g_inplace = 0; g_inplace < 2; ++g_inplace) {
        check(ALLGATHER);
        check(ALLTOALL);
      }
  if (big) { /* 16 MiB of floats */
    g_type = MPI_FLOAT;
    g_op = MPI_SUM;
    g_esize = g_data = 4;
    g_n = 4L << 20;
    g_nb = 0;
    g_inplace = 0;
    check(ALLREDUCE);
    g_nb = 1;
    g_inplace = 1;
    check(ALLREDUCE);
  }
  gpu_done();
  return 0;
}
