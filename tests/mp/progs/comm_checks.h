/* Shared by the comm_* test programs: a CHECK that names the rank and line,
 * and the closing "PROG: rank R: N checks passed" line the tests count. */
#ifndef COMM_CHECKS_H
#define COMM_CHECKS_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int checks = 0;
static int wrank = -1;
static const char* prog = "comm";

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    ++checks;                                                                                    \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "%s: rank %d: %s:%d: CHECK(%s) failed\n", prog, wrank, __FILE__, __LINE__, \
              #cond);                                                                            \
      fflush(stderr);                                                                            \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
    }                                                                                            \
  } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS)

static void passed(void) {
  printf("%s: rank %d: %d checks passed\n", prog, wrank, checks);
  fflush(stdout);
}
#endif
