/* p2p_probe: MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
 * MPI_Imrecv, with specific and wildcard sources and tags, eager and
 * rendezvous messages, and MPI_PROC_NULL. Each rank sends to its right
 * neighbour and probes what comes from its left one.
 * Prints "p2p_probe: rank R ok". */
#include <unistd.h>

#include "p2p_util.h"

enum { NMSG = 7 };
/* tag -> size: five small ones, one eager-sized, one rendezvous-sized. */
static const int kTags[NMSG] = {0, 1, 2, 3, 4, 7, 8};
static const int kBytes[NMSG] = {100, 200, 300, 400, 500, 100000, 5};

static int bytesOfTag(int tag) {
  for (int i = 0; i < NMSG; ++i)
    if (kTags[i] == tag) return kBytes[i];
  return -1;
}

static uint32_t seedOf(int src, int tag) { return (uint32_t)(src * 1000 + tag); }

static void checkMsg(const MPI_Status* st, const void* buf, int src, int tag) {
  int n;
  MPI_OK(MPI_Get_count(st, MPI_BYTE, &n));
  CHECKF(st->MPI_SOURCE == src && st->MPI_TAG == tag && n == bytesOfTag(tag),
         "status source=%d tag=%d count=%d, expected %d %d %d", st->MPI_SOURCE, st->MPI_TAG, n,
         src, tag, bytesOfTag(tag));
  CHECKF(verify(buf, (size_t)n, seedOf(src, tag)) < 0, "tag %d: wrong content", tag);
}

static void checkProcNull(const MPI_Status* st) {
  int n;
  MPI_OK(MPI_Get_count(st, MPI_BYTE, &n));
  CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && n == 0);
}

int main(int argc, char** argv) {
  p2p_init(&argc, &argv, "p2p_probe");
  const int right = (g_rank + 1) % g_size, left = (g_rank - 1 + g_size) % g_size;
  unsigned char* sbuf[NMSG];
  MPI_Request sreq[NMSG];
  MPI_Status st;
  int flag, n;
  unsigned char* buf = malloc(100000);
  CHECK(buf);
  MPI_Comm side;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &side));

  /* Nothing has been sent yet with tag 99: MPI_Iprobe says so. */
  MPI_OK(MPI_Iprobe(left, 99, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag == 0);

  for (int i = 0; i < NMSG; ++i) {
    sbuf[i] = malloc((size_t)kBytes[i]);
    CHECK(sbuf[i]);
    fill(sbuf[i], (size_t)kBytes[i], seedOf(g_rank, kTags[i]));
    MPI_OK(MPI_Isend(sbuf[i], kBytes[i], MPI_BYTE, right, kTags[i], MPI_COMM_WORLD, &sreq[i]));
  }

  /* MPI_Probe on a specific tag, then receive exactly that size. */
  MPI_OK(MPI_Probe(left, 3, MPI_COMM_WORLD, &st));
  MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 3 && n == 400);
  MPI_OK(MPI_Recv(buf, n, MPI_BYTE, left, 3, MPI_COMM_WORLD, &st));
  checkMsg(&st, buf, left, 3);

  /* MPI_Iprobe with MPI_ANY_TAG sees the oldest remaining message: tag 0. */
  do {
    MPI_OK(MPI_Iprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  } while (!flag);
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 0);
  MPI_OK(MPI_Recv(buf, 100000, MPI_BYTE, left, st.MPI_TAG, MPI_COMM_WORLD, &st));
  checkMsg(&st, buf, left, 0);

  /* MPI_Mprobe takes tag 1 out of matching: a probe no longer sees it. */
  MPI_Message msg;
  MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &msg, &st));
  CHECK(msg != MPI_MESSAGE_NULL && st.MPI_SOURCE == left && st.MPI_TAG == 1);
  MPI_OK(MPI_Iprobe(left, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(flag == 0);
  MPI_OK(MPI_Mrecv(buf, 100000, MPI_BYTE, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL);
  checkMsg(&st, buf, left, 1);

  /* MPI_Improbe until the message is there, then MPI_Imrecv. */
  do {
    MPI_OK(MPI_Improbe(left, 2, MPI_COMM_WORLD, &flag, &msg, &st));
  } while (!flag);
  CHECK(st.MPI_TAG == 2);
  MPI_Request r;
  MPI_OK(MPI_Imrecv(buf, 300, MPI_BYTE, &msg, &r));
  CHECK(msg == MPI_MESSAGE_NULL);
  MPI_OK(MPI_Wait(&r, &st));
  checkMsg(&st, buf, left, 2);

  /* The rendezvous-sized one: probe reports its full size before any data
   * moved; a matched probe then receives it. */
  MPI_OK(MPI_Probe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st));
  MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
  CHECK(n == 100000 && st.MPI_SOURCE == left);
  MPI_OK(MPI_Mprobe(left, 7, MPI_COMM_WORLD, &msg, &st));
  MPI_OK(MPI_Imrecv(buf, 100000, MPI_BYTE, &msg, &r));
  MPI_OK(MPI_Wait(&r, &st));
  checkMsg(&st, buf, left, 7);

  /* Both wildcards: the oldest remaining is tag 4, then tag 8. */
  MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
  CHECK(st.MPI_TAG == 4);
  MPI_OK(MPI_Mrecv(buf, 500, MPI_BYTE, &msg, &st));
  checkMsg(&st, buf, left, 4);
  MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK(st.MPI_TAG == 8);
  MPI_OK(MPI_Recv(buf, 5, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  checkMsg(&st, buf, left, 8);

  /* MPI_PROC_NULL: everything succeeds at once with the "no process" status. */
  MPI_OK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
  checkProcNull(&st);
  MPI_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag == 1);
  checkProcNull(&st);
  MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NO_PROC);
  checkProcNull(&st);
  MPI_OK(MPI_Mrecv(buf, 10, MPI_BYTE, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL);
  checkProcNull(&st);
  MPI_OK(MPI_Improbe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &msg, &st));
  CHECK(flag == 1 && msg == MPI_MESSAGE_NO_PROC);
  MPI_OK(MPI_Imrecv(buf, 10, MPI_BYTE, &msg, &r));
  MPI_OK(MPI_Wait(&r, &st));
  checkProcNull(&st);

  MPI_OK(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
  for (int i = 0; i < NMSG; ++i) { /* everything was received */
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, kTags[i], MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0);
  }
  for (int i = 0; i < NMSG; ++i) free(sbuf[i]);
  free(buf);
  /* The final barrier runs on a duplicate: its messages must not meet the
   * wildcard probes of a rank that is still testing. */
  p2p_barrier(side);
  MPI_OK(MPI_Comm_free(&side));
  p2p_done();
  return 0;
}
