/* api_checks: every runtime function of the foundation, including the
 * calls made before MPI_Init and after MPI_Finalize that must fail cleanly.
 * Prints "api_checks: rank R: N checks passed" or the first failure. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks = 0;
static int rank = -1;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      fprintf(stderr, "api_checks: rank %d: %s:%d: CHECK(%s) failed\n", rank, \
              __FILE__, __LINE__, #cond);                                      \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static void* otherThread(void* arg) {
  int flag = -1;
  CHECK(MPI_Is_thread_main(&flag) == MPI_SUCCESS);
  *(int*)arg = flag;
  return NULL;
}

int main(int argc, char** argv) {
  int flag, size, v, sv, len, cls, provided;
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  char err[MPI_MAX_ERROR_STRING];

  /* Before MPI_Init: the always-callable functions work, the others fail. */
  CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 0);
  CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == 0);
  CHECK(MPI_Get_version(&v, &sv) == MPI_SUCCESS && v == MPI_VERSION && sv == MPI_SUBVERSION);
  CHECK(v == 5 && sv == 0);
  CHECK(MPI_Get_library_version(buf, &len) == MPI_SUCCESS);
  CHECK(strncmp(buf, "Loom ", 5) == 0 && len == (int)strlen(buf));
  CHECK(MPI_Error_string(MPI_ERR_COMM, err, &len) == MPI_SUCCESS && len > 0);
  CHECK(strstr(err, "communicator") != NULL);
  CHECK(MPI_Error_class(MPI_ERR_RANK, &cls) == MPI_SUCCESS && cls == MPI_ERR_RANK);
  CHECK(MPI_Wtime() > 0.0 && MPI_Wtick() > 0.0 && MPI_Wtick() < 1e-3);
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_ERR_OTHER);
  CHECK(MPI_Finalize() == MPI_ERR_OTHER);
  CHECK(MPI_Query_thread(&provided) == MPI_ERR_OTHER);

  /* MPI_Init_thread reports at most what Loom supports. */
  CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS);
  CHECK(provided == MPI_THREAD_SERIALIZED);
  CHECK(MPI_Query_thread(&v) == MPI_SUCCESS && v == provided);
  CHECK(MPI_Init(&argc, &argv) == MPI_ERR_OTHER); /* twice */
  CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 1);
  CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == 0);

  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS);
  CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS);
  CHECK(rank >= 0 && rank < size);
  const char* expect = getenv("EXPECT_SIZE");
  if (expect) CHECK(atoi(expect) == size);
  CHECK(MPI_Comm_rank(MPI_COMM_SELF, &v) == MPI_SUCCESS && v == 0);
  CHECK(MPI_Comm_size(MPI_COMM_SELF, &v) == MPI_SUCCESS && v == 1);

  /* Thread main. */
  CHECK(MPI_Is_thread_main(&flag) == MPI_SUCCESS && flag == 1);
  pthread_t th;
  int other = -1;
  CHECK(pthread_create(&th, NULL, otherThread, &other) == 0);
  pthread_join(th, NULL);
  CHECK(other == 0);

  /* Error handlers: default fatal; switch to return and provoke errors. */
  MPI_Errhandler eh;
  CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh) == MPI_SUCCESS);
  CHECK(eh == MPI_ERRORS_ARE_FATAL);
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN);
  CHECK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_ARE_FATAL);
  CHECK(MPI_Comm_rank(MPI_COMM_NULL, &v) == MPI_ERR_COMM);
  CHECK(MPI_Comm_size((MPI_Comm)(void*)&v, &v) == MPI_ERR_COMM); /* not a communicator */
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, NULL) == MPI_ERR_ARG);
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL) == MPI_ERR_ARG);
  CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_TAG) == MPI_SUCCESS);
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ABORT) == MPI_SUCCESS);
  CHECK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_ABORT);
  CHECK(MPI_Query_thread(NULL) == MPI_ERR_ARG);

  /* Error text for every class; unknown codes are rejected. */
  for (int c = MPI_SUCCESS; c <= MPI_ERR_LASTCODE; ++c) {
    if (MPI_Error_string(c, err, &len) != MPI_SUCCESS) continue; /* gaps allowed */
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(err) == len);
    CHECK(MPI_Error_class(c, &cls) == MPI_SUCCESS && cls == c);
  }
  CHECK(MPI_Error_string(-1, err, &len) == MPI_ERR_ARG);
  CHECK(MPI_Error_class(-1, &cls) == MPI_ERR_ARG);

  /* Processor name and clocks. */
  CHECK(MPI_Get_processor_name(buf, &len) == MPI_SUCCESS);
  CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(buf) == len);
  double t0 = MPI_Wtime(), t1 = MPI_Wtime();
  CHECK(t1 >= t0);

  CHECK(MPI_Finalize() == MPI_SUCCESS);

  /* After MPI_Finalize. */
  CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == 1);
  CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 1);
  CHECK(MPI_Comm_size(MPI_COMM_WORLD, &v) == MPI_ERR_OTHER);
  CHECK(MPI_Finalize() == MPI_ERR_OTHER);
  CHECK(MPI_Init(&argc, &argv) == MPI_ERR_OTHER);
  CHECK(MPI_Error_class(MPI_ERR_OTHER, &cls) == MPI_SUCCESS);
  printf("api_checks: rank %d: %d checks passed\n", rank, checks);
  return 0;
}
