/* abi_queries: MPI_Abi_get_version/get_info, the Fortran ABI calls (not set,
 * then set once), MPI_Get_hw_resource_info and MPI_Pcontrol, before MPI_Init
 * and after it, with wrong arguments under MPI_ERRORS_RETURN. */
#include <string.h>

#include "comm_checks.h"

static void expect(int rc, int cls, int line) {
  int c = -1;
  ++checks;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
  if (c != cls) {
    fprintf(stderr, "abi_queries: rank %d: line %d: got error %d (class %d), expected %d\n",
            wrank, line, rc, c, cls);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
#define EXPECT(call, cls) expect((call), (cls), __LINE__)

static int value_of(MPI_Info info, const char* key, char* out, int cap) {
  int flag = 0, len = cap;
  out[0] = '\0';
  OK(MPI_Info_get_string(info, key, &len, out, &flag));
  return flag;
}

static void queries(void) {
  int major = -1, minor = -1, n;
  char v[MPI_MAX_INFO_VAL];
  MPI_Info info;
  OK(MPI_Abi_get_version(&major, &minor));
  CHECK(major == MPI_ABI_VERSION && minor == MPI_ABI_SUBVERSION);
  OK(MPI_Abi_get_info(&info));
  CHECK(value_of(info, "mpi_aint_size", v, sizeof v) && atoi(v) == (int)sizeof(MPI_Aint));
  CHECK(value_of(info, "mpi_count_size", v, sizeof v) && atoi(v) == (int)sizeof(MPI_Count));
  CHECK(value_of(info, "mpi_offset_size", v, sizeof v) && atoi(v) == (int)sizeof(MPI_Offset));
  OK(MPI_Info_free(&info));
  OK(MPI_Get_hw_resource_info(&info));
  CHECK(value_of(info, "hwloc://Core", v, sizeof v) && atoi(v) >= 1);
  CHECK(value_of(info, "hwloc://PU", v, sizeof v) && atoi(v) >= 1);
  CHECK(value_of(info, "mpi_hw_resource_type", v, sizeof v) && strstr(v, "hwloc://Core"));
  OK(MPI_Info_get_nkeys(info, &n));
  CHECK(n >= 5);
  OK(MPI_Info_free(&info));
  OK(MPI_Pcontrol(0));
  OK(MPI_Pcontrol(1, "extra", 3));
  EXPECT(MPI_Abi_get_version(NULL, &minor), MPI_ERR_ARG);
  EXPECT(MPI_Abi_get_info(NULL), MPI_ERR_ARG);
  EXPECT(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG);
  EXPECT(MPI_Abi_get_fortran_info(NULL), MPI_ERR_ARG);
  EXPECT(MPI_Abi_set_fortran_info(MPI_INFO_NULL), MPI_ERR_INFO);
  EXPECT(MPI_Abi_get_fortran_booleans(3, v, v, &n), MPI_ERR_ARG);
  EXPECT(MPI_Abi_set_fortran_booleans(0, v, v), MPI_ERR_ARG);
  EXPECT(MPI_Abi_set_fortran_booleans(4, NULL, v), MPI_ERR_ARG);
}

static void fortran(int first) {
  MPI_Info info;
  int t = 0, f = 0, is_set = -1;
  char v[64];
  OK(MPI_Abi_get_fortran_info(&info));
  if (first) {
    CHECK(info == MPI_INFO_NULL); /* no Fortran bindings: not set */
    OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set));
    CHECK(is_set == 0);
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_logical_size", "4"));
    OK(MPI_Abi_set_fortran_info(info));
    OK(MPI_Info_free(&info));
    t = 1;
    f = 0;
    OK(MPI_Abi_set_fortran_booleans(4, &t, &f));
    OK(MPI_Abi_get_fortran_info(&info));
  }
  CHECK(info != MPI_INFO_NULL);
  CHECK(value_of(info, "mpi_logical_size", v, sizeof v) && strcmp(v, "4") == 0);
  EXPECT(MPI_Abi_set_fortran_info(info), MPI_ERR_ABI); /* only once */
  OK(MPI_Info_free(&info));
  t = f = 7;
  OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set));
  CHECK(is_set == 1 && t == 1 && f == 0);
  OK(MPI_Abi_get_fortran_booleans(8, &t, &f, &is_set));
  CHECK(is_set == 0);
  EXPECT(MPI_Abi_set_fortran_booleans(4, &t, &f), MPI_ERR_ABI);
}

int main(int argc, char** argv) {
  queries();
  fortran(1);
  prog = "abi_queries";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  queries();
  fortran(0);
  OK(MPI_Finalize());
  passed();
  return 0;
}
