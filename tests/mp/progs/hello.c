/* hello: the smallest MPI program; every rank says where it runs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int rank, size, len;
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(name, &len);
  printf("Hello from rank %d of %d on %s\n", rank, size, name);
  /* When the test says how many ranks to expect, check it. */
  const char* expect = getenv("EXPECT_SIZE");
  if (expect && atoi(expect) != size) {
    fprintf(stderr, "hello: expected size %s, got %d\n", expect, size);
    return 1;
  }
  MPI_Finalize();
  return 0;
}
