/* Buffered-mode calls of MPI 5.0: MPI_Buffer_iflush, communicator buffers
 * (MPI_Comm_attach/detach/flush/iflush_buffer), session buffers
 * (MPI_Session_attach/detach/flush/iflush_buffer) and MPI_BUFFER_AUTOMATIC;
 * which buffer a buffered send uses; errors under MPI_ERRORS_RETURN.
 * Every rank sends to the next one (ring) and receives from the previous. */
#include <string.h>

#include "comm_checks.h"

static int me, np, next, prev;

static void expect(int rc, int want) {
  int cls = -1;
  CHECK(rc != MPI_SUCCESS);
  MPI_Error_class(rc, &cls);
  if (cls != want) fprintf(stderr, "bufapi: rank %d: class %d, want %d\n", me, cls, want);
  CHECK(cls == want);
}

/* n ints tagged `tag` around the ring on `comm`, buffered; checks them. */
static void ring(MPI_Comm comm, int n, int tag, int rounds) {
  int* s = malloc(sizeof(int) * (size_t)n);
  int* r = malloc(sizeof(int) * (size_t)n);
  for (int k = 0; k < rounds; ++k) {
    for (int i = 0; i < n; ++i) s[i] = me * 1000 + i + k;
    OK(MPI_Bsend(s, n, MPI_INT, next, tag, comm));
    memset(s, 0, sizeof(int) * (size_t)n); /* the copy went into the buffer */
  }
  for (int k = 0; k < rounds; ++k) {
    OK(MPI_Recv(r, n, MPI_INT, prev, tag, comm, MPI_STATUS_IGNORE));
    CHECK(r[0] == prev * 1000 + k && r[n - 1] == prev * 1000 + n - 1 + k);
  }
  free(s);
  free(r);
}

static void test_process_iflush(void) {
  int size = 4 * (1000 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  char* buf = malloc((size_t)size);
  OK(MPI_Buffer_attach(buf, size));
  ring(MPI_COMM_WORLD, 1000, 1, 4);
  MPI_Request r;
  OK(MPI_Buffer_iflush(&r));
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(r == MPI_REQUEST_NULL);
  OK(MPI_Buffer_flush());
  void* got;
  int gsize;
  OK(MPI_Buffer_detach(&got, &gsize));
  CHECK(got == buf && gsize == size);
  free(buf);
}

static void test_comm_buffer(void) {
  MPI_Comm dup;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int size = 2 * (500 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  char* buf = malloc((size_t)size);
  /* No buffer anywhere: a buffered send fails. */
  int x = 1;
  expect(MPI_Bsend(&x, 1, MPI_INT, next, 2, dup), MPI_ERR_BUFFER);
  expect(MPI_Comm_detach_buffer(dup, &buf, &size), MPI_ERR_BUFFER);
  OK(MPI_Comm_attach_buffer(dup, buf, size));
  expect(MPI_Comm_attach_buffer(dup, buf, size), MPI_ERR_BUFFER);
  /* dup's buffer serves dup only: MPI_COMM_WORLD has none. */
  ring(dup, 500, 3, 2);
  expect(MPI_Bsend(&x, 1, MPI_INT, next, 2, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  OK(MPI_Comm_flush_buffer(dup));
  MPI_Request r;
  OK(MPI_Comm_iflush_buffer(dup, &r));
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  /* The communicator's buffer is preferred to the process's (empty) one. */
  char tiny[1];
  OK(MPI_Buffer_attach(tiny, 0));
  ring(dup, 500, 4, 2);
  expect(MPI_Bsend(&x, 1, MPI_INT, next, 2, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  void* pb;
  int ps;
  OK(MPI_Buffer_detach(&pb, &ps));
  CHECK(pb == tiny && ps == 0);
  /* The buffer is full with two messages of 500 ints; a third fails. */
  int* s = calloc(500, sizeof(int));
  OK(MPI_Bsend(s, 500, MPI_INT, next, 5, dup));
  OK(MPI_Bsend(s, 500, MPI_INT, next, 5, dup));
  int rc = MPI_Bsend(s, 500, MPI_INT, next, 5, dup);
  /* Eager messages leave the buffer at once: the third may fit. */
  int third = rc == MPI_SUCCESS;
  if (!third) expect(rc, MPI_ERR_BUFFER);
  for (int k = 0; k < 2 + third; ++k) OK(MPI_Recv(s, 500, MPI_INT, prev, 5, dup, MPI_STATUS_IGNORE));
  free(s);
  void* got;
  int gsize;
  OK(MPI_Comm_detach_buffer(dup, &got, &gsize));
  CHECK(got == buf && gsize == size);
  expect(MPI_Bsend(&x, 1, MPI_INT, next, 2, dup), MPI_ERR_BUFFER);
  /* Automatic: any number of large messages before the receives. */
  OK(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
  ring(dup, 100000, 6, 8);
  OK(MPI_Comm_detach_buffer(dup, &got, &gsize));
  CHECK(got == MPI_BUFFER_AUTOMATIC);
  /* Freed with a buffer attached and a message in it: flushed first. */
  OK(MPI_Comm_attach_buffer(dup, buf, size));
  ring(dup, 10, 7, 1);
  x = me;
  OK(MPI_Bsend(&x, 1, MPI_INT, next, 8, dup));
  OK(MPI_Recv(&x, 1, MPI_INT, prev, 8, dup, MPI_STATUS_IGNORE));
  CHECK(x == prev);
  OK(MPI_Comm_free(&dup));
  free(buf);
  /* Errors. */
  expect(MPI_Comm_attach_buffer(MPI_COMM_NULL, tiny, 1), MPI_ERR_COMM);
  expect(MPI_Comm_flush_buffer(MPI_COMM_NULL), MPI_ERR_COMM);
  expect(MPI_Comm_attach_buffer(MPI_COMM_WORLD, tiny, -1), MPI_ERR_ARG);
  expect(MPI_Comm_iflush_buffer(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  expect(MPI_Buffer_iflush(NULL), MPI_ERR_ARG);
  OK(MPI_Comm_flush_buffer(MPI_COMM_WORLD)); /* none attached: nothing to do */
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_session_buffer(void) {
  MPI_Session s;
  MPI_Group g;
  MPI_Comm sc, sdup;
  OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
  OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
  OK(MPI_Comm_create_from_group(g, "bufapi", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
  OK(MPI_Group_free(&g));
  OK(MPI_Comm_dup(sc, &sdup));
  int x = 1, size = 4 * (100 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  char* buf = malloc((size_t)size);
  expect(MPI_Bsend(&x, 1, MPI_INT, next, 1, sc), MPI_ERR_BUFFER);
  expect(MPI_Session_detach_buffer(s, &buf, &size), MPI_ERR_BUFFER);
  OK(MPI_Session_attach_buffer(s, buf, size));
  expect(MPI_Session_attach_buffer(s, buf, size), MPI_ERR_BUFFER);
  ring(sc, 100, 2, 2);
  ring(sdup, 100, 3, 2); /* a duplicate derives from the session too */
  OK(MPI_Session_flush_buffer(s));
  MPI_Request r;
  OK(MPI_Session_iflush_buffer(s, &r));
  int flag = 0, rc = MPI_SUCCESS;
  while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  OK(rc);
  /* A communicator buffer on sc takes precedence; sdup still uses the
   * session's. */
  char* cb = malloc((size_t)size);
  OK(MPI_Comm_attach_buffer(sc, cb, size));
  ring(sc, 100, 4, 1);
  ring(sdup, 100, 4, 1);
  void* got;
  int gsize;
  OK(MPI_Comm_detach_buffer(sc, &got, &gsize));
  CHECK(got == cb);
  free(cb);
  OK(MPI_Session_detach_buffer(s, &got, &gsize));
  CHECK(got == buf && gsize == size);
  expect(MPI_Bsend(&x, 1, MPI_INT, next, 1, sc), MPI_ERR_BUFFER);
  OK(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
  ring(sdup, 50000, 5, 4);
  /* Left attached with a message in it: MPI_Session_finalize flushes. */
  x = me;
  OK(MPI_Bsend(&x, 1, MPI_INT, next, 6, sc));
  OK(MPI_Recv(&x, 1, MPI_INT, prev, 6, sc, MPI_STATUS_IGNORE));
  CHECK(x == prev);
  /* No session: MPI_COMM_WORLD's handler reports it. */
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  expect(MPI_Session_attach_buffer(MPI_SESSION_NULL, buf, size), MPI_ERR_SESSION);
  expect(MPI_Session_flush_buffer(MPI_SESSION_NULL), MPI_ERR_SESSION);
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  expect(MPI_Session_iflush_buffer(s, NULL), MPI_ERR_ARG);
  OK(MPI_Comm_free(&sdup));
  OK(MPI_Comm_free(&sc));
  OK(MPI_Session_finalize(&s));
  free(buf);
}

int main(int argc, char** argv) {
  prog = "bufapi";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  next = (me + 1) % np;
  prev = (me + np - 1) % np;
  test_process_iflush();
  test_comm_buffer();
  test_session_buffer();
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Finalize());
  passed();
  return 0;
}
