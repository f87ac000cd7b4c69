/* comm_split: the communicator constructors (dup, idup, split, split_type,
 * create), compare, groups of communicators, names, and a message on every
 * new communicator to show it works. Any rank count. */
#include <string.h>

#include "comm_checks.h"

/* Each rank sends its world rank to the next one in `comm` and checks what
 * the previous one sent. */
static void ring(MPI_Comm comm, int tag) {
  int r, n, got = -1, mine = wrank;
  MPI_Request req;
  OK(MPI_Comm_rank(comm, &r));
  OK(MPI_Comm_size(comm, &n));
  OK(MPI_Isend(&mine, 1, MPI_INT, (r + 1) % n, tag, comm, &req));
  OK(MPI_Recv(&got, 1, MPI_INT, (r + n - 1) % n, tag, comm, MPI_STATUS_IGNORE));
  OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  /* The previous rank in comm, as a world rank. */
  MPI_Group g, wg;
  int prev = (r + n - 1) % n, wprev;
  OK(MPI_Comm_group(comm, &g));
  OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  OK(MPI_Group_translate_ranks(g, 1, &prev, wg, &wprev));
  CHECK(got == wprev);
  OK(MPI_Group_free(&g));
  OK(MPI_Group_free(&wg));
}

int main(int argc, char** argv) {
  int size, r, n, res, len, flag;
  char name[MPI_MAX_OBJECT_NAME];
  MPI_Comm dup, c, c2;
  MPI_Group wg, g, g2;
  prog = "comm_split";

  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

  /* Names of the predefined communicators; dup does not inherit names. */
  OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
  OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
  CHECK(strcmp(name, "MPI_COMM_SELF") == 0);
  OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len)); /* MPI 4.1: the null handle's name */
  CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == (int)strlen(name));

  /* dup */
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK(dup != MPI_COMM_WORLD && dup != MPI_COMM_NULL);
  OK(MPI_Comm_rank(dup, &r));
  OK(MPI_Comm_size(dup, &n));
  CHECK(r == wrank && n == size);
  OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
  CHECK(res == MPI_CONGRUENT);
  OK(MPI_Comm_compare(dup, dup, &res));
  CHECK(res == MPI_IDENT);
  OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
  CHECK(res == MPI_IDENT);
  OK(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res));
  CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL));
  OK(MPI_Comm_get_name(dup, name, &len));
  CHECK(len == 0 && name[0] == '\0');
  OK(MPI_Comm_set_name(dup, "my duplicate"));
  OK(MPI_Comm_get_name(dup, name, &len));
  CHECK(strcmp(name, "my duplicate") == 0 && len == 12);
  {
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    OK(MPI_Comm_set_name(dup, longname));
    OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len);
  }
  OK(MPI_Comm_test_inter(dup, &flag));
  CHECK(flag == 0);
  ring(dup, 1);

  /* A dup of a dup, and the error handler travels with it. */
  OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  OK(MPI_Comm_dup(dup, &c));
  {
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
  }
  OK(MPI_Comm_compare(dup, c, &res));
  CHECK(res == MPI_CONGRUENT);
  ring(c, 2);
  OK(MPI_Comm_free(&c));
  CHECK(c == MPI_COMM_NULL);

  /* idup: completes (possibly at once) through MPI_Wait. */
  {
    MPI_Request req;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL);
    OK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
    CHECK(res == MPI_CONGRUENT);
    ring(c, 3);
    OK(MPI_Comm_free(&c));
  }

  /* split: three colors, keys reversing the order within each. */
  OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 3, -wrank, &c));
  OK(MPI_Comm_size(c, &n));
  OK(MPI_Comm_rank(c, &r));
  {
    int members = 0, above = 0;
    for (int i = 0; i < size; ++i)
      if (i % 3 == wrank % 3) {
        ++members;
        if (i > wrank) ++above;
      }
    CHECK(n == members);
    CHECK(r == above);
  }
  ring(c, 4);
  /* Same key everywhere: parent order. */
  OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, 7, &c2));
  OK(MPI_Comm_rank(c2, &r));
  CHECK(r == wrank / 2);
  {
    /* c holds the ranks = wrank mod 3 in reverse, c2 those = wrank mod 2. */
    int same = 1, count = 0;
    for (int i = 0; i < size; ++i) {
      if ((i % 3 == wrank % 3) != (i % 2 == wrank % 2)) same = 0;
      if (i % 3 == wrank % 3) ++count;
    }
    OK(MPI_Comm_compare(c, c2, &res));
    CHECK(res == (!same ? MPI_UNEQUAL : count > 1 ? MPI_SIMILAR : MPI_CONGRUENT));
  }
  ring(c2, 5);
  OK(MPI_Comm_free(&c2));
  OK(MPI_Comm_free(&c));

  /* Reversed world: similar (congruent with one rank). */
  OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &c));
  OK(MPI_Comm_rank(c, &r));
  CHECK(r == size - 1 - wrank);
  OK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
  CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR));
  ring(c, 6);
  OK(MPI_Comm_free(&c));

  /* MPI_UNDEFINED: odd ranks get no communicator. */
  OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2 ? MPI_UNDEFINED : 5, 0, &c));
  if (wrank % 2) {
    CHECK(c == MPI_COMM_NULL);
  } else {
    OK(MPI_Comm_size(c, &n));
    CHECK(n == (size + 1) / 2);
    ring(c, 7);
    OK(MPI_Comm_free(&c));
  }
  /* Everyone undefined. */
  OK(MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &c));
  CHECK(c == MPI_COMM_NULL);

  /* split of a split: the second level sees the first's ranks. */
  OK(MPI_Comm_split(MPI_COMM_WORLD, wrank < size / 2, wrank, &c));
  OK(MPI_Comm_rank(c, &r));
  OK(MPI_Comm_split(c, r % 2, -r, &c2));
  ring(c2, 8);
  OK(MPI_Comm_free(&c2));
  OK(MPI_Comm_free(&c));

  /* split_type shared: the tests run on one node, so everyone. */
  OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -wrank, MPI_INFO_NULL, &c));
  OK(MPI_Comm_size(c, &n));
  OK(MPI_Comm_rank(c, &r));
  CHECK(n == size && r == size - 1 - wrank);
  ring(c, 9);
  OK(MPI_Comm_free(&c));
  OK(MPI_Comm_split_type(MPI_COMM_WORLD, wrank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                         MPI_INFO_NULL, &c));
  if (wrank == 0) {
    CHECK(c == MPI_COMM_NULL);
  } else {
    OK(MPI_Comm_size(c, &n));
    CHECK(n == size - 1);
    OK(MPI_Comm_free(&c));
  }

  /* Guided split types: mpi_shared_memory is the node; anything else or no
   * info gives MPI_COMM_NULL. */
  {
    MPI_Info hint;
    OK(MPI_Info_create(&hint));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hint, &c));
    CHECK(c == MPI_COMM_NULL);
    OK(MPI_Info_set(hint, "mpi_hw_resource_type", "no-such-resource"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, hint, &c));
    CHECK(c == MPI_COMM_NULL);
    OK(MPI_Info_set(hint, "mpi_hw_resource_type", "mpi_shared_memory"));
    for (int t = 0; t < 2; ++t) {
      OK(MPI_Comm_split_type(MPI_COMM_WORLD,
                             t ? MPI_COMM_TYPE_RESOURCE_GUIDED : MPI_COMM_TYPE_HW_GUIDED, wrank,
                             hint, &c));
      CHECK(c != MPI_COMM_NULL);
      OK(MPI_Comm_size(c, &n));
      CHECK(n == size);
      OK(MPI_Comm_free(&c));
    }
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, hint, &c));
    CHECK(c == MPI_COMM_NULL);
    OK(MPI_Info_free(&hint));
  }

  /* Groups of communicators. */
  OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  OK(MPI_Group_size(wg, &n));
  OK(MPI_Group_rank(wg, &r));
  CHECK(n == size && r == wrank);
  OK(MPI_Comm_group(dup, &g));
  OK(MPI_Group_compare(wg, g, &res));
  CHECK(res == MPI_IDENT);
  OK(MPI_Group_free(&g));
  CHECK(g == MPI_GROUP_NULL);

  /* create: even ranks, in reverse order. */
  {
    int evens[64], ne = 0;
    for (int i = size - 1; i >= 0; --i)
      if (i % 2 == 0) evens[ne++] = i;
    OK(MPI_Group_incl(wg, ne, evens, &g));
    OK(MPI_Group_size(g, &n));
    CHECK(n == ne);
    OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (wrank % 2) {
      CHECK(c == MPI_COMM_NULL);
    } else {
      OK(MPI_Comm_rank(c, &r));
      CHECK(evens[r] == wrank);
      OK(MPI_Comm_group(c, &g2));
      OK(MPI_Group_compare(g, g2, &res));
      CHECK(res == MPI_IDENT);
      OK(MPI_Group_free(&g2));
      ring(c, 10);
      OK(MPI_Comm_free(&c));
    }
    OK(MPI_Group_free(&g));
    /* The whole world group: congruent with MPI_COMM_WORLD. */
    OK(MPI_Comm_create(MPI_COMM_WORLD, wg, &c));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
    CHECK(res == MPI_CONGRUENT);
    OK(MPI_Comm_free(&c));
    /* The empty group: nobody is a member. */
    OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL);
    /* create from a dup, with a group given in world terms. */
    OK(MPI_Group_excl(wg, 1, &(int){size - 1}, &g));
    OK(MPI_Comm_create(dup, g, &c));
    if (wrank == size - 1) {
      CHECK(c == MPI_COMM_NULL);
    } else {
      OK(MPI_Comm_size(c, &n));
      CHECK(n == size - 1);
      ring(c, 11);
      OK(MPI_Comm_free(&c));
    }
    OK(MPI_Group_free(&g));
  }

  /* Group algebra through the API. */
  {
    int ranges[1][3] = {{size - 1, 0, -2}};
    int out[64], in[64];
    OK(MPI_Group_range_incl(wg, 1, ranges, &g));
    OK(MPI_Group_size(g, &n));
    CHECK(n == (size + 1) / 2);
    for (int i = 0; i < n; ++i) in[i] = i;
    OK(MPI_Group_translate_ranks(g, n, in, wg, out));
    for (int i = 0; i < n; ++i) CHECK(out[i] == size - 1 - 2 * i);
    OK(MPI_Group_range_excl(wg, 1, ranges, &g2));
    {
      MPI_Group u, x, d;
      int nu, nx, nd;
      OK(MPI_Group_union(g, g2, &u));
      OK(MPI_Group_intersection(g, g2, &x));
      OK(MPI_Group_difference(wg, g, &d));
      OK(MPI_Group_size(u, &nu));
      OK(MPI_Group_size(x, &nx));
      OK(MPI_Group_size(d, &nd));
      CHECK(nu == size && nx == 0 && x == MPI_GROUP_EMPTY);
      OK(MPI_Group_compare(u, wg, &res));
      CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR));
      OK(MPI_Group_compare(d, g2, &res));
      CHECK(res == MPI_IDENT);
      CHECK(nd == size - n);
      OK(MPI_Group_free(&u));
      OK(MPI_Group_free(&x));
      OK(MPI_Group_free(&d));
    }
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&g2));
    OK(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    CHECK(n == 0);
    OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK(r == MPI_UNDEFINED);
  }

  /* The world group stays valid after its communicator's dup is freed. */
  OK(MPI_Comm_group(dup, &g));
  OK(MPI_Comm_free(&dup));
  OK(MPI_Group_size(g, &n));
  CHECK(n == size);
  OK(MPI_Group_free(&g));
  OK(MPI_Group_free(&wg));

  passed();
  OK(MPI_Finalize());
  return 0;
}
