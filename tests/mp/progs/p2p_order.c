/* p2p_order: wildcards and MPI's non-overtaking rule. Every rank sends N
 * messages to every rank (itself included), with sizes cycling across the
 * inline, eager and rendezvous protocols, so a small message sent after a
 * large one must still arrive second. Receivers use MPI_ANY_SOURCE with a
 * fixed tag (phase 1), MPI_ANY_SOURCE + MPI_ANY_TAG posted all at once
 * (phase 2), and a fixed source with MPI_ANY_TAG (phase 3); per source the
 * messages must come in the order they were sent.
 * Prints "p2p_order: rank R ok". */
#include "p2p_util.h"

enum { N = 40 };
static const int kSizes[] = {0, 8, 40, 41, 1000, 16385, 70000, 4, 300000, 12};
enum { kNumSizes = sizeof kSizes / sizeof kSizes[0] };

static int sizeOf(int seq) { return kSizes[seq % kNumSizes]; }
static uint32_t seedOf(int src, int seq, int phase) {
  return (uint32_t)(src * 100000 + seq * 10 + phase);
}

/* Checks that message `buf` (bytes long, from src) is the next one expected
 * from src; advances the expectation. */
static void expectNext(int* next, int src, const void* buf, int bytes, int tag, int phase,
                       int tagBase) {
  int seq = next[src]++;
  CHECKF(seq < N, "phase %d: more than %d messages from %d", phase, N, src);
  CHECKF(bytes == sizeOf(seq), "phase %d: message %d from %d has %d bytes, expected %d "
         "(out of order?)", phase, seq, src, bytes, sizeOf(seq));
  CHECKF(tag == tagBase + (phase == 1 ? 0 : seq % 3), "phase %d: message %d from %d tag %d",
         phase, seq, src, tag);
  long long bad = verify(buf, (size_t)bytes, seedOf(src, seq, phase));
  CHECKF(bad < 0, "phase %d: message %d from %d: wrong byte at %lld (out of order?)", phase,
         seq, src, bad);
}

static void sendAll(MPI_Request* reqs, unsigned char** bufs, int phase, int tagBase) {
  int k = 0;
  for (int seq = 0; seq < N; ++seq) {
    fill(bufs[seq], (size_t)sizeOf(seq), seedOf(g_rank, seq, phase));
    int tag = tagBase + (phase == 1 ? 0 : seq % 3);
    for (int d = 0; d < g_size; ++d)
      MPI_OK(MPI_Isend(bufs[seq], sizeOf(seq), MPI_BYTE, (g_rank + d) % g_size, tag,
                       MPI_COMM_WORLD, &reqs[k++]));
  }
}

int main(int argc, char** argv) {
  p2p_init(&argc, &argv, "p2p_order");
  MPI_Comm side;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &side)); /* barriers, away from the wildcards */
  const int total = N * g_size;
  MPI_Request* sreqs = malloc(sizeof(MPI_Request) * (size_t)total);
  MPI_Request* rreqs = malloc(sizeof(MPI_Request) * (size_t)total);
  MPI_Status* sts = malloc(sizeof(MPI_Status) * (size_t)total);
  unsigned char** sbufs = malloc(sizeof(unsigned char*) * N);
  unsigned char** rbufs = malloc(sizeof(unsigned char*) * (size_t)total);
  int* next = calloc((size_t)g_size, sizeof(int));
  CHECK(sreqs && rreqs && sts && sbufs && rbufs && next);
  for (int i = 0; i < N; ++i) CHECK((sbufs[i] = malloc((size_t)sizeOf(i) + 1)));
  for (int i = 0; i < total; ++i) CHECK((rbufs[i] = malloc(300000)));

  /* Phase 1: blocking receives from MPI_ANY_SOURCE, one tag. */
  sendAll(sreqs, sbufs, 1, 100);
  for (int i = 0; i < total; ++i) {
    MPI_Status st;
    MPI_OK(MPI_Recv(rbufs[0], 300000, MPI_BYTE, MPI_ANY_SOURCE, 100, MPI_COMM_WORLD, &st));
    int bytes;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &bytes));
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < g_size);
    expectNext(next, st.MPI_SOURCE, rbufs[0], bytes, st.MPI_TAG, 1, 100);
  }
  MPI_OK(MPI_Waitall(total, sreqs, MPI_STATUSES_IGNORE));
  for (int s = 0; s < g_size; ++s) CHECK(next[s] == N);
  p2p_barrier(side);

  /* Phase 2: every receive posted up front with both wildcards; the k-th
   * receive that got a message from src must hold src's k-th message. */
  memset(next, 0, sizeof(int) * (size_t)g_size);
  for (int i = 0; i < total; ++i)
    MPI_OK(MPI_Irecv(rbufs[i], 300000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     &rreqs[i]));
  sendAll(sreqs, sbufs, 2, 200);
  MPI_OK(MPI_Waitall(total, rreqs, sts));
  for (int i = 0; i < total; ++i) {
    int bytes;
    MPI_OK(MPI_Get_count(&sts[i], MPI_BYTE, &bytes));
    expectNext(next, sts[i].MPI_SOURCE, rbufs[i], bytes, sts[i].MPI_TAG, 2, 200);
  }
  MPI_OK(MPI_Waitall(total, sreqs, MPI_STATUSES_IGNORE));
  p2p_barrier(side);

  /* Phase 3: per source, MPI_ANY_TAG, sources visited in turn. */
  memset(next, 0, sizeof(int) * (size_t)g_size);
  sendAll(sreqs, sbufs, 3, 300);
  for (int seq = 0; seq < N; ++seq)
    for (int d = 0; d < g_size; ++d) {
      int src = (g_rank - d + g_size) % g_size;
      MPI_Status st;
      MPI_OK(MPI_Recv(rbufs[0], 300000, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
      int bytes;
      MPI_OK(MPI_Get_count(&st, MPI_BYTE, &bytes));
      CHECK(st.MPI_SOURCE == src);
      expectNext(next, src, rbufs[0], bytes, st.MPI_TAG, 3, 300);
    }
  MPI_OK(MPI_Waitall(total, sreqs, MPI_STATUSES_IGNORE));
  p2p_barrier(side);

  MPI_OK(MPI_Comm_free(&side));
  for (int i = 0; i < N; ++i) free(sbufs[i]);
  for (int i = 0; i < total; ++i) free(rbufs[i]);
  free(sreqs);
  free(rreqs);
  free(sts);
  free(sbufs);
  free(rbufs);
  free(next);
  p2p_done();
  return 0;
}
