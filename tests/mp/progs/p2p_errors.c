/* p2p_errors: bad input to the point-to-point calls gets the right error
 * class and neither crashes nor hangs.
 *
 *   p2p_errors           under MPI_ERRORS_RETURN: invalid rank, tag, count,
 *                        communicator, datatype, NULL buffer, truncation,
 *                        invalid request; prints "p2p_errors: rank R ok"
 *   p2p_errors fatal     the last rank sends to a rank that does not exist
 *                        under the default MPI_ERRORS_ARE_FATAL: the job
 *                        must end with a message naming MPI_ERR_RANK */
#include "p2p_util.h"

static void expectClass(int rc, int want, const char* what) {
  int cls = -1;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  CHECKF(rc != MPI_SUCCESS && cls == want, "%s: returned %d (class %d), expected class %d",
         what, rc, cls, want);
}

int main(int argc, char** argv) {
  int fatal = argc > 1 && !strcmp(argv[1], "fatal");
  p2p_init(&argc, &argv, "p2p_errors");
  if (fatal) {
    if (g_rank == g_size - 1) {
      int x = 0;
      MPI_Send(&x, 1, MPI_INT, g_size, 0, MPI_COMM_WORLD); /* must not return */
      fprintf(stderr, "p2p_errors: MPI_Send to rank %d returned\n", g_size);
      return 3;
    }
    /* The others wait for a message that never comes; the job is torn down. */
    int y;
    MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return 4;
  }

  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  const int right = (g_rank + 1) % g_size, left = (g_rank - 1 + g_size) % g_size;
  int buf[16] = {0}, big[32];
  MPI_Status st;
  MPI_Request r;

  /* Ranks. */
  expectClass(MPI_Send(buf, 1, MPI_INT, g_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "send to size");
  expectClass(MPI_Send(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "send to -7");
  expectClass(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
              "send to MPI_ANY_SOURCE");
  expectClass(MPI_Recv(buf, 1, MPI_INT, g_size + 3, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK,
              "recv from size+3");
  expectClass(MPI_Irecv(buf, 1, MPI_INT, -9, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK, "irecv -9");
  expectClass(MPI_Probe(g_size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "probe size");

  /* Tags. */
  void* v;
  int flag, ub = 32767;
  if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag) == MPI_SUCCESS && flag)
    ub = *(int*)v;
  expectClass(MPI_Send(buf, 1, MPI_INT, right, -1, MPI_COMM_WORLD), MPI_ERR_TAG, "tag -1");
  expectClass(MPI_Send(buf, 1, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG,
              "send MPI_ANY_TAG");
  expectClass(MPI_Isend(buf, 1, MPI_INT, right, -5, MPI_COMM_WORLD, &r), MPI_ERR_TAG, "isend -5");
  expectClass(MPI_Recv(buf, 1, MPI_INT, left, -3, MPI_COMM_WORLD, &st), MPI_ERR_TAG, "recv -3");
  expectClass(MPI_Iprobe(left, -4, MPI_COMM_WORLD, &flag, &st), MPI_ERR_TAG, "iprobe -4");
  if (ub < 2147483647)
    expectClass(MPI_Send(buf, 1, MPI_INT, right, ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG,
                "tag > MPI_TAG_UB");

  /* Counts. */
  expectClass(MPI_Send(buf, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "count -1");
  expectClass(MPI_Irecv(buf, -2, MPI_INT, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT,
              "irecv count -2");

  /* Communicators (reported on MPI_COMM_WORLD's handler). */
  expectClass(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
  expectClass(MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM,
              "recv MPI_COMM_NULL");
  MPI_Comm dup, stale;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  stale = dup;
  MPI_OK(MPI_Comm_free(&dup));
  expectClass(MPI_Send(buf, 1, MPI_INT, 0, 0, stale), MPI_ERR_COMM, "freed communicator");

  /* Datatypes: null, uncommitted, freed. */
  expectClass(MPI_Send(buf, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
              "MPI_DATATYPE_NULL");
  MPI_Datatype vec;
  MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
  expectClass(MPI_Send(buf, 1, vec, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "uncommitted");
  expectClass(MPI_Recv(buf, 1, vec, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE,
              "recv uncommitted");
  MPI_OK(MPI_Type_commit(&vec));
  MPI_Datatype freed = vec;
  MPI_OK(MPI_Type_free(&vec));
  expectClass(MPI_Send(buf, 1, freed, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "freed type");

  /* NULL buffer with data to move. */
  expectClass(MPI_Send(NULL, 4, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "NULL send");
  expectClass(MPI_Irecv(NULL, 4, MPI_INT, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER,
              "NULL irecv");
  MPI_OK(MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD)); /* nothing to move */

  /* Truncation: 10 ints into room for 4. MPI_Recv reports it; the four
   * that fit arrive, nothing past them is written. */
  for (int i = 0; i < 32; ++i) big[i] = 100 + i;
  for (int i = 0; i < 16; ++i) buf[i] = -1;
  MPI_OK(MPI_Isend(big, 10, MPI_INT, right, 9, MPI_COMM_WORLD, &r));
  expectClass(MPI_Recv(buf, 4, MPI_INT, left, 9, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE,
              "truncated recv");
  MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK(buf[i] == 100 + i);
  for (int i = 4; i < 16; ++i) CHECKF(buf[i] == -1, "written past the buffer at %d", i);
  /* ... through MPI_Wait, for a rendezvous-sized message too. */
  int n = 100000;
  int* large = malloc(sizeof(int) * (size_t)n);
  int* small = malloc(sizeof(int) * (size_t)n);
  CHECK(large && small);
  for (int i = 0; i < n; ++i) large[i] = i;
  for (int i = 0; i < n; ++i) small[i] = -1;
  MPI_Request rr;
  MPI_OK(MPI_Irecv(small, n / 2, MPI_INT, left, 10, MPI_COMM_WORLD, &rr));
  MPI_OK(MPI_Isend(large, n, MPI_INT, right, 10, MPI_COMM_WORLD, &r));
  expectClass(MPI_Wait(&rr, &st), MPI_ERR_TRUNCATE, "truncated wait");
  CHECK(rr == MPI_REQUEST_NULL);
  MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  for (int i = 0; i < n / 2; ++i) CHECKF(small[i] == i, "truncated data at %d", i);
  for (int i = n / 2; i < n; ++i) CHECKF(small[i] == -1, "written past the buffer at %d", i);
  /* ... and through MPI_Waitall: MPI_ERR_IN_STATUS, the failing one's
   * status says MPI_ERR_TRUNCATE, the other's MPI_SUCCESS. */
  MPI_Request two[2];
  MPI_Status sts[2];
  MPI_OK(MPI_Irecv(buf, 2, MPI_INT, left, 11, MPI_COMM_WORLD, &two[0]));
  MPI_OK(MPI_Irecv(buf + 8, 8, MPI_INT, left, 12, MPI_COMM_WORLD, &two[1]));
  MPI_Request s2[2];
  MPI_OK(MPI_Isend(big, 5, MPI_INT, right, 11, MPI_COMM_WORLD, &s2[0]));
  MPI_OK(MPI_Isend(big, 5, MPI_INT, right, 12, MPI_COMM_WORLD, &s2[1]));
  expectClass(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS, "waitall with a truncation");
  CHECK(sts[0].MPI_ERROR == MPI_ERR_TRUNCATE && sts[1].MPI_ERROR == MPI_SUCCESS);
  CHECK(two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL);
  MPI_OK(MPI_Waitall(2, s2, MPI_STATUSES_IGNORE));

  /* Invalid requests. */
  MPI_Request stale_req;
  MPI_OK(MPI_Isend(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
  stale_req = r;
  MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  expectClass(MPI_Wait(&stale_req, &st), MPI_ERR_REQUEST, "completed request handle");
  MPI_Request nul = MPI_REQUEST_NULL;
  expectClass(MPI_Request_free(&nul), MPI_ERR_REQUEST, "free MPI_REQUEST_NULL");
  expectClass(MPI_Start(&nul), MPI_ERR_REQUEST, "start MPI_REQUEST_NULL");
  MPI_OK(MPI_Irecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
  expectClass(MPI_Start(&r), MPI_ERR_REQUEST, "start a non-persistent request");
  MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  MPI_Request arr[2] = {MPI_REQUEST_NULL, stale_req};
  expectClass(MPI_Waitall(2, arr, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, "waitall stale");
  MPI_Message m = MPI_MESSAGE_NULL;
  expectClass(MPI_Mrecv(buf, 1, MPI_INT, &m, &st), MPI_ERR_REQUEST, "mrecv MPI_MESSAGE_NULL");

  /* Nothing above disturbed matching: a plain exchange still works. */
  int x = g_rank, y = -1;
  MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, right, 20, &y, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &st));
  CHECK(y == left);
  free(large);
  free(small);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  p2p_barrier(MPI_COMM_WORLD);
  p2p_done();
  return 0;
}
