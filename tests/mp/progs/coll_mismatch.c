/* coll_mismatch: ranks that pass different roots (or different collectives)
 * to a collective whose data moves by messages (large buffers, so not the
 * shared-memory algorithms) get MPI_ERR_ROOT / MPI_ERR_OTHER instead of
 * waiting forever. A rank whose own view of the call could complete may
 * succeed; no rank may hang, and a rank whose peer disagreed with it and
 * that could not complete must see the error. Afterwards the job goes on
 * (barrier on MPI_COMM_WORLD) and finalizes.
 *
 * At least one rank must report the error (the test's timeout catches a
 * rank that waits forever), except with --undetected-ok: between nodes, two
 * ranks that each believe they are the root of a bcast or scatter of an
 * eager size send and complete without waiting for anything, and no message
 * is ever compared with what the other expected (as in other MPI
 * implementations); there, only "no rank hangs" is checked.
 * Prints "coll_mismatch: rank R ok=N" on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ints per call: 1 MiB by default, above every shared-memory threshold;
 * argv[1] sets another (e.g. 64 KiB, where several nodes use the
 * hierarchical algorithms) */
static int nints = 256 * 1024;

static int rank, size, failures, undetectedOk;

static void fail(const char* what) {
  printf("coll_mismatch: rank %d FAILED: %s\n", rank, what);
  ++failures;
}

/* One case on a fresh communicator; returns this rank's error class. */
static int run_case(int which, MPI_Comm comm) {
  int* a = calloc(nints * (size_t)size, sizeof(int));
  int* b = calloc(nints * (size_t)size, sizeof(int));
  const int root = rank % 2; /* ranks disagree about the root */
  int rc = MPI_SUCCESS;
  switch (which) {
    case 0: rc = MPI_Bcast(a, nints, MPI_INT, root, comm); break;
    case 1: rc = MPI_Reduce(a, b, nints, MPI_INT, MPI_SUM, root, comm); break;
    case 2: rc = MPI_Gather(a, nints, MPI_INT, b, nints, MPI_INT, root, comm); break;
    case 3: rc = MPI_Scatter(a, nints, MPI_INT, b, nints, MPI_INT, root, comm); break;
    case 4: /* different collectives: even ranks reduce to 0, odd ones bcast from 0 */
      rc = rank % 2 ? MPI_Bcast(a, nints, MPI_INT, 0, comm)
                    : MPI_Reduce(a, b, nints, MPI_INT, MPI_SUM, 0, comm);
      break;
  }
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  /* the buffers may still be read by a peer's abandoned transfer: leak them */
  return cls;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--undetected-ok"))
      undetectedOk = 1;
    else
      nints = atoi(argv[i]);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* names[] = {"bcast", "reduce", "gather", "scatter", "bcast/reduce"};
  const int expect[] = {MPI_ERR_ROOT, MPI_ERR_ROOT, MPI_ERR_ROOT, MPI_ERR_ROOT, MPI_ERR_OTHER};
  if (size >= 2) {
    MPI_Comm comms[5];
    for (int i = 0; i < 5; ++i) {
      MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
      MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
    }
    for (int i = 0; i < 5; ++i) {
      int cls = run_case(i, comms[i]);
      if (cls != MPI_SUCCESS && cls != expect[i]) {
        char m[128];
        snprintf(m, sizeof m, "%s: error class %d, expected %d or success", names[i], cls,
                 expect[i]);
        fail(m);
      }
      int errs = cls != MPI_SUCCESS, total = 0;
      MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      if (total == 0 && !undetectedOk) {
        char m[128];
        snprintf(m, sizeof m, "%s: no rank saw the mismatch", names[i]);
        fail(m);
      }
      if (rank == 0) printf("coll_mismatch: %s: %d of %d ranks saw it\n", names[i], total, size);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (!failures) printf("coll_mismatch: rank %d ok=%d\n", rank, size);
  MPI_Finalize();
  return failures ? 1 : 0;
}
