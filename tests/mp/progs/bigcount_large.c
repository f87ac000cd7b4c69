/* Counts above INT_MAX end to end, at 2 ranks (one buffer of a little over
 * 2 GiB per rank; run these tests alone):
 *   p2p    MPI_Send_c / MPI_Recv_c of 2^31 + 64 KiB MPI_BYTEs, rank 0 -> 1;
 *          MPI_Get_count_c / MPI_Get_elements_c give the count, their int
 *          forms MPI_UNDEFINED
 *   bcast  MPI_Bcast_c of 2^31 + 64 KiB bytes from rank 0
 * Prints "bigcount_large: rank R ok". */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_checks.h"

static const MPI_Count kBytes = ((MPI_Count)1 << 31) + 65536;

/* A pattern no shifted or truncated copy reproduces. */
static unsigned char pattern(MPI_Count i) {
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
  return (unsigned char)(x >> 56);
}

static void fill(unsigned char* b, MPI_Count n) {
  for (MPI_Count i = 0; i < n; ++i) b[i] = pattern(i);
}

static MPI_Count firstBad(const unsigned char* b, MPI_Count n) {
  for (MPI_Count i = 0; i < n; ++i)
    if (b[i] != pattern(i)) return i;
  return -1;
}

static unsigned char* big(void) {
  unsigned char* b = malloc((size_t)kBytes);
  if (!b) {
    fprintf(stderr, "bigcount_large: rank %d: cannot allocate %lld bytes\n", wrank,
            (long long)kBytes);
    MPI_Abort(MPI_COMM_WORLD, 77);
  }
  return b;
}

static void p2p(void) {
  unsigned char* b = big();
  if (wrank == 0) {
    fill(b, kBytes);
    OK(MPI_Send_c(b, kBytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
  } else if (wrank == 1) {
    memset(b, 0, (size_t)kBytes);
    MPI_Status st;
    OK(MPI_Recv_c(b, kBytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
    MPI_Count bad = firstBad(b, kBytes);
    if (bad >= 0) fprintf(stderr, "bigcount_large: first wrong byte at %lld\n", (long long)bad);
    CHECK(bad < 0);
    MPI_Count c = 0, e = 0;
    int ci = 0, ei = 0;
    OK(MPI_Get_count_c(&st, MPI_BYTE, &c));
    OK(MPI_Get_elements_c(&st, MPI_BYTE, &e));
    OK(MPI_Get_count(&st, MPI_BYTE, &ci));
    OK(MPI_Get_elements(&st, MPI_BYTE, &ei));
    CHECK(c == kBytes && e == kBytes);
    CHECK(ci == MPI_UNDEFINED && ei == MPI_UNDEFINED);
    /* In units that fit an int, the int form answers. */
    MPI_Datatype kib;
    OK(MPI_Type_contiguous(1024, MPI_BYTE, &kib));
    OK(MPI_Type_commit(&kib));
    OK(MPI_Get_count(&st, kib, &ci));
    CHECK(ci == (int)(kBytes / 1024));
    OK(MPI_Type_free(&kib));
  }
  free(b);
}

static void bcast(void) {
  unsigned char* b = big();
  if (wrank == 0)
    fill(b, kBytes);
  else
    memset(b, 0, (size_t)kBytes);
  OK(MPI_Bcast_c(b, kBytes, MPI_BYTE, 0, MPI_COMM_WORLD));
  MPI_Count bad = firstBad(b, kBytes);
  if (bad >= 0) fprintf(stderr, "bigcount_large: first wrong byte at %lld\n", (long long)bad);
  CHECK(bad < 0);
  free(b);
}

int main(int argc, char** argv) {
  prog = "bigcount_large";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  const char* what = argc > 1 ? argv[1] : "p2p";
  if (!strcmp(what, "p2p"))
    p2p();
  else if (!strcmp(what, "bcast"))
    bcast();
  else
    CHECK(!"unknown mode");
  OK(MPI_Barrier(MPI_COMM_WORLD));
  printf("bigcount_large: rank %d ok\n", wrank);
  OK(MPI_Finalize());
  return 0;
}
