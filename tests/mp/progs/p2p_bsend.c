/* p2p_bsend: buffered sends. A buffer sized by the standard's formula
 * (MPI_Pack_size + MPI_BSEND_OVERHEAD per message) holds every message of a
 * burst of MPI_Bsend, MPI_Ibsend and MPI_Bsend_init sends, small and large,
 * while the receiver is not receiving yet; MPI_Buffer_detach waits until
 * they are all sent and hands the buffer back. Then the error cases under
 * MPI_ERRORS_RETURN: no buffer, a buffer too small, attaching twice.
 * Prints "p2p_bsend: rank R ok". */
#include <unistd.h>

#include "p2p_util.h"

enum { NMSG = 6 };
static const int kCounts[NMSG] = {10, 1000, 300000, 0, 5000, 3};

int main(int argc, char** argv) {
  p2p_init(&argc, &argv, "p2p_bsend");
  const int right = (g_rank + 1) % g_size, left = (g_rank - 1 + g_size) % g_size;
  int* out[NMSG + 2];
  int bsize = 0, psize;
  for (int i = 0; i < NMSG; ++i) {
    MPI_OK(MPI_Pack_size(kCounts[i], MPI_INT, MPI_COMM_WORLD, &psize));
    bsize += psize + MPI_BSEND_OVERHEAD;
  }
  /* Two more messages from a persistent buffered send of kCounts[1]. */
  MPI_OK(MPI_Pack_size(kCounts[1], MPI_INT, MPI_COMM_WORLD, &psize));
  bsize += 2 * (psize + MPI_BSEND_OVERHEAD);
  char* buffer = malloc((size_t)bsize);
  CHECK(buffer);
  MPI_OK(MPI_Buffer_attach(buffer, bsize));

  for (int i = 0; i < NMSG + 2; ++i) {
    int n = i < NMSG ? kCounts[i] : kCounts[1];
    out[i] = malloc(sizeof(int) * (size_t)(n + 1));
    CHECK(out[i]);
    for (int k = 0; k < n; ++k) out[i][k] = g_rank * 1000003 + i * 7919 + k;
  }
  for (int i = 0; i < NMSG; ++i) {
    if (i % 2 == 0) {
      MPI_OK(MPI_Bsend(out[i], kCounts[i], MPI_INT, right, i, MPI_COMM_WORLD));
    } else {
      MPI_Request r;
      MPI_OK(MPI_Ibsend(out[i], kCounts[i], MPI_INT, right, i, MPI_COMM_WORLD, &r));
      MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE)); /* complete once copied */
    }
    /* The data was copied: scribbling over the user buffer changes nothing. */
    for (int k = 0; k < kCounts[i]; ++k) out[i][k] = -1;
  }
  MPI_Request pr;
  MPI_OK(MPI_Bsend_init(out[NMSG], kCounts[1], MPI_INT, right, NMSG, MPI_COMM_WORLD, &pr));
  for (int rep = 0; rep < 2; ++rep) {
    int n = kCounts[1];
    for (int k = 0; k < n; ++k) out[NMSG][k] = g_rank * 1000003 + (NMSG + rep) * 7919 + k;
    MPI_OK(MPI_Start(&pr));
    MPI_OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
  }
  MPI_OK(MPI_Request_free(&pr));

  /* Receive late, so the large message is still waiting in the buffer when
   * the sender detaches (detach must wait for it). The last rank receives
   * first; a job of one rank sends to itself. */
  if (g_rank != g_size - 1) usleep(100 * 1000);
  int* in = malloc(sizeof(int) * 300001);
  CHECK(in);
  for (int i = 0; i < NMSG + 2; ++i) {
    int n = i < NMSG ? kCounts[i] : kCounts[1];
    MPI_Status st;
    int tag = i < NMSG ? i : NMSG;
    MPI_OK(MPI_Recv(in, n, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
    int got;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == n);
    for (int k = 0; k < n; ++k)
      CHECKF(in[k] == left * 1000003 + i * 7919 + k, "message %d element %d", i, k);
  }
  void* back;
  int backSize;
  MPI_OK(MPI_Buffer_detach(&back, &backSize));
  CHECK(back == buffer && backSize == bsize);

  /* Errors under MPI_ERRORS_RETURN. */
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int cls, rc;
  rc = MPI_Bsend(out[0], 10, MPI_INT, right, 50, MPI_COMM_WORLD); /* nothing attached */
  MPI_Error_class(rc, &cls);
  CHECKF(cls == MPI_ERR_BUFFER, "no buffer: class %d", cls);
  MPI_OK(MPI_Buffer_attach(buffer, 100 + MPI_BSEND_OVERHEAD));
  rc = MPI_Buffer_attach(buffer, 100); /* twice */
  MPI_Error_class(rc, &cls);
  CHECKF(cls == MPI_ERR_BUFFER, "attached twice: class %d", cls);
  rc = MPI_Bsend(out[1], 1000, MPI_INT, right, 51, MPI_COMM_WORLD); /* 4000 > 100 bytes */
  MPI_Error_class(rc, &cls);
  CHECKF(cls == MPI_ERR_BUFFER, "too small: class %d", cls);
  MPI_OK(MPI_Bsend(out[1], 10, MPI_INT, MPI_PROC_NULL, 52, MPI_COMM_WORLD));
  MPI_OK(MPI_Buffer_detach(&back, &backSize));
  CHECK(back == buffer && backSize == 100 + MPI_BSEND_OVERHEAD);

  for (int i = 0; i < NMSG + 2; ++i) free(out[i]);
  free(in);
  free(buffer);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  p2p_barrier(MPI_COMM_WORLD);
  p2p_done();
  return 0;
}
