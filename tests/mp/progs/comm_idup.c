/* Nonblocking communicator duplication (MPI_Comm_idup, _with_info):
 * - it never blocks: rank 0 waits in MPI_Recv for every other rank before
 *   it calls MPI_Comm_idup, while the others call it first, then MPI_Ssend
 *   to rank 0, then MPI_Wait (an intracommunicator and an
 *   intercommunicator);
 * - several in flight at once, overlapping a blocking MPI_Comm_dup and an
 *   MPI_Comm_create_group, all end with distinct, isolated communicators;
 * - idups of two communicators with different roots (a dup and a split
 *   with reversed keys) in flight together;
 * - on an intercommunicator, an idup overlapping a blocking MPI_Comm_dup
 *   of it; and an idup of MPI_COMM_WORLD overlapping MPI_Intercomm_create;
 * - the attributes are copied when MPI_Comm_idup is called (as if
 *   MPI_Comm_dup ran then): changing the parent's before MPI_Wait does not
 *   change the copy;
 * - running out of context ids fails at the MPI_Wait of the idup that ran
 *   out, with MPI_ERR_INTERN, on every rank; freeing them makes room again. */
#include <stdint.h>
#include <stdlib.h>

#include "comm_checks.h"

static int me, np;

static int sum(MPI_Comm c, int v) {
  int s = 0;
  OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, c));
  return s;
}

/* The "late rank 0" pattern on `c` (intra or inter: rank 0 receives from
 * every rank of the remote group). */
static void late_leader(MPI_Comm c, int info) {
  int inter = 0, lrank, rsize, buf = 0;
  MPI_Comm n = MPI_COMM_NULL;
  MPI_Request r;
  MPI_Info in;
  OK(MPI_Comm_test_inter(c, &inter));
  OK(MPI_Comm_rank(c, &lrank));
  if (inter)
    OK(MPI_Comm_remote_size(c, &rsize));
  else
    OK(MPI_Comm_size(c, &rsize));
  OK(MPI_Info_create(&in));
  OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "true"));
  if (lrank == 0) {
    for (int i = 1; i < rsize; ++i) {
      OK(MPI_Recv(&buf, 1, MPI_INT, i, 5, c, MPI_STATUS_IGNORE));
      CHECK(buf == i);
    }
  }
  if (info)
    OK(MPI_Comm_idup_with_info(c, in, &n, &r));
  else
    OK(MPI_Comm_idup(c, &n, &r));
  if (lrank != 0) OK(MPI_Ssend(&lrank, 1, MPI_INT, 0, 5, c));
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(r == MPI_REQUEST_NULL && n != MPI_COMM_NULL);
  int res = MPI_UNEQUAL;
  OK(MPI_Comm_compare(c, n, &res));
  CHECK(res == MPI_CONGRUENT);
  if (!inter) CHECK(sum(n, lrank) == rsize * (rsize - 1) / 2);
  else {
    /* Each side's rank 0 swaps its side's size with the other's. */
    int lsize, other = -1;
    OK(MPI_Comm_size(n, &lsize));
    if (lrank == 0) {
      OK(MPI_Sendrecv(&lsize, 1, MPI_INT, 0, 9, &other, 1, MPI_INT, 0, 9, n, MPI_STATUS_IGNORE));
      CHECK(other == rsize);
    }
  }
  OK(MPI_Info_free(&in));
  OK(MPI_Comm_free(&n));
}

/* Three idups and a blocking dup and a create_group in between: messages
 * with one tag on each go to the right one. */
static void overlap(void) {
  MPI_Comm a, b, c, d, g;
  MPI_Request r[3];
  MPI_Group wg;
  OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r[0]));
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  OK(MPI_Comm_idup(MPI_COMM_WORLD, &b, &r[1]));
  if (me % 2) {
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 3, &g));
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r[2]));
  } else {
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r[2]));
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 3, &g));
  }
  OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
  MPI_Comm all[5] = {a, b, c, d, g};
  const int next = (me + 1) % np, prev = (me + np - 1) % np;
  MPI_Request s[5], q[5];
  int out[5], in[5];
  for (int i = 0; i < 5; ++i) {
    out[i] = 100 * i + me;
    in[i] = -1;
    OK(MPI_Isend(&out[i], 1, MPI_INT, next, 0, all[i], &s[i]));
  }
  for (int i = 4; i >= 0; --i) OK(MPI_Irecv(&in[i], 1, MPI_INT, prev, 0, all[i], &q[i]));
  OK(MPI_Waitall(5, s, MPI_STATUSES_IGNORE));
  OK(MPI_Waitall(5, q, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 5; ++i) CHECK(in[i] == 100 * i + prev);
  for (int i = 0; i < 5; ++i) OK(MPI_Comm_free(&all[i]));
  OK(MPI_Group_free(&wg));
}

/* Messages with one tag on each of `n` communicators reach the right one
 * (ring over each; intercommunicators: to the same rank of the other side
 * when it exists). */
static void isolated(MPI_Comm* cs, int n) {
  MPI_Request s[8], q[8];
  int out[8], in[8], from[8];
  for (int i = 0; i < n; ++i) {
    int inter = 0, sz, rk, rsz;
    OK(MPI_Comm_test_inter(cs[i], &inter));
    OK(MPI_Comm_rank(cs[i], &rk));
    OK(MPI_Comm_size(cs[i], &sz));
    if (inter) OK(MPI_Comm_remote_size(cs[i], &rsz));
    int to = inter ? (rk < rsz ? rk : MPI_PROC_NULL) : (rk + 1) % sz;
    from[i] = inter ? (rk < rsz ? rk : MPI_PROC_NULL) : (rk + sz - 1) % sz;
    out[i] = 1000 * i + me;
    in[i] = -1;
    OK(MPI_Isend(&out[i], 1, MPI_INT, to, 3, cs[i], &s[i]));
  }
  for (int i = n - 1; i >= 0; --i) OK(MPI_Irecv(&in[i], 1, MPI_INT, from[i], 3, cs[i], &q[i]));
  OK(MPI_Waitall(n, s, MPI_STATUSES_IGNORE));
  OK(MPI_Waitall(n, q, MPI_STATUSES_IGNORE));
  for (int i = 0; i < n; ++i) CHECK(from[i] == MPI_PROC_NULL || in[i] / 1000 == i);
}

static void differentRoots(void) {
  MPI_Comm c1, c2, a, b;
  MPI_Request r[2];
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
  OK(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &c2));
  for (int k = 0; k < 20; ++k) {
    OK(MPI_Comm_idup(c1, &a, &r[0]));
    OK(MPI_Comm_idup(c2, &b, &r[1]));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    MPI_Comm both[2] = {a, b};
    isolated(both, 2);
    OK(MPI_Comm_free(&a));
    OK(MPI_Comm_free(&b));
  }
  OK(MPI_Comm_free(&c1));
  OK(MPI_Comm_free(&c2));
}

static int copyPlusOne(MPI_Comm c, int k, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)k, (void)extra;
  *(void**)out = (void*)((intptr_t)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}

static void attributesAtCall(void) {
  int key;
  MPI_Comm n;
  MPI_Request r;
  void* v = NULL;
  int flag = 0;
  OK(MPI_Comm_create_keyval(copyPlusOne, MPI_COMM_NULL_DELETE_FN, &key, NULL));
  OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void*)(intptr_t)10));
  OK(MPI_Comm_idup(MPI_COMM_WORLD, &n, &r));
  OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void*)(intptr_t)20));
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  OK(MPI_Comm_get_attr(n, key, &v, &flag));
  CHECK(flag && (intptr_t)v == 11);
  OK(MPI_Comm_free(&n));
  OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
  OK(MPI_Comm_free_keyval(&key));
}

static void exhaustion(void) {
  enum { MAX = 10000 };
  MPI_Comm* cs = malloc(sizeof(MPI_Comm) * MAX);
  int n = 0, rc = MPI_SUCCESS, cls = -1;
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  for (; n < MAX; ++n) {
    MPI_Request r;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &cs[n], &r));
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) break;
  }
  CHECK(n < MAX && n > 1000);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_INTERN);
  CHECK(cs[n] == MPI_COMM_NULL);
  /* Every rank ran out at the same call. */
  int lo = 0, hi = 0;
  OK(MPI_Allreduce(&n, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  OK(MPI_Allreduce(&n, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  CHECK(lo == n && hi == n);
  /* The blocking form fails the same way. */
  MPI_Comm x;
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &x);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_INTERN);
  for (int i = 0; i < n; ++i) OK(MPI_Comm_free(&cs[i]));
  MPI_Request r;
  OK(MPI_Comm_idup(MPI_COMM_WORLD, &x, &r));
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(sum(x, 1) == np);
  OK(MPI_Comm_free(&x));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  free(cs);
}

int main(int argc, char** argv) {
  prog = "comm_idup";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  late_leader(MPI_COMM_WORLD, 0);
  late_leader(MPI_COMM_WORLD, 1);
  overlap();
  differentRoots();
  attributesAtCall();
  if (np >= 2) {
    MPI_Comm half, ic;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 77, &ic));
    /* A communicator on one side only, so that the sides' free ids differ. */
    MPI_Comm stagger = MPI_COMM_NULL;
    if (me % 2) OK(MPI_Comm_dup(half, &stagger));
    late_leader(ic, 0);
    /* An idup of a new intercommunicator (its first collective call)
     * overlapping a blocking dup of it, several times. */
    for (int k = 0; k < 5; ++k) {
      MPI_Comm ic3, a, b;
      MPI_Request r;
      OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 80 + k, &ic3));
      OK(MPI_Comm_idup(ic3, &a, &r));
      OK(MPI_Comm_dup(ic3, &b));
      OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      MPI_Comm all[3] = {ic3, a, b};
      isolated(all, 3);
      OK(MPI_Comm_free(&a));
      OK(MPI_Comm_free(&b));
      OK(MPI_Comm_free(&ic3));
    }
    /* An idup of MPI_COMM_WORLD overlapping MPI_Intercomm_create. */
    {
      MPI_Comm d, ic2;
      MPI_Request r;
      OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
      OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 78, &ic2));
      OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      MPI_Comm all[3] = {d, ic2, ic};
      isolated(all, 3);
      OK(MPI_Comm_free(&d));
      OK(MPI_Comm_free(&ic2));
    }
    if (stagger != MPI_COMM_NULL) OK(MPI_Comm_free(&stagger));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&half));
  }
  exhaustion();
  OK(MPI_Finalize());
  passed();
  return 0;
}
