/* comm_errors: bad input to the communicator, group and attribute calls
 * gets the right error class under MPI_ERRORS_RETURN, and nothing hangs.
 * Every erroneous call is made identically by every rank (collective calls
 * with bad arguments fail before communicating). */
#include <string.h>

#include "comm_checks.h"

static void expect(int rc, int cls, int line) {
  int c = -1;
  ++checks;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
  if (c != cls) {
    fprintf(stderr, "comm_errors: rank %d: line %d: got error %d (class %d), expected %d\n", wrank,
            line, rc, c, cls);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
#define EXPECT(call, cls) expect((call), (cls), __LINE__)

int main(int argc, char** argv) {
  int size, n, flag, res, k;
  MPI_Comm c, stale;
  MPI_Group wg, g;
  void* v;
  char name[MPI_MAX_OBJECT_NAME];
  prog = "comm_errors";

  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

  /* MPI_ERR_COMM */
  EXPECT(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM);
  EXPECT(MPI_Comm_split(MPI_COMM_NULL, 0, 0, &c), MPI_ERR_COMM);
  EXPECT(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &res), MPI_ERR_COMM);
  EXPECT(MPI_Comm_group(MPI_COMM_NULL, &g), MPI_ERR_COMM);
  EXPECT(MPI_Comm_set_name(MPI_COMM_NULL, "x"), MPI_ERR_COMM);
  EXPECT(MPI_Comm_test_inter(MPI_COMM_NULL, &flag), MPI_ERR_COMM);
  c = MPI_COMM_WORLD;
  EXPECT(MPI_Comm_free(&c), MPI_ERR_COMM);
  c = MPI_COMM_SELF;
  EXPECT(MPI_Comm_free(&c), MPI_ERR_COMM);
  c = MPI_COMM_NULL;
  EXPECT(MPI_Comm_free(&c), MPI_ERR_COMM);
  EXPECT(MPI_Comm_set_attr(MPI_COMM_NULL, MPI_TAG_UB, NULL), MPI_ERR_COMM);
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  stale = c;
  OK(MPI_Comm_free(&c));
  EXPECT(MPI_Comm_size(stale, &n), MPI_ERR_COMM);
  EXPECT(MPI_Comm_free(&stale), MPI_ERR_COMM);

  /* MPI_ERR_ARG */
  EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c), MPI_ERR_ARG);
  EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
  EXPECT(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Comm_set_name(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Comm_get_name(MPI_COMM_WORLD, NULL, &n), MPI_ERR_ARG);
  EXPECT(MPI_Comm_get_name(MPI_COMM_WORLD, name, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Comm_free(NULL), MPI_ERR_ARG);
  EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL),
         MPI_ERR_ARG);
  OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  EXPECT(MPI_Group_incl(wg, -1, NULL, &g), MPI_ERR_ARG);
  {
    int ranges[1][3] = {{0, size - 1, 0}};
    EXPECT(MPI_Group_range_incl(wg, 1, ranges, &g), MPI_ERR_ARG);
    if (size > 1) {
      int away[1][3] = {{size - 1, 0, 1}};
      EXPECT(MPI_Group_range_excl(wg, 1, away, &g), MPI_ERR_ARG);
    }
  }
  EXPECT(MPI_Group_size(wg, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Group_free(NULL), MPI_ERR_ARG);

  /* MPI_ERR_RANK */
  {
    int bad = size, dupl[2] = {0, 0}, neg = -1, out;
    EXPECT(MPI_Group_incl(wg, 1, &bad, &g), MPI_ERR_RANK);
    EXPECT(MPI_Group_incl(wg, 2, dupl, &g), MPI_ERR_RANK);
    EXPECT(MPI_Group_excl(wg, 1, &neg, &g), MPI_ERR_RANK);
    EXPECT(MPI_Group_translate_ranks(wg, 1, &bad, wg, &out), MPI_ERR_RANK);
    int ranges[1][3] = {{0, size, 1}};
    EXPECT(MPI_Group_range_incl(wg, 1, ranges, &g), MPI_ERR_RANK);
  }

  /* MPI_ERR_GROUP */
  EXPECT(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
  EXPECT(MPI_Group_rank(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
  EXPECT(MPI_Group_union(wg, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
  EXPECT(MPI_Group_compare(MPI_GROUP_NULL, wg, &res), MPI_ERR_GROUP);
  EXPECT(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
  g = MPI_GROUP_NULL;
  EXPECT(MPI_Group_free(&g), MPI_ERR_GROUP);
  {
    MPI_Group fresh, stale_g;
    OK(MPI_Group_incl(wg, 1, &(int){0}, &fresh));
    stale_g = fresh;
    OK(MPI_Group_free(&fresh));
    CHECK(fresh == MPI_GROUP_NULL);
    EXPECT(MPI_Group_size(stale_g, &n), MPI_ERR_GROUP);
  }
  if (size > 1) {
    /* A group with members outside the communicator. */
    MPI_Comm half;
    OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, 0, &half));
    OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
    EXPECT(MPI_Comm_create(half, wg, &c), MPI_ERR_GROUP);
    OK(MPI_Comm_free(&half));
  }

  /* MPI_ERR_KEYVAL */
  EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, 99999, &v, &flag), MPI_ERR_KEYVAL);
  EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
  EXPECT(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
  EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL), MPI_ERR_KEYVAL);
  k = MPI_TAG_UB;
  EXPECT(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL);
  OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
  {
    int stale_k = k;
    OK(MPI_Comm_free_keyval(&k));
    CHECK(k == MPI_KEYVAL_INVALID);
    EXPECT(MPI_Comm_free_keyval(&stale_k), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, stale_k, NULL), MPI_ERR_KEYVAL);
  }

  /* After all that, the communicators still work. */
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  OK(MPI_Comm_size(c, &n));
  CHECK(n == size);
  OK(MPI_Comm_free(&c));
  OK(MPI_Group_free(&wg));

  passed();
  OK(MPI_Finalize());
  return 0;
}
