/* Intercommunicators: MPI_Intercomm_create (the classic way: split WORLD,
 * peer WORLD) with two ways of splitting (even/odd ranks; rank 0 against the
 * rest, with a leader other than local rank 0), MPI_Intercomm_create_from_groups,
 * the queries, point-to-point with ANY_SOURCE and probes, MPI_Intercomm_merge
 * in both orders and with equal flags, dup/idup/compare/attributes/names/error
 * handlers, MPI_Comm_split and MPI_Comm_create on an intercommunicator, and
 * wrong arguments under MPI_ERRORS_RETURN. */
#include <string.h>

#include "comm_checks.h"

static int wsize;

/* The world ranks of an intercommunicator's side `s` for split kind `kind`. */
static int onSide(int kind, int r) { return kind == 0 ? r % 2 : (r == 0 ? 0 : 1); }
static int sideList(int kind, int s, int* out) {
  int n = 0;
  for (int r = 0; r < wsize; ++r)
    if (onSide(kind, r) == s) out[n++] = r;
  return n;
}

/* The world ranks behind a group, in group order. */
static void worldRanksOf(MPI_Group g, int* out, int* n) {
  MPI_Group wg;
  OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  OK(MPI_Group_size(g, n));
  int idx[64];
  for (int i = 0; i < *n; ++i) idx[i] = i;
  OK(MPI_Group_translate_ranks(g, *n, idx, wg, out));
  OK(MPI_Group_free(&wg));
}

/* Sizes, groups and point-to-point of intercomm `ic` whose local side holds
 * world ranks loc[0..nl) and remote side rem[0..nr). */
static void checkInter(MPI_Comm ic, const int* loc, int nl, const int* rem, int nr) {
  int flag = 0, size, rsize, rank;
  OK(MPI_Comm_test_inter(ic, &flag));
  CHECK(flag == 1);
  OK(MPI_Comm_size(ic, &size));
  OK(MPI_Comm_remote_size(ic, &rsize));
  OK(MPI_Comm_rank(ic, &rank));
  CHECK(size == nl && rsize == nr);
  CHECK(loc[rank] == wrank);
  int w[64], n;
  MPI_Group g;
  OK(MPI_Comm_remote_group(ic, &g));
  worldRanksOf(g, w, &n);
  CHECK(n == nr);
  for (int i = 0; i < n; ++i) CHECK(w[i] == rem[i]);
  OK(MPI_Group_free(&g));
  OK(MPI_Comm_group(ic, &g));
  worldRanksOf(g, w, &n);
  CHECK(n == nl);
  for (int i = 0; i < n; ++i) CHECK(w[i] == loc[i]);
  OK(MPI_Group_free(&g));

  /* Remote rank j sends its world rank to my side's rank j % nl. */
  MPI_Request sr;
  OK(MPI_Isend(&wrank, 1, MPI_INT, rank % nr, 7, ic, &sr));
  int expect = 0;
  for (int j = 0; j < nr; ++j)
    if (j % nl == rank) ++expect;
  int seen[64] = {0};
  for (int k = 0; k < expect; ++k) {
    MPI_Status st;
    int v = -1, flag2 = 0;
    OK(MPI_Probe(MPI_ANY_SOURCE, 7, ic, &st));
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nr && st.MPI_SOURCE % nl == rank);
    OK(MPI_Iprobe(st.MPI_SOURCE, 7, ic, &flag2, MPI_STATUS_IGNORE));
    CHECK(flag2);
    OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, ic, &st));
    CHECK(st.MPI_TAG == 7);
    CHECK(v == rem[st.MPI_SOURCE]);
    CHECK(!seen[st.MPI_SOURCE]);
    seen[st.MPI_SOURCE] = 1;
  }
  OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
  /* A blocking exchange with a named source: rank r with remote rank r. */
  if (rank < nr && rank < nl) {
    int v = -1;
    MPI_Status st;
    OK(MPI_Sendrecv(&wrank, 1, MPI_INT, rank, 8, &v, 1, MPI_INT, rank, 8, ic, &st));
    CHECK(v == rem[rank] && st.MPI_SOURCE == rank);
  }
  /* Wrong peers: remote ranks only. */
  CHECK(MPI_Send(&wrank, 1, MPI_INT, nr, 9, ic) == MPI_ERR_RANK);
  CHECK(MPI_Recv(&wrank, 1, MPI_INT, -5, 9, ic, MPI_STATUS_IGNORE) == MPI_ERR_RANK);
  OK(MPI_Send(&wrank, 1, MPI_INT, MPI_PROC_NULL, 9, ic));
}

/* The merged intracommunicator: `firstSide`'s world ranks first. */
static void checkMerged(MPI_Comm m, const int* first, int nf, const int* second, int ns) {
  int size, flag, w[64], n;
  OK(MPI_Comm_size(m, &size));
  CHECK(size == nf + ns);
  OK(MPI_Comm_test_inter(m, &flag));
  CHECK(flag == 0);
  MPI_Group g;
  OK(MPI_Comm_group(m, &g));
  worldRanksOf(g, w, &n);
  for (int i = 0; i < nf; ++i) CHECK(w[i] == first[i]);
  for (int i = 0; i < ns; ++i) CHECK(w[nf + i] == second[i]);
  OK(MPI_Group_free(&g));
  int sum = 0;
  OK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, m));
  CHECK(sum == wsize * (wsize - 1) / 2);
}

static int copies = 0;
static int copyFn(MPI_Comm c, int k, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)k, (void)extra;
  ++copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

static void oneKind(int kind) {
  const int side = onSide(kind, wrank);
  int loc[64], rem[64];
  const int nl = sideList(kind, side, loc), nr = sideList(kind, 1 - side, rem);
  MPI_Comm local, ic;
  OK(MPI_Comm_split(MPI_COMM_WORLD, side, 0, &local));
  /* Kind 1 leads from the last local rank; the remote leader is the other
   * side's leader in WORLD. */
  const int leader = kind == 0 ? 0 : nl - 1;
  const int remoteLeader = kind == 0 ? rem[0] : rem[nr - 1];
  OK(MPI_Intercomm_create(local, leader, MPI_COMM_WORLD, remoteLeader, 100 + kind, &ic));
  checkInter(ic, loc, nl, rem, nr);

  /* Merge: high on side 1 puts side 0 first, and the other way round; equal
   * flags put the side of world rank 0 first. */
  MPI_Comm m;
  OK(MPI_Intercomm_merge(ic, side == 1, &m));
  checkMerged(m, side == 0 ? loc : rem, side == 0 ? nl : nr, side == 0 ? rem : loc,
              side == 0 ? nr : nl);
  OK(MPI_Comm_free(&m));
  OK(MPI_Intercomm_merge(ic, side == 0, &m));
  checkMerged(m, side == 1 ? loc : rem, side == 1 ? nl : nr, side == 1 ? rem : loc,
              side == 1 ? nr : nl);
  OK(MPI_Comm_free(&m));
  OK(MPI_Intercomm_merge(ic, 1, &m));
  checkMerged(m, side == 0 ? loc : rem, side == 0 ? nl : nr, side == 0 ? rem : loc,
              side == 0 ? nr : nl);
  OK(MPI_Comm_free(&m));

  /* Dup, idup, compare, attributes, names, error handlers. */
  int key, result;
  OK(MPI_Comm_create_keyval(copyFn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
  OK(MPI_Comm_set_attr(ic, key, &wrank));
  OK(MPI_Comm_set_name(ic, "inter"));
  MPI_Comm d, d2;
  copies = 0;
  OK(MPI_Comm_dup(ic, &d));
  CHECK(copies == 1);
  void* v;
  int found;
  OK(MPI_Comm_get_attr(d, key, &v, &found));
  CHECK(found && v == &wrank);
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  OK(MPI_Comm_get_name(d, name, &len));
  CHECK(len == 0);
  OK(MPI_Comm_get_name(ic, name, &len));
  CHECK(strcmp(name, "inter") == 0);
  OK(MPI_Comm_compare(ic, ic, &result));
  CHECK(result == MPI_IDENT);
  OK(MPI_Comm_compare(ic, d, &result));
  CHECK(result == MPI_CONGRUENT);
  OK(MPI_Comm_compare(ic, local, &result));
  CHECK(result == MPI_UNEQUAL);
  MPI_Errhandler eh;
  OK(MPI_Comm_get_errhandler(d, &eh));
  CHECK(eh == MPI_ERRORS_RETURN);
  checkInter(d, loc, nl, rem, nr);
  MPI_Request req;
  OK(MPI_Comm_idup(d, &d2, &req));
  OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  checkInter(d2, loc, nl, rem, nr);
  OK(MPI_Comm_free(&d2));
  OK(MPI_Comm_free(&d));
  OK(MPI_Comm_delete_attr(ic, key));
  OK(MPI_Comm_free_keyval(&key));

  /* Split: color = local rank % 2, key = minus the local rank (reversed
   * order); MPI_COMM_NULL where the other side has no such color. */
  int rank;
  OK(MPI_Comm_rank(ic, &rank));
  MPI_Comm s;
  OK(MPI_Comm_split(ic, rank % 2, -rank, &s));
  int sl[64], sr[64], nsl = 0, nsr = 0;
  for (int i = nl - 1; i >= 0; --i)
    if (i % 2 == rank % 2) sl[nsl++] = loc[i];
  for (int i = nr - 1; i >= 0; --i)
    if (i % 2 == rank % 2) sr[nsr++] = rem[i];
  if (nsr == 0) {
    CHECK(s == MPI_COMM_NULL);
  } else {
    CHECK(s != MPI_COMM_NULL);
    checkInter(s, sl, nsl, sr, nsr);
    OK(MPI_Comm_free(&s));
  }
  OK(MPI_Comm_split(ic, MPI_UNDEFINED, 0, &s));
  CHECK(s == MPI_COMM_NULL);

  /* Create: each side drops its local rank 0 where it has more than one. */
  MPI_Group lg, sub;
  OK(MPI_Comm_group(ic, &lg));
  int zero = 0;
  if (nl > 1)
    OK(MPI_Group_excl(lg, 1, &zero, &sub));
  else
    OK(MPI_Group_incl(lg, 1, &zero, &sub));
  OK(MPI_Comm_create(ic, sub, &s));
  if (nl > 1 && rank == 0) {
    CHECK(s == MPI_COMM_NULL);
  } else {
    CHECK(s != MPI_COMM_NULL);
    const int* cl = nl > 1 ? loc + 1 : loc;
    const int* cr = nr > 1 ? rem + 1 : rem;
    checkInter(s, cl, nl > 1 ? nl - 1 : 1, cr, nr > 1 ? nr - 1 : 1);
    OK(MPI_Comm_free(&s));
  }
  OK(MPI_Group_free(&sub));
  OK(MPI_Group_free(&lg));

  /* split_type on an intercommunicator: the local pieces of one node, with
   * the remote pieces of the same node (one node here: both whole sides). */
  {
    int nl, nr, ln, rn;
    OK(MPI_Comm_size(ic, &nl));
    OK(MPI_Comm_remote_size(ic, &nr));
    OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &s));
    CHECK(s != MPI_COMM_NULL);
    int inter = 0;
    OK(MPI_Comm_test_inter(s, &inter));
    CHECK(inter);
    OK(MPI_Comm_size(s, &ln));
    OK(MPI_Comm_remote_size(s, &rn));
    CHECK(ln == nl && rn == nr);
    OK(MPI_Comm_free(&s));
    OK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &s));
    CHECK(s == MPI_COMM_NULL);
  }

  /* Wrong arguments. */
  CHECK(MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, remoteLeader, 5, &s) == MPI_ERR_COMM);
  CHECK(MPI_Comm_create_group(ic, MPI_GROUP_EMPTY, 0, &s) == MPI_ERR_COMM);
  /* Both leaders name a remote leader outside WORLD: both sides fail. */
  CHECK(MPI_Intercomm_create(local, leader, MPI_COMM_WORLD, wsize + 3, 5, &s) == MPI_ERR_RANK);

  OK(MPI_Comm_free(&ic));
  OK(MPI_Comm_free(&local));
}

/* The sessions model's constructor, from two groups of WORLD. */
static void fromGroups(void) {
  const int side = wrank % 2;
  int loc[64], rem[64];
  const int nl = sideList(0, side, loc), nr = sideList(0, 1 - side, rem);
  MPI_Group wg, lg, rg;
  OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  OK(MPI_Group_incl(wg, nl, loc, &lg));
  OK(MPI_Group_incl(wg, nr, rem, &rg));
  MPI_Comm ic;
  OK(MPI_Intercomm_create_from_groups(lg, nl - 1, rg, nr - 1, "loom-inter-test", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &ic));
  checkInter(ic, loc, nl, rem, nr);
  MPI_Errhandler eh;
  OK(MPI_Comm_get_errhandler(ic, &eh));
  CHECK(eh == MPI_ERRORS_RETURN);
  OK(MPI_Comm_free(&ic));
  CHECK(MPI_Intercomm_create_from_groups(lg, nl, rg, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                         &ic) == MPI_ERR_RANK);
  CHECK(MPI_Intercomm_create_from_groups(lg, 0, rg, -1, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                         &ic) == MPI_ERR_RANK);
  CHECK(MPI_Intercomm_create_from_groups(rg, 0, lg, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                         &ic) == MPI_ERR_GROUP);
  OK(MPI_Group_free(&lg));
  OK(MPI_Group_free(&rg));
  OK(MPI_Group_free(&wg));
}

int main(int argc, char** argv) {
  prog = "inter_comm";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

  /* What works on any communicator. */
  int flag = 1, n;
  MPI_Comm c;
  MPI_Group g;
  OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
  CHECK(flag == 0);
  CHECK(MPI_Comm_remote_size(MPI_COMM_WORLD, &n) == MPI_ERR_COMM);
  CHECK(MPI_Comm_remote_group(MPI_COMM_WORLD, &g) == MPI_ERR_COMM);
  CHECK(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c) == MPI_ERR_COMM);
  CHECK(MPI_Intercomm_create(MPI_COMM_WORLD, -1, MPI_COMM_WORLD, 0, 0, &c) == MPI_ERR_RANK);
  CHECK(MPI_Intercomm_create(MPI_COMM_WORLD, wsize, MPI_COMM_WORLD, 0, 0, &c) == MPI_ERR_RANK);
  CHECK(MPI_Intercomm_create(MPI_COMM_NULL, 0, MPI_COMM_WORLD, 0, 0, &c) == MPI_ERR_COMM);

  if (wsize >= 2) {
    oneKind(0);
    oneKind(1);
    fromGroups();
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  passed();
  OK(MPI_Finalize());
  return 0;
}
