/* cheatsheet: what every collective does, shown on small int arrays.
 * For each collective every rank prints its buffers before and after the
 * call; the lines are gathered to rank 0, which prints them in rank order.
 * Each rank also checks its own result against what the collective must
 * produce, and says WRONG (and exits non-zero) if it differs.
 *
 * Rank r's own values are 10(r+1), 10(r+1)+1, ...: rank 0 holds 10 11 12...,
 * rank 1 holds 20 21 22..., so every output value tells where it came from.
 * "_" is a receive buffer slot the call has not written (it holds -1).
 *   build/bin/loomcc examples/cheatsheet.c -o cheatsheet
 *   build/bin/loomrun -n 4 ./cheatsheet */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { UNSET = -1 };

static int rank, size;
static int lineLen;   /* bytes per rank's line */
static char* line;    /* this rank's line */
static char* lines;   /* rank 0: every rank's line */
static int failures;  /* collectives this rank got wrong */
static const char* noBuffer = "(not used)"; /* what a NULL buffer prints as */

static int own(int r, int i) { return 10 * (r + 1) + i; }

/* Appends "name [a b c]" to s; NULL prints as noBuffer. */
static void appendArray(char* s, const char* name, const int* a, int n) {
  size_t len = strlen(s);
  if (!a) {
    snprintf(s + len, (size_t)lineLen - len, "  %s %s", name, noBuffer);
    return;
  }
  len += (size_t)snprintf(s + len, (size_t)lineLen - len, "  %s [", name);
  for (int i = 0; i < n && len < (size_t)lineLen; ++i) {
    if (a[i] == UNSET)
      len += (size_t)snprintf(s + len, (size_t)lineLen - len, i ? " _" : "_");
    else
      len += (size_t)snprintf(s + len, (size_t)lineLen - len, i ? " %d" : "%d", a[i]);
  }
  if (len < (size_t)lineLen) snprintf(s + len, (size_t)lineLen - len, "]");
}

/* Starts this rank's line with its "before" buffer. */
static void before(const char* name, const int* a, int n) {
  snprintf(line, (size_t)lineLen, "  rank %d:", rank);
  appendArray(line, name, a, n);
}

/* Finishes the line with the "after" buffer, checks it against want[]
 * (want == NULL: nothing to check on this rank), and prints every rank's
 * line on rank 0 under the title. */
static void after(const char* title, const char* name, const int* got, const int* want, int n) {
  appendArray(line, name, got, n);
  int ok = 1;
  if (want)
    for (int i = 0; i < n; ++i)
      if (got[i] != want[i]) {
        ok = 0;
        fprintf(stderr, "cheatsheet: %s: rank %d element %d is %d, should be %d\n", title, rank,
                i, got[i], want[i]);
      }
  if (!ok) {
    ++failures;
    size_t len = strlen(line);
    snprintf(line + len, (size_t)lineLen - len, "  WRONG");
  }
  MPI_Gather(line, lineLen, MPI_CHAR, lines, lineLen, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s\n", title);
    for (int r = 0; r < size; ++r) printf("%s\n", lines + (size_t)r * lineLen);
  }
}

static int* newArray(int n) {
  int* a = malloc(((size_t)n + 1) * sizeof(int));
  if (!a) {
    fprintf(stderr, "cheatsheet: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int i = 0; i < n; ++i) a[i] = UNSET;
  return a;
}

static double monotonicSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  lineLen = 96 + 10 * 4 * size; /* the longest line holds 2p ints, twice */
  line = calloc((size_t)lineLen, 1);
  lines = calloc((size_t)lineLen * (size_t)size, 1);
  const int p = size, n = 2 * p, root = 0, cap = n < 4 ? 4 : n;
  int *in = newArray(cap), *out = newArray(cap), *want = newArray(cap);
  int sumOwn0 = 0; /* sum over ranks of own(r, 0) */
  for (int r = 0; r < p; ++r) sumOwn0 += own(r, 0);
  char title[128];

  if (rank == 0) printf("collective cheat sheet, %d ranks\n\n", p);

  /* MPI_Bcast: the root's buffer is copied to every rank. */
  for (int i = 0; i < 4; ++i) out[i] = rank == root ? own(rank, i) : UNSET;
  before("before", out, 4);
  MPI_Bcast(out, 4, MPI_INT, root, MPI_COMM_WORLD);
  for (int i = 0; i < 4; ++i) want[i] = own(root, i);
  snprintf(title, sizeof title, "MPI_Bcast(buf, 4, MPI_INT, root %d)", root);
  after(title, "after", out, want, 4);

  /* MPI_Scatter: block r of the root's send buffer goes to rank r. */
  for (int i = 0; i < n; ++i) in[i] = own(root, i), out[i] = UNSET;
  before("send", rank == root ? in : NULL, n);
  MPI_Scatter(in, 2, MPI_INT, out, 2, MPI_INT, root, MPI_COMM_WORLD);
  for (int i = 0; i < 2; ++i) want[i] = own(root, 2 * rank + i);
  snprintf(title, sizeof title, "\nMPI_Scatter(send, 2, recv, 2, root %d)", root);
  after(title, "recv", out, want, 2);

  /* MPI_Gather: every rank's send buffer lands, in rank order, at the root. */
  for (int i = 0; i < n; ++i) in[i] = own(rank, i), out[i] = UNSET;
  before("send", in, 2);
  MPI_Gather(in, 2, MPI_INT, out, 2, MPI_INT, root, MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) want[i] = own(i / 2, i % 2);
  snprintf(title, sizeof title, "\nMPI_Gather(send, 2, recv, 2, root %d)", root);
  after(title, "recv", rank == root ? out : NULL, rank == root ? want : NULL, n);

  /* MPI_Allgather: the same, at every rank. */
  for (int i = 0; i < n; ++i) out[i] = UNSET;
  before("send", in, 2);
  MPI_Allgather(in, 2, MPI_INT, out, 2, MPI_INT, MPI_COMM_WORLD);
  after("\nMPI_Allgather(send, 2, recv, 2)", "recv", out, want, n);

  /* MPI_Reduce: element-wise sum over the ranks, at the root only. */
  for (int i = 0; i < 3; ++i) in[i] = own(rank, i), out[i] = UNSET;
  before("send", in, 3);
  MPI_Reduce(in, out, 3, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
  for (int i = 0; i < 3; ++i) want[i] = sumOwn0 + p * i;
  snprintf(title, sizeof title, "\nMPI_Reduce(send, recv, 3, MPI_SUM, root %d)", root);
  after(title, "recv", rank == root ? out : NULL, rank == root ? want : NULL, 3);

  /* MPI_Allreduce: the same sum, at every rank. */
  for (int i = 0; i < 3; ++i) out[i] = UNSET;
  before("send", in, 3);
  MPI_Allreduce(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  after("\nMPI_Allreduce(send, recv, 3, MPI_SUM)", "recv", out, want, 3);

  /* MPI_Reduce_scatter_block: the element-wise sum of p blocks of 2, block r
   * to rank r (an allreduce whose result is left sharded). */
  for (int i = 0; i < n; ++i) in[i] = own(rank, i), out[i] = UNSET;
  before("send", in, n);
  MPI_Reduce_scatter_block(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 2; ++i) want[i] = sumOwn0 + p * (2 * rank + i);
  after("\nMPI_Reduce_scatter_block(send, recv, 2, MPI_SUM)", "recv", out, want, 2);

  /* MPI_Alltoall: block d of rank s's send buffer goes to block s of rank d
   * (a transpose of the p x p matrix of blocks). */
  for (int d = 0; d < p; ++d) in[d] = own(rank, d), out[d] = UNSET;
  before("send", in, p);
  MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
  for (int s = 0; s < p; ++s) want[s] = own(s, rank);
  after("\nMPI_Alltoall(send, 1, recv, 1)", "recv", out, want, p);

  /* MPI_Scan: inclusive prefix sum, rank r gets the sum over ranks 0..r. */
  for (int i = 0; i < 2; ++i) in[i] = own(rank, i), out[i] = UNSET;
  before("send", in, 2);
  MPI_Scan(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 2; ++i) {
    want[i] = 0;
    for (int r = 0; r <= rank; ++r) want[i] += own(r, i);
  }
  after("\nMPI_Scan(send, recv, 2, MPI_SUM)", "recv", out, want, 2);

  /* MPI_Exscan: exclusive prefix sum, rank r gets the sum over ranks
   * 0..r-1; rank 0's receive buffer is undefined, so it is not checked. */
  for (int i = 0; i < 2; ++i) out[i] = UNSET;
  before("send", in, 2);
  noBuffer = "(undefined)";
  MPI_Exscan(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 2; ++i) {
    want[i] = 0;
    for (int r = 0; r < rank; ++r) want[i] += own(r, i);
  }
  after("\nMPI_Exscan(send, recv, 2, MPI_SUM)", "recv",
        rank == 0 ? NULL : out, rank == 0 ? NULL : want, 2);

  /* MPI_Barrier: no rank leaves before the last one has entered. The last
   * rank arrives 30 ms late; each rank notes when it entered and left, and
   * rank r checks that it left after every rank entered. This uses the
   * node's monotonic clock, so it is checked only when all ranks share a
   * node. */
  char node[MPI_MAX_PROCESSOR_NAME] = {0}, node0[MPI_MAX_PROCESSOR_NAME] = {0};
  int len, sameNode, mine;
  MPI_Get_processor_name(node, &len);
  memcpy(node0, node, sizeof node);
  MPI_Bcast(node0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  mine = strcmp(node, node0) == 0;
  MPI_Allreduce(&mine, &sameNode, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  const int lateMs = 30;
  if (rank == p - 1) {
    struct timespec delay = {0, lateMs * 1000000L};
    nanosleep(&delay, NULL);
  }
  double entered = monotonicSeconds();
  MPI_Barrier(MPI_COMM_WORLD);
  double left = monotonicSeconds(), lastEntered;
  MPI_Allreduce(&entered, &lastEntered, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int barrierOk = !sameNode || left >= lastEntered;
  char how[64];
  snprintf(how, sizeof how, rank == p - 1 ? "entered last (slept %d ms first)" : "entered at once",
           lateMs);
  snprintf(line, (size_t)lineLen, "  rank %d: %s, left after the last rank entered: %s", rank, how,
           !sameNode ? "(not checked: ranks on several nodes)" : barrierOk ? "yes" : "NO");
  if (!barrierOk) {
    fprintf(stderr, "cheatsheet: MPI_Barrier: rank %d left %.6f s before the last rank entered\n",
            rank, lastEntered - left);
    ++failures;
  }
  MPI_Gather(line, lineLen, MPI_CHAR, lines, lineLen, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("\nMPI_Barrier()\n");
    for (int r = 0; r < size; ++r) printf("%s\n", lines + (size_t)r * lineLen);
  }

  int wrong;
  MPI_Allreduce(&failures, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("\ncheat sheet of 11 collectives over %d ranks, every result checked: %s\n", p,
           wrong ? "WRONG" : "ok");
  free(in);
  free(out);
  free(want);
  free(line);
  free(lines);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
