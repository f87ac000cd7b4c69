/* info_objects: MPI_Info_* (before MPI_Init too), MPI_INFO_ENV and
 * MPI_Info_create_env, communicator hints (set/get, dup, dup_with_info,
 * idup_with_info), MPI_Alloc_mem / MPI_Free_mem, and wrong arguments with
 * the right error classes under MPI_ERRORS_RETURN. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm_checks.h"

static void expect(int rc, int cls, int line) {
  int c = -1;
  ++checks;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
  if (c != cls) {
    fprintf(stderr, "info_objects: rank %d: line %d: got error %d (class %d), expected %d\n",
            wrank, line, rc, c, cls);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
#define EXPECT(call, cls) expect((call), (cls), __LINE__)

/* The value of `key` in `info` ("" with flag 0 when absent). */
static int value_of(MPI_Info info, const char* key, char* out, int cap) {
  int flag = 0, len = cap;
  out[0] = '\0';
  OK(MPI_Info_get_string(info, key, &len, out, &flag));
  return flag;
}

static void info_basics(void) {
  MPI_Info info, dup;
  char key[MPI_MAX_INFO_KEY], val[MPI_MAX_INFO_VAL];
  int n, flag, len;

  OK(MPI_Info_create(&info));
  OK(MPI_Info_get_nkeys(info, &n));
  CHECK(n == 0);
  OK(MPI_Info_set(info, "alpha", "1"));
  OK(MPI_Info_set(info, "beta", "two"));
  OK(MPI_Info_set(info, "gamma", "three"));
  OK(MPI_Info_set(info, "alpha", "uno")); /* replaced in place */
  OK(MPI_Info_get_nkeys(info, &n));
  CHECK(n == 3);
  OK(MPI_Info_get_nthkey(info, 0, key));
  CHECK(strcmp(key, "alpha") == 0);
  OK(MPI_Info_get_nthkey(info, 2, key));
  CHECK(strcmp(key, "gamma") == 0);
  CHECK(value_of(info, "alpha", val, sizeof val) && strcmp(val, "uno") == 0);

  /* get_valuelen: the length without the NUL. */
  OK(MPI_Info_get_valuelen(info, "gamma", &len, &flag));
  CHECK(flag == 1 && len == 5);
  OK(MPI_Info_get_valuelen(info, "delta", &len, &flag));
  CHECK(flag == 0);

  /* get_string: buflen returns the length + 1; truncation keeps a NUL. */
  len = 0;
  OK(MPI_Info_get_string(info, "gamma", &len, NULL, &flag));
  CHECK(flag == 1 && len == 6);
  len = 3;
  memset(val, 'x', sizeof val);
  OK(MPI_Info_get_string(info, "gamma", &len, val, &flag));
  CHECK(flag == 1 && len == 6 && strcmp(val, "th") == 0);
  len = 42;
  OK(MPI_Info_get_string(info, "nope", &len, val, &flag));
  CHECK(flag == 0 && len == 42);

  /* The deprecated MPI_Info_get: valuelen excludes the NUL. */
  memset(val, 'x', sizeof val);
  OK(MPI_Info_get(info, "beta", 2, val, &flag));
  CHECK(flag == 1 && strcmp(val, "tw") == 0);
  OK(MPI_Info_get(info, "beta", MPI_MAX_INFO_VAL - 1, val, &flag));
  CHECK(flag == 1 && strcmp(val, "two") == 0);
  OK(MPI_Info_get(info, "nope", MPI_MAX_INFO_VAL - 1, val, &flag));
  CHECK(flag == 0);

  /* dup is deep and keeps the order. */
  OK(MPI_Info_dup(info, &dup));
  OK(MPI_Info_delete(info, "alpha"));
  OK(MPI_Info_get_nkeys(info, &n));
  CHECK(n == 2);
  OK(MPI_Info_get_nthkey(info, 0, key));
  CHECK(strcmp(key, "beta") == 0);
  OK(MPI_Info_get_nkeys(dup, &n));
  CHECK(n == 3);
  OK(MPI_Info_get_nthkey(dup, 0, key));
  CHECK(strcmp(key, "alpha") == 0);

  /* Longest key and value accepted. */
  memset(key, 'k', MPI_MAX_INFO_KEY - 1);
  key[MPI_MAX_INFO_KEY - 1] = '\0';
  memset(val, 'v', MPI_MAX_INFO_VAL - 1);
  val[MPI_MAX_INFO_VAL - 1] = '\0';
  OK(MPI_Info_set(dup, key, val));
  OK(MPI_Info_get_valuelen(dup, key, &len, &flag));
  CHECK(flag == 1 && len == MPI_MAX_INFO_VAL - 1);
  {
    char got[MPI_MAX_INFO_KEY];
    OK(MPI_Info_get_nthkey(dup, 3, got));
    CHECK(strcmp(got, key) == 0);
  }

  OK(MPI_Info_free(&dup));
  CHECK(dup == MPI_INFO_NULL);
  OK(MPI_Info_free(&info));
  CHECK(info == MPI_INFO_NULL);
}

static void info_errors(void) {
  MPI_Info info, stale;
  char key[MPI_MAX_INFO_KEY + 8], big[MPI_MAX_INFO_VAL + 8], val[16];
  int n, flag, len;

  OK(MPI_Info_create(&info));
  EXPECT(MPI_Info_set(MPI_INFO_NULL, "a", "b"), MPI_ERR_INFO);
  EXPECT(MPI_Info_set(MPI_INFO_ENV, "a", "b"), MPI_ERR_INFO);
  EXPECT(MPI_Info_set(info, NULL, "b"), MPI_ERR_INFO_KEY);
  EXPECT(MPI_Info_set(info, "", "b"), MPI_ERR_INFO_KEY);
  memset(key, 'k', MPI_MAX_INFO_KEY);
  key[MPI_MAX_INFO_KEY] = '\0'; /* one character too many */
  EXPECT(MPI_Info_set(info, key, "b"), MPI_ERR_INFO_KEY);
  memset(big, 'v', MPI_MAX_INFO_VAL);
  big[MPI_MAX_INFO_VAL] = '\0';
  EXPECT(MPI_Info_set(info, "a", big), MPI_ERR_INFO_VALUE);
  EXPECT(MPI_Info_set(info, "a", NULL), MPI_ERR_INFO_VALUE);
  EXPECT(MPI_Info_delete(info, "missing"), MPI_ERR_INFO_NOKEY);
  EXPECT(MPI_Info_delete(MPI_INFO_NULL, "a"), MPI_ERR_INFO);
  EXPECT(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
  EXPECT(MPI_Info_get_nkeys(info, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Info_get_nthkey(info, 0, val), MPI_ERR_ARG); /* no keys */
  EXPECT(MPI_Info_get_nthkey(info, -1, val), MPI_ERR_ARG);
  EXPECT(MPI_Info_get(info, "a", -1, val, &flag), MPI_ERR_ARG);
  EXPECT(MPI_Info_get(info, key, 4, val, &flag), MPI_ERR_INFO_KEY);
  len = -2;
  EXPECT(MPI_Info_get_string(info, "a", &len, val, &flag), MPI_ERR_ARG);
  EXPECT(MPI_Info_get_string(info, "a", NULL, val, &flag), MPI_ERR_ARG);
  EXPECT(MPI_Info_get_valuelen(info, "a", NULL, &flag), MPI_ERR_ARG);
  EXPECT(MPI_Info_dup(MPI_INFO_NULL, &stale), MPI_ERR_INFO);
  EXPECT(MPI_Info_dup(info, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Info_create(NULL), MPI_ERR_ARG);
  EXPECT(MPI_Info_create_env(-1, NULL, &stale), MPI_ERR_ARG);
  stale = MPI_INFO_NULL;
  EXPECT(MPI_Info_free(&stale), MPI_ERR_INFO);
  stale = MPI_INFO_ENV;
  EXPECT(MPI_Info_free(&stale), MPI_ERR_INFO);
  stale = info;
  OK(MPI_Info_free(&info));
  EXPECT(MPI_Info_get_nkeys(stale, &n), MPI_ERR_INFO);
  EXPECT(MPI_Info_free(&stale), MPI_ERR_INFO);
}

static void info_env(int argc, char** argv, int running) {
  MPI_Info env;
  char val[MPI_MAX_INFO_VAL];
  int n;
  OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
  CHECK(n >= 3);
  CHECK(value_of(MPI_INFO_ENV, "command", val, sizeof val) && strstr(val, "info_objects"));
  CHECK(value_of(MPI_INFO_ENV, "arch", val, sizeof val) && val[0]);
  CHECK(value_of(MPI_INFO_ENV, "host", val, sizeof val) && val[0]);
  CHECK(value_of(MPI_INFO_ENV, "wdir", val, sizeof val) && val[0] == '/');
  /* maxprocs is the same before MPI_Init, while running and after
   * MPI_Finalize (what the launcher started); thread_level, the level
   * requested at launch, is never set (loomrun takes no such request). */
  int size = 0;
  if (running) OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(value_of(MPI_INFO_ENV, "maxprocs", val, sizeof val));
  if (running) CHECK(atoi(val) == size);
  {
    MPI_Info a;
    char v2[MPI_MAX_INFO_VAL];
    OK(MPI_Info_create_env(argc, argv, &a));
    CHECK(value_of(a, "maxprocs", v2, sizeof v2) && strcmp(v2, val) == 0);
    OK(MPI_Info_free(&a));
  }
  CHECK(!value_of(MPI_INFO_ENV, "thread_level", val, sizeof val));

  OK(MPI_Info_create_env(argc, argv, &env));
  CHECK(value_of(env, "command", val, sizeof val) && strcmp(val, argv[0]) == 0);
  CHECK(value_of(env, "argv", val, sizeof val) && strcmp(val, "one two") == 0);
  OK(MPI_Info_free(&env));
  OK(MPI_Info_create_env(0, NULL, &env));
  CHECK(value_of(env, "argv", val, sizeof val) && strcmp(val, "one two") == 0);
  OK(MPI_Info_free(&env));
}

static void comm_hints(int size) {
  MPI_Info info, used;
  MPI_Comm dup, dup2, dup3;
  MPI_Request req;
  char val[MPI_MAX_INFO_VAL];
  int n, v;

  /* A new communicator shows the assertions Loom knows, all false. */
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  OK(MPI_Comm_get_info(dup, &used));
  CHECK(value_of(used, "mpi_assert_no_any_tag", val, sizeof val) && strcmp(val, "false") == 0);
  CHECK(value_of(used, "mpi_assert_allow_overtaking", val, sizeof val));
  OK(MPI_Info_free(&used));

  OK(MPI_Info_create(&info));
  OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
  OK(MPI_Info_set(info, "loom_test_key", "kept"));
  OK(MPI_Comm_set_info(dup, info));
  OK(MPI_Info_free(&info));
  OK(MPI_Comm_get_info(dup, &used));
  CHECK(value_of(used, "mpi_assert_no_any_tag", val, sizeof val) && strcmp(val, "true") == 0);
  /* A key Loom does not recognise is dropped (MPI 4.0: get_info shows the
   * hints in use). */
  CHECK(!value_of(used, "loom_test_key", val, sizeof val));
  OK(MPI_Info_free(&used));

  /* MPI_Comm_dup copies the hints. */
  OK(MPI_Comm_dup(dup, &dup2));
  OK(MPI_Comm_get_info(dup2, &used));
  CHECK(value_of(used, "mpi_assert_no_any_tag", val, sizeof val) && strcmp(val, "true") == 0);
  OK(MPI_Info_free(&used));
  OK(MPI_Comm_free(&dup2));

  /* MPI_Comm_dup_with_info takes the given hints instead. */
  OK(MPI_Info_create(&info));
  OK(MPI_Info_set(info, "loom_other", "x"));
  OK(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
  OK(MPI_Comm_dup_with_info(dup, info, &dup2));
  OK(MPI_Comm_get_info(dup2, &used));
  CHECK(!value_of(used, "loom_other", val, sizeof val));
  CHECK(value_of(used, "mpi_assert_no_any_source", val, sizeof val) && strcmp(val, "true") == 0);
  CHECK(value_of(used, "mpi_assert_no_any_tag", val, sizeof val) && strcmp(val, "false") == 0);
  OK(MPI_Info_free(&used));
  OK(MPI_Comm_dup_with_info(dup, MPI_INFO_NULL, &dup3));
  OK(MPI_Comm_get_info(dup3, &used));
  CHECK(!value_of(used, "loom_test_key", val, sizeof val));
  OK(MPI_Info_free(&used));
  OK(MPI_Comm_free(&dup3));

  /* MPI_Comm_idup_with_info: a working communicator with the hints. */
  OK(MPI_Comm_idup_with_info(dup, info, &dup3, &req));
  OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  OK(MPI_Comm_get_info(dup3, &used));
  CHECK(!value_of(used, "loom_other", val, sizeof val));
  CHECK(value_of(used, "mpi_assert_no_any_source", val, sizeof val) && strcmp(val, "true") == 0);
  OK(MPI_Info_free(&used));
  v = 1;
  OK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, dup3));
  CHECK(v == size);
  OK(MPI_Comm_size(dup3, &n));
  CHECK(n == size);
  OK(MPI_Info_free(&info));

  /* Wrong arguments. */
  EXPECT(MPI_Comm_set_info(MPI_COMM_NULL, MPI_INFO_NULL), MPI_ERR_COMM);
  EXPECT(MPI_Comm_get_info(MPI_COMM_NULL, &used), MPI_ERR_COMM);
  EXPECT(MPI_Comm_get_info(dup, NULL), MPI_ERR_ARG);
  OK(MPI_Info_create(&info));
  used = info;
  OK(MPI_Info_free(&info));
  EXPECT(MPI_Comm_set_info(dup, used), MPI_ERR_INFO); /* freed */
  EXPECT(MPI_Comm_dup_with_info(dup, used, &dup2), MPI_ERR_INFO);
  EXPECT(MPI_Comm_dup_with_info(MPI_COMM_NULL, MPI_INFO_NULL, &dup2), MPI_ERR_COMM);
  EXPECT(MPI_Comm_idup_with_info(dup, MPI_INFO_NULL, &dup2, NULL), MPI_ERR_ARG);

  OK(MPI_Comm_free(&dup3));
  OK(MPI_Comm_free(&dup2));
  OK(MPI_Comm_free(&dup));
}

static void alloc_mem(void) {
  MPI_Info info;
  double* d = NULL;
  char* c = NULL;
  void* z = NULL;
  int i;
  OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &d));
  CHECK(d != NULL && ((uintptr_t)d % 64) == 0);
  for (i = 0; i < 1000; ++i) d[i] = i;
  CHECK(d[999] == 999.0);
  OK(MPI_Free_mem(d));
  OK(MPI_Info_create(&info));
  OK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096"));
  OK(MPI_Alloc_mem(10, info, &c));
  CHECK(c != NULL && ((uintptr_t)c % 4096) == 0);
  OK(MPI_Info_free(&info));
  OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &z));
  CHECK(z != NULL);
  OK(MPI_Free_mem(z));
  OK(MPI_Free_mem(NULL));
  EXPECT(MPI_Free_mem(c + 1), MPI_ERR_ARG);
  OK(MPI_Free_mem(c));
  EXPECT(MPI_Free_mem(c), MPI_ERR_ARG); /* twice */
  EXPECT(MPI_Alloc_mem(-1, MPI_INFO_NULL, &z), MPI_ERR_ARG);
  EXPECT(MPI_Alloc_mem(8, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Alloc_mem((MPI_Aint)(SIZE_MAX >> 2), MPI_INFO_NULL, &z), MPI_ERR_NO_MEM);
}

int main(int argc, char** argv) {
  int size;
  char* args[] = {argv[0], "one", "two", NULL};
  prog = "info_objects";
  (void)argc;

  /* Before MPI_Init: info calls work, errors are returned. */
  info_basics();
  info_errors();
  info_env(3, args, 0);

  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  info_basics();
  info_errors();
  info_env(3, args, 1);
  comm_hints(size);
  alloc_mem();
  OK(MPI_Finalize());

  /* After MPI_Finalize: still usable. */
  info_basics();
  passed();
  return 0;
}
