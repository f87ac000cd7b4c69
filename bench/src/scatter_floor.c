/*
 * scatter_floor.c - the least a linear single-copy scatter can cost when
 * ranks outnumber cores, with no MPI library at all (a machine probe, like
 * c2c.c and share_floor.c; not one of bench/run's programs).
 *
 * RANKS processes (default 16), rank i bound to CPU i mod 2, run the
 * scatter Loom and Open MPI both use for large blocks on one node: the root
 * announces the call in a cache line, every other rank reads its BLOCK bytes
 * straight out of the root's send buffer with process_vm_readv (cross-memory
 * attach) and acknowledges in its own line, and the root copies its own
 * block and waits for every acknowledgement. A wait pauses PAUSES times
 * (default 4, Loom's oversubscribed waits) and then calls sched_yield after
 * every look. The send buffer is written once, as in bench/src/coll.c.
 * What it reports is what the hand-overs, the system calls and the copies
 * alone cost on this machine: compare a library's time with it.
 *
 *   cc -O2 -o scatter_floor bench/src/scatter_floor.c
 *   ./scatter_floor [ranks] [block bytes] [calls] [pauses]
 *
 * Prints the microseconds per call (the root's clock, after a tenth of the
 * calls as warm-up) and the context switches per call of all ranks
 * together.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct Line {
  _Atomic uint64_t call;
  _Atomic uint64_t switches; /* written by each rank as it exits */
} __attribute__((aligned(128)));

static int pauses = 4;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void wait_for(_Atomic uint64_t *word, uint64_t call) {
  int looks = 0;
  while (atomic_load_explicit(word, memory_order_acquire) < call) {
    if (looks++ < pauses)
      __builtin_ia32_pause();
    else
      sched_yield();
  }
}

static void bind_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("scatter_floor: sched_setaffinity");
}

static uint64_t switches_so_far(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (uint64_t)(u.ru_nvcsw + u.ru_nivcsw);
}

int main(int argc, char **argv) {
  const int ranks = argc > 1 ? atoi(argv[1]) : 16;
  const size_t block = argc > 2 ? strtoull(argv[2], NULL, 0) : 32768;
  const int calls = argc > 3 ? atoi(argv[3]) : 5000;
  if (argc > 4) pauses = atoi(argv[4]);
  if (ranks < 2 || ranks > 256 || block == 0 || calls < 10) {
    fprintf(stderr, "usage: scatter_floor [ranks 2-256] [block bytes > 0] [calls >= 10] [pauses]\n");
    return 2;
  }
  /* lines[0]: the root's call number; lines[r]: rank r's acknowledgement. */
  struct Line *lines = mmap(NULL, sizeof(struct Line) * (size_t)ranks, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  char *sendbuf = malloc(block * (size_t)ranks);
  char *own = malloc(block);
  if (lines == MAP_FAILED || !sendbuf || !own) {
    fprintf(stderr, "scatter_floor: out of memory\n");
    return 1;
  }
  memset(sendbuf, 1, block * (size_t)ranks);
  const pid_t root = getpid();

  for (int r = 1; r < ranks; r++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("scatter_floor: fork");
      return 1;
    }
    if (pid > 0) continue;
    bind_to(r % 2);
    char *recvbuf = malloc(block);
    if (!recvbuf) _exit(1);
    memset(recvbuf, 0, block);
    const uint64_t before = switches_so_far();
    for (int call = 1; call <= calls; call++) {
      wait_for(&lines[0].call, (uint64_t)call);
      struct iovec local = {recvbuf, block};
      struct iovec remote = {sendbuf + block * (size_t)r, block};
      if (process_vm_readv(root, &local, 1, &remote, 1, 0) != (ssize_t)block) {
        fprintf(stderr, "scatter_floor: process_vm_readv: %s\n", strerror(errno));
        _exit(1);
      }
      atomic_store_explicit(&lines[r].call, (uint64_t)call, memory_order_release);
    }
    atomic_store(&lines[r].switches, switches_so_far() - before);
    _exit(0);
  }

  bind_to(0);
  const int warm = calls / 10;
  double t0 = now();
  uint64_t before = switches_so_far();
  for (int call = 1; call <= calls; call++) {
    if (call == warm + 1) t0 = now();
    atomic_store_explicit(&lines[0].call, (uint64_t)call, memory_order_release);
    memcpy(own, sendbuf, block);
    for (int r = 1; r < ranks; r++) wait_for(&lines[r].call, (uint64_t)call);
  }
  const double per_call = (now() - t0) / (calls - warm);
  uint64_t switches = switches_so_far() - before;
  int failed = 0, status = 0;
  while (wait(&status) > 0)
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  if (failed) {
    fprintf(stderr, "scatter_floor: a rank failed\n");
    return 1;
  }
  for (int r = 1; r < ranks; r++) switches += atomic_load(&lines[r].switches);
  printf("scatter_floor: %d ranks on 2 cpus, %zu B blocks, %d pauses: %.2f us per call, "
         "%.1f context switches per call\n",
         ranks, block, pauses, per_call * 1e6, (double)switches / calls);
  return 0;
}
