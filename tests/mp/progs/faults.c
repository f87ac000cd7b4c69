/* faults: ranks that misbehave on purpose, one way per mode (argv[1]):
 *   fatal-comm   rank 1 (or 0 alone) passes MPI_COMM_NULL under the default
 *                MPI_ERRORS_ARE_FATAL: the job must end, naming the error
 *   errors-abort same through MPI_ERRORS_ABORT
 *   abort CODE   the last rank calls MPI_Abort(MPI_COMM_WORLD, CODE)
 *   no-finalize  the last rank returns 0 from main without MPI_Finalize
 *   die-in-rndv  rank 0 sends 16 MB to the last rank, which kills itself
 *                (SIGKILL) instead of receiving: rank 0 is blocked in the
 *                rendezvous and must not hang
 *   no-init-late  the last rank returns 0 from main without MPI_Init, 0.3 s
 *                 after the others went into MPI_Init (they wait for it in
 *                 its fence): the job must fail at once, naming it
 *   no-init-early the same, but the last rank exits at once and the others
 *                 call MPI_Init 0.3 s later (the launcher learns of the exit
 *                 before they connect)
 *   fatal-unnamed every rank duplicates MPI_COMM_WORLD and splits the
 *                duplicate; the last rank then passes a negative count on
 *                the split: the abort message must say which communicator
 *                ("split of dup of MPI_COMM_WORLD"), not an empty name
 *   segv         the last rank writes through a null pointer after a first
 *                collective (libraries loaded by then must not take over
 *                the signal: the launcher reports signal 11, no file is
 *                written into the working directory)
 * The kill-launcher modes end the job by killing loomrun (the rank's parent)
 * with SIGKILL, as a user or a batch system might; no rank may outlive it
 * and nothing may remain in /dev/shm (scripts/kill_launcher.sh checks):
 *   kill-launcher-in-init  the last rank, before MPI_Init, 0.3 s after the
 *                 others went into it (local rank 0 has created the node's
 *                 segment, the others have not mapped it yet)
 *   kill-launcher-in-coll  after MPI_Init: rank 0 starts an MPI_Ibarrier
 *                 (it creates the communicator's collective segment), then
 *                 tells the last rank, which kills loomrun before any
 *                 collective of its own (so it never mapped that segment)
 *   spin          ranks loop over allreduce and a 1 MiB bcast after rank 0
 *                 printed "ready": the test kills loomrun from outside
 * The other ranks wait in a long sleep: the launcher must kill them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank, size, v = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: faults MODE [CODE]\n");
    return 2;
  }
  if (!strncmp(argv[1], "no-init-", 8)) {
    /* No MPI call may come first, so the launcher's PMIx rank says who is
     * the last rank. */
    const char* r = getenv("PMIX_RANK");
    const char* n = getenv("LOOM_TEST_SIZE");
    const int late = !strcmp(argv[1], "no-init-late");
    if (r && n && atoi(r) == atoi(n) - 1) {
      if (late) usleep(300000);
      return 0;
    }
    if (!late) usleep(300000);
  }
  if (!strcmp(argv[1], "kill-launcher-in-init")) {
    const char* r = getenv("PMIX_RANK");
    const char* n = getenv("LOOM_TEST_SIZE");
    if (r && n && atoi(r) == atoi(n) - 1) {
      usleep(300000);
      kill(getppid(), SIGKILL);
      for (;;) pause(); /* the parent-death signal ends it */
    }
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int culprit = size - 1;
  if (!strcmp(argv[1], "kill-launcher-in-coll") && size > 1) {
    if (rank == 0) {
      MPI_Request req;
      MPI_Ibarrier(MPI_COMM_WORLD, &req);
      MPI_Send(&v, 1, MPI_INT, culprit, 2, MPI_COMM_WORLD);
    } else if (rank == culprit) {
      MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      kill(getppid(), SIGKILL);
    }
    for (;;) pause();
  }
  if (!strcmp(argv[1], "spin")) {
    static char buf[1 << 20];
    int one = 1, sum;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup);
    if (rank == 0) {
      printf("ready\n");
      fflush(stdout);
    }
    for (;;) {
      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup);
      MPI_Bcast(buf, (int)sizeof buf, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
  }
  if (!strcmp(argv[1], "die-in-rndv") && size > 1) {
    if (rank == 0) {
      static char big[16 << 20];
      MPI_Send(big, (int)sizeof big, MPI_BYTE, culprit, 1, MPI_COMM_WORLD);
      fprintf(stderr, "faults: the send to a dead rank completed\n");
      return 98;
    }
    if (rank == culprit) {
      usleep(100000); /* let rank 0 start the rendezvous */
      raise(SIGKILL);
    }
  }
  if (!strcmp(argv[1], "segv")) {
    int x = 1;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == culprit) {
      volatile int* volatile p = NULL;
      *p = x;
    }
  }
  MPI_Comm unnamed = MPI_COMM_NULL;
  if (!strcmp(argv[1], "fatal-unnamed")) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(dup, 0, rank, &unnamed);
  }
  if (rank != culprit) {
    sleep(60); /* killed by the teardown long before this ends */
    MPI_Finalize();
    return 0;
  }
  if (!strcmp(argv[1], "fatal-comm")) {
    MPI_Comm_rank(MPI_COMM_NULL, &v);
  } else if (!strcmp(argv[1], "errors-abort")) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
    MPI_Comm_size(MPI_COMM_NULL, &v);
  } else if (!strcmp(argv[1], "abort")) {
    MPI_Abort(MPI_COMM_WORLD, argc > 2 ? atoi(argv[2]) : 1);
  } else if (!strcmp(argv[1], "no-finalize")) {
    return 0;
  } else if (!strcmp(argv[1], "fatal-unnamed")) {
    MPI_Send(&v, -1, MPI_INT, 0, 0, unnamed);
  }
  fprintf(stderr, "faults: mode %s did not end the job\n", argv[1]);
  return 99;
}
