/* c2c: the round trip of one cache line between two CPUs, in ns.
 *
 *   c2c [CPU_A CPU_B]      default 0 1
 *
 * Two threads pinned to the two CPUs bounce a counter in one 64-byte line:
 * A writes an odd value and waits for B's next even one, B waits for the
 * odd value and answers. The line moves between the CPUs' caches twice per
 * round trip, so the time says how far apart the CPUs are: on the 2-vCPU
 * VMs measured here it is bimodal (the vCPUs share a last-level cache or
 * sit on different dies), and that placement decides large-message
 * bandwidth (docs/benchmarks.md, "What decides bandwidth"). bench/run runs
 * it before every job and writes it to jobs.csv. Not MPI: plain pthreads.
 * Prints the median of 9 batches of 2000 round trips; exit 2 when the
 * two CPUs are not both usable. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { BATCHES = 9, TRIPS = 2000 };

static struct {
    _Alignas(64) atomic_long v;
    char pad[64 - sizeof(atomic_long)];
} line;

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *echo(void *arg)
{
    long want = 1, end = 2L * BATCHES * TRIPS;
    if (pin(*(int *)arg) != 0) return (void *)1;
    while (want < end) {
        while (atomic_load_explicit(&line.v, memory_order_acquire) != want) {}
        atomic_store_explicit(&line.v, want + 1, memory_order_release);
        want += 2;
    }
    return NULL;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
    double per[BATCHES];
    long v = 0;
    pthread_t t;
    void *rc = NULL;

    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0 || a == b || a < 0 || b < 0 ||
        a >= CPU_SETSIZE || b >= CPU_SETSIZE || !CPU_ISSET(a, &mine) || !CPU_ISSET(b, &mine))
        return 2;
    alarm(10); /* a CPU that never runs the echo thread must not hang bench/run */
    if (pin(a) != 0 || pthread_create(&t, NULL, echo, &b) != 0) return 2;
    for (int k = 0; k < BATCHES; k++) {
        double t0 = now_ns();
        for (int i = 0; i < TRIPS; i++) {
            atomic_store_explicit(&line.v, ++v, memory_order_release);
            ++v;
            while (atomic_load_explicit(&line.v, memory_order_acquire) != v) {}
        }
        per[k] = (now_ns() - t0) / TRIPS;
    }
    pthread_join(t, &rc);
    if (rc) return 2;
    qsort(per, BATCHES, sizeof per[0], cmp);
    printf("%.0f\n", per[BATCHES / 2]);
    return 0;
}
