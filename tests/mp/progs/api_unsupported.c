/* Functions Loom declares but does not implement yet: each returns
 * MPI_ERR_UNSUPPORTED_OPERATION through the error handler the standard names
 * (the communicator argument's, MPI_COMM_WORLD's when there is none; a file
 * call's default handler returns), and never does anything else.
 *
 *   api_unsupported          checks under MPI_ERRORS_RETURN, then passes
 *   api_unsupported fatal    calls one under MPI_ERRORS_ARE_FATAL: the job
 *                            must end with a message naming the function */
#include <string.h>

#include "comm_checks.h"

int main(int argc, char** argv) {
  prog = "api_unsupported";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  char port[MPI_MAX_PORT_NAME];

  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    MPI_Open_port(MPI_INFO_NULL, port);
    fprintf(stderr, "api_unsupported: MPI_Open_port returned under MPI_ERRORS_ARE_FATAL\n");
    return 3;
  }

  /* A file call with the world's handler fatal: files return by default. */
  MPI_File fh = MPI_FILE_NULL;
  CHECK(MPI_File_open(MPI_COMM_WORLD, "/nonexistent/x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) ==
        MPI_ERR_UNSUPPORTED_OPERATION);
  CHECK(fh == MPI_FILE_NULL);

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_Open_port(MPI_INFO_NULL, port);
  CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION);
  int cls = -1;
  OK(MPI_Error_class(rc, &cls));
  CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  OK(MPI_Error_string(rc, text, &len));
  CHECK(len > 0 && len == (int)strlen(text));

  /* The profiling name is the same function. */
  CHECK(PMPI_Open_port(MPI_INFO_NULL, port) == MPI_ERR_UNSUPPORTED_OPERATION);
  MPI_Comm child = MPI_COMM_NULL;
  CHECK(MPI_Comm_join(-1, &child) == MPI_ERR_UNSUPPORTED_OPERATION);
  CHECK(child == MPI_COMM_NULL);

  /* No process of a Loom job has a parent. */
  MPI_Comm parent = MPI_COMM_WORLD;
  OK(MPI_Comm_get_parent(&parent));
  CHECK(parent == MPI_COMM_NULL);

  /* Handle <-> int conversions (MPI 5.0 ABI) are implemented. */
  CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
  CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_NULL)) == MPI_COMM_NULL);
  CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE);
  CHECK(MPI_Op_toint(MPI_SUM) == (int)(size_t)MPI_SUM);
  MPI_Comm dup, dup2;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup2));
  int a = MPI_Comm_toint(dup), b = MPI_Comm_toint(dup2);
  CHECK(a >= 4096 && b >= 4096 && a != b);
  CHECK(MPI_Comm_toint(dup) == a);
  CHECK(MPI_Comm_fromint(a) == dup && MPI_Comm_fromint(b) == dup2);
  int size = -1;
  OK(MPI_Comm_size(MPI_Comm_fromint(a), &size));
  /* A number never handed out is an invalid handle, rejected as such. */
  CHECK(MPI_Comm_size(MPI_Comm_fromint(b + 1000), &size) == MPI_ERR_COMM);
  OK(MPI_Comm_free(&dup));
  OK(MPI_Comm_free(&dup2));

  passed();
  MPI_Finalize();
  return 0;
}
