/*
 * share_floor.c - the least an 8-byte allreduce can cost when two processes
 * share each core, with no MPI library at all (a machine probe, like c2c.c;
 * not one of bench/run's programs).
 *
 * Four processes, two bound to each of CPUs 0 and 1 (ranks 0 and 2 on one,
 * 1 and 3 on the other), run the flat shared-memory allreduce Loom uses for
 * small messages: each writes its value and publishes the call's number in
 * its own cache line, waits until every line shows that number, and sums
 * the four values. A wait that finds a line behind pauses PAUSES times
 * (argv[2], default 4, Loom's oversubscribed waits) and then calls
 * sched_yield after every look. No library code runs, so what it reports
 * is what the hand-overs between the processes on a core and the cache
 * lines between the cores cost on this machine.
 *
 *   cc -O2 -o share_floor bench/src/share_floor.c && ./share_floor [calls] [pauses]
 *
 * Prints the microseconds per call and the yields per call of rank 0.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kRanks = 4, kWarmup = 1000 };

static volatile double sink; /* keeps the sums */

struct Line {
  _Atomic uint64_t call;
  double value[15];
} __attribute__((aligned(128)));

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void run(struct Line* lines, int rank, long calls, int pauses) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(rank % 2, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("sched_setaffinity");
  long yields = 0;
  double start = 0;
  for (uint64_t k = 1; k <= (uint64_t)calls; ++k) {
    if (k == kWarmup) start = now();
    /* Two values alternate: a peer may still read call k - 1's. */
    lines[rank].value[k & 1] = rank + (double)k;
    atomic_store_explicit(&lines[rank].call, k, memory_order_release);
    for (int looks = 0;; ++looks) {
      int behind = 0;
      for (int r = 0; r < kRanks; ++r)
        if (atomic_load_explicit(&lines[r].call, memory_order_acquire) < k) behind = 1;
      if (!behind) break;
      if (looks < pauses) {
        __builtin_ia32_pause();
      } else {
        sched_yield();
        ++yields;
      }
    }
    double sum = 0;
    for (int r = 0; r < kRanks; ++r) sum += lines[r].value[k & 1];
    sink = sum;
  }
  if (rank == 0)
    printf("share_floor: %d ranks on 2 cpus, %d pauses: %.3f us per call, %.2f yields per call\n",
           kRanks, pauses, (now() - start) / (double)(calls - kWarmup) * 1e6,
           (double)yields / (double)calls);
  fflush(stdout);
}

int main(int argc, char** argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 200000;
  const int pauses = argc > 2 ? atoi(argv[2]) : 4;
  if (calls <= kWarmup) {
    fprintf(stderr, "share_floor: calls must exceed %d\n", kWarmup);
    return 2;
  }
  struct Line* lines = mmap(NULL, sizeof(struct Line) * kRanks, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (lines == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  for (int r = 0; r < kRanks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      run(lines, r, calls, pauses);
      _exit(0);
    }
  }
  int failed = 0;
  for (int r = 0; r < kRanks; ++r) {
    int status = 0;
    if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  return failed;
}
