/* p2p_flood: flow control. Every rank but 0 sends its share of TOTAL small
 * messages (default 100 000; argv[1]) to rank 0 with blocking MPI_Send,
 * while rank 0 is busy: first elsewhere (it sleeps, outside MPI, for half of
 * DELAY ms; argv[2], default 1500), so the senders' queues and the network
 * fill up, then inside MPI without receiving (MPI_Iprobe for a tag nobody
 * sends, the other half), so the messages pile up unexpected. Then rank 0
 * receives them all with MPI_ANY_SOURCE and checks, per source, the order
 * (tags count up), the sizes and the contents. Nothing may be lost, no
 * sender may fail, and rank 0's peak memory must stay within a bound
 * proportional to what was sent (a transport that buffers without limit,
 * or whose queues overflow, fails here).
 * Prints "p2p_flood: rank R ok". */
#include <time.h>

#include "p2p_util.h"

static long peakRssKiB(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}

static int sizeOf(int seq) { return 1 + (seq * 7) % 48; } /* 1..48 bytes: inline and eager */

int main(int argc, char** argv) {
  p2p_init(&argc, &argv, "p2p_flood");
  const int total = argc > 1 ? atoi(argv[1]) : 100000;
  const int delayMs = argc > 2 ? atoi(argv[2]) : 1500;
  CHECK(g_size >= 2 && total > 0);
  const int senders = g_size - 1;
  unsigned char buf[64];
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank != 0) {
    /* Sender r sends seq = 0..count-1 with tag seq. */
    const int count = total / senders + (g_rank <= total % senders ? 1 : 0);
    for (int seq = 0; seq < count; ++seq) {
      fill(buf, (size_t)sizeOf(seq), (uint32_t)(g_rank * 1000003 + seq));
      MPI_OK(MPI_Send(buf, sizeOf(seq), MPI_BYTE, 0, seq, MPI_COMM_WORLD));
    }
  } else {
    const long before = peakRssKiB();
    const int half = delayMs / 2;
    struct timespec ts = {half / 1000, (long)(half % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* busy elsewhere */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do { /* in MPI, pulling messages in without receiving them */
      int flag = 0;
      MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, -12345 & 0x7fff, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
      CHECK(!flag);
      clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < half);
    int* next = calloc((size_t)g_size, sizeof(int));
    for (int i = 0; i < total; ++i) {
      MPI_Status st;
      MPI_OK(MPI_Recv(buf, sizeof buf, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
      const int src = st.MPI_SOURCE;
      CHECKF(src > 0 && src < g_size, "message from rank %d", src);
      const int seq = next[src]++;
      int bytes = 0;
      MPI_OK(MPI_Get_count(&st, MPI_BYTE, &bytes));
      CHECKF(st.MPI_TAG == seq, "message %d from rank %d came with tag %d (lost or reordered)",
             seq, src, st.MPI_TAG);
      CHECKF(bytes == sizeOf(seq), "message %d from rank %d has %d bytes", seq, src, bytes);
      CHECKF(verify(buf, (size_t)bytes, (uint32_t)(src * 1000003 + seq)) < 0,
             "message %d from rank %d is corrupt", seq, src);
    }
    int flag = 1;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECKF(!flag, "a message more than the %d sent is waiting", total);
    const long grown = peakRssKiB() - before;
    /* ~100 bytes of bookkeeping per queued message, plus the transports'
     * fixed buffers: 256 MiB is far above a bounded design and far below an
     * unbounded one at this count. */
    CHECKF(grown < 256 * 1024, "peak memory grew by %ld KiB while %d messages waited", grown,
           total);
    printf("p2p_flood: %d messages from %d ranks, peak memory grew by %ld KiB\n", total,
           senders, grown);
    free(next);
  }
  p2p_done();
  return 0;
}
