/* One-sided communication, the basics, with fence synchronization.
 *
 * Every window flavor (MPI_Win_create with disp_unit 1, 4, 8 and one that
 * differs between ranks, MPI_Win_allocate, MPI_Win_create_dynamic with
 * attach/detach and absolute displacements from MPI_Get_address exchanged
 * by allgather, and the MPI 4 large-count MPI_Win_create_c /
 * MPI_Win_allocate_c) carries the same traffic: Put to the ring neighbour,
 * Put and Get from every rank to every rank, count 0 and MPI_PROC_NULL
 * operations; its attributes (MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT,
 * MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL) are checked. Then derived datatypes
 * on either side (vector, hvector, indexed, indexed_block, contiguous,
 * different origin and target types with the same signature), MPI_Put_c
 * and MPI_Get_c; then the window object: group, name, info, user keyvals
 * (the delete callback on replace, delete and MPI_Win_free after
 * MPI_Win_free_keyval) and error handlers (create, set, get, call).
 * Runs at any size, as a singleton too. */
#include "rma_checks.h"

static int me, np, next, prev;
enum { K = 8 }; /* ints in a slot; a window holds np slots, one per rank */

typedef struct {
  MPI_Win win;
  int* buf;       /* the local window memory: np * K ints */
  int dyn;        /* a dynamic window: displacements are addresses */
  MPI_Aint* base; /* dynamic: every rank's buf address */
  int* du;        /* every rank's disp_unit */
  const char* what;
} W;

static MPI_Aint disp(const W* w, int t, MPI_Aint bytes) {
  if (w->dyn) return MPI_Aint_add(w->base[t], bytes);
  return bytes / w->du[t];
}

static MPI_Aint slot(int s) {
  return (MPI_Aint)s * K * (MPI_Aint)sizeof(int);
}

/* Ring Put, all-to-all Put and Get, count 0, MPI_PROC_NULL, in fence
 * epochs. A window holds np + 1 slots. */
static void traffic(W* w) {
  int* b = w->buf; /* slots 0..np-1: all to all; slot np: the ring */
  int src[K], want[K];
  int* got = malloc(sizeof(int) * (size_t)np * K);
  for (int i = 0; i < (np + 1) * K; ++i) b[i] = -1;
  OK(MPI_Win_fence(0, w->win));
  /* Ring: the ring slot at next. (A slot of its own: the next epoch's
   * Puts may land while this one's result is read.) */
  for (int i = 0; i < K; ++i) src[i] = me * 1000 + i;
  OK(MPI_Put(src, K, MPI_INT, next, disp(w, next, slot(np)), K, MPI_INT, w->win));
  OK(MPI_Win_fence(0, w->win));
  for (int i = 0; i < K; ++i) want[i] = prev * 1000 + i;
  EQA(w->what, b + np * K, want, K);
  /* All to all: my slot at every rank. */
  int* all = malloc(sizeof(int) * (size_t)np * K);
  for (int t = 0; t < np; ++t) {
    for (int i = 0; i < K; ++i) all[t * K + i] = me * 10000 + t * 100 + i;
    OK(MPI_Put(all + t * K, K, MPI_INT, t, disp(w, t, slot(me)), K, MPI_INT, w->win));
  }
  /* Count 0 and MPI_PROC_NULL move nothing. */
  OK(MPI_Put(src, 0, MPI_INT, next, disp(w, next, 0), 0, MPI_INT, w->win));
  OK(MPI_Put(src, K, MPI_INT, MPI_PROC_NULL, 0, K, MPI_INT, w->win));
  OK(MPI_Win_fence(0, w->win));
  for (int s = 0; s < np; ++s) {
    for (int i = 0; i < K; ++i) want[i] = s * 10000 + me * 100 + i;
    EQA(w->what, b + s * K, want, K);
  }
  /* Get from every rank the slot that rank me+1 wrote there. */
  int from = (me + 1) % np;
  for (int i = 0; i < np * K; ++i) got[i] = -2;
  for (int t = 0; t < np; ++t)
    OK(MPI_Get(got + t * K, K, MPI_INT, t, disp(w, t, slot(from)), K, MPI_INT, w->win));
  OK(MPI_Get(src, 0, MPI_INT, prev, disp(w, prev, 0), 0, MPI_INT, w->win));
  OK(MPI_Get(src, K, MPI_INT, MPI_PROC_NULL, 0, K, MPI_INT, w->win));
  OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));
  for (int t = 0; t < np; ++t) {
    for (int i = 0; i < K; ++i) want[i] = from * 10000 + t * 100 + i;
    EQA(w->what, got + t * K, want, K);
  }
  for (int i = 0; i < K; ++i) EQ(src[i], me * 1000 + i); /* count 0, PROC_NULL Gets */
  free(all);
  free(got);
}

static void attrs(MPI_Win win, void* base, MPI_Aint size, int du, int flavor) {
  void* b = (void*)&b;
  MPI_Aint* s = NULL;
  int *d = NULL, *f = NULL, *m = NULL, flag = 0;
  OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
  if (flag && b != base)
    fprintf(stderr, "rma_basic: rank %d: MPI_WIN_BASE is %p, expected %p\n", me, b, base);
  CHECK(flag && b == base);
  flag = 0;
  OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag));
  CHECK(flag && s);
  EQ(*s, size);
  flag = 0;
  OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &d, &flag));
  CHECK(flag && d);
  EQ(*d, du);
  flag = 0;
  OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
  CHECK(flag && f);
  EQ(*f, flavor);
  flag = 0;
  OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &m, &flag));
  CHECK(flag && m);
  EQ(*m, MPI_WIN_UNIFIED);
}

static void allDu(W* w, int mine) {
  w->du = malloc(sizeof(int) * (size_t)np);
  OK(MPI_Allgather(&mine, 1, MPI_INT, w->du, 1, MPI_INT, MPI_COMM_WORLD));
}

static void created(int du, const char* what) {
  W w = {0};
  w.what = what;
  MPI_Aint size = slot(np + 1);
  w.buf = malloc((size_t)size);
  OK(MPI_Win_create(w.buf, size, du, MPI_INFO_NULL, MPI_COMM_WORLD, &w.win));
  OK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
  allDu(&w, du);
  attrs(w.win, w.buf, size, du, MPI_WIN_FLAVOR_CREATE);
  traffic(&w);
  OK(MPI_Win_free(&w.win));
  CHECK(w.win == MPI_WIN_NULL);
  free(w.buf);
  free(w.du);
}

/* pad: bytes past the slots, which make sizes differ by rank and not be
 * multiples of 16. */
static void allocated(int pad, const char* what) {
  W w = {0};
  w.what = what;
  MPI_Aint size = slot(np + 1) + pad;
  OK(MPI_Win_allocate(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w.buf, &w.win));
  CHECK(w.buf != NULL);
  OK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
  allDu(&w, 4);
  attrs(w.win, w.buf, size, 4, MPI_WIN_FLAVOR_ALLOCATE);
  traffic(&w);
  OK(MPI_Win_free(&w.win));
  free(w.du);
}

static void dynamic(void) {
  W w = {0};
  w.what = "MPI_Win_create_dynamic";
  w.dyn = 1;
  MPI_Aint size = slot(np + 1);
  OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w.win));
  OK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
  attrs(w.win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
  /* Two regions attached; the second detached again before any traffic,
   * the first carries it. */
  int* extra = malloc(64);
  w.buf = malloc((size_t)size);
  OK(MPI_Win_attach(w.win, extra, 64));
  OK(MPI_Win_attach(w.win, w.buf, size));
  OK(MPI_Win_detach(w.win, extra));
  MPI_Aint mine;
  OK(MPI_Get_address(w.buf, &mine));
  w.base = malloc(sizeof(MPI_Aint) * (size_t)np);
  OK(MPI_Allgather(&mine, 1, MPI_AINT, w.base, 1, MPI_AINT, MPI_COMM_WORLD));
  EQ(w.base[me], mine);
  allDu(&w, 1);
  traffic(&w);
  OK(MPI_Win_detach(w.win, w.buf));
  OK(MPI_Win_free(&w.win));
  free(w.buf);
  free(extra);
  free(w.base);
  free(w.du);
}

/* disp_unit 1, 4 or 8 by rank: the target's unit scales the displacement. */
static void mixedUnits(void) {
  static const int units[3] = {1, 4, 8};
  created(units[me % 3], "MPI_Win_create, disp_unit by rank");
}

#if MPI_VERSION >= 4
static void largeCount(void) {
  W w = {0};
  w.what = "MPI_Win_allocate_c";
  MPI_Aint size = slot(np + 1);
  OK(MPI_Win_allocate_c(size, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &w.buf, &w.win));
  OK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
  allDu(&w, 8);
  attrs(w.win, w.buf, size, 8, MPI_WIN_FLAVOR_ALLOCATE);
  traffic(&w);
  OK(MPI_Win_free(&w.win));
  free(w.du);

  w.what = "MPI_Win_create_c";
  w.buf = malloc((size_t)size);
  OK(MPI_Win_create_c(w.buf, size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w.win));
  OK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
  allDu(&w, 4);
  attrs(w.win, w.buf, size, 4, MPI_WIN_FLAVOR_CREATE);
  traffic(&w);
  OK(MPI_Win_free(&w.win));
  free(w.buf);
  free(w.du);
}
#endif

/* Derived datatypes: each case one fence epoch, a Put (or Get) to (from)
 * next, the whole target memory checked against what must have changed. */
enum { T = 64, KEEP = 40 }; /* window ints; [KEEP, T) is only read */
static int tb[T], want[T], src[32];

static void resetTarget(void) {
  for (int i = 0; i < KEEP; ++i) tb[i] = -1;
  for (int i = KEEP; i < T; ++i) tb[i] = me * 1000 + 500 + i;
  for (int i = 0; i < T; ++i) want[i] = tb[i];
}

static void expectFromPrev(int at, const int* idx, int n) {
  for (int j = 0; j < n; ++j) want[at + j] = prev * 1000 + idx[j];
}

static void datatypes(void) {
  MPI_Win win;
  MPI_Datatype vec2, vec3, idx, cont3, hvec, iblock, vec5, oidx;
  OK(MPI_Win_create(tb, sizeof tb, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  for (int i = 0; i < 32; ++i) src[i] = me * 1000 + i;
  OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec2));
  OK(MPI_Type_vector(4, 1, 3, MPI_INT, &vec3));
  int bl[3] = {2, 1, 3}, dl[3] = {0, 5, 9};
  OK(MPI_Type_indexed(3, bl, dl, MPI_INT, &idx));
  OK(MPI_Type_contiguous(3, MPI_INT, &cont3));
  OK(MPI_Type_create_hvector(3, 2, 4 * (MPI_Aint)sizeof(int), MPI_INT, &hvec));
  int ib[3] = {0, 4, 8};
  OK(MPI_Type_create_indexed_block(3, 2, ib, MPI_INT, &iblock));
  OK(MPI_Type_vector(5, 1, 2, MPI_INT, &vec5));
  int obl[2] = {1, 4}, odl[2] = {0, 10};
  OK(MPI_Type_indexed(2, obl, odl, MPI_INT, &oidx));
  MPI_Datatype all[8] = {vec2, vec3, idx, cont3, hvec, iblock, vec5, oidx};
  for (int i = 0; i < 8; ++i) OK(MPI_Type_commit(&all[i]));
  vec2 = all[0], vec3 = all[1], idx = all[2], cont3 = all[3];
  hvec = all[4], iblock = all[5], vec5 = all[6], oidx = all[7];

  /* a: origin vector (every other int), target 4 contiguous ints. */
  resetTarget();
  OK(MPI_Win_fence(0, win));
  OK(MPI_Put(src, 1, vec2, next, 0, 4, MPI_INT, win));
  OK(MPI_Win_fence(0, win));
  expectFromPrev(0, (int[]){0, 2, 4, 6}, 4);
  EQA("origin vector -> contiguous", tb, want, T);

  /* b: origin 4 ints, target vector with stride 3 at displacement 1. */
  resetTarget();
  OK(MPI_Win_fence(0, win));
  OK(MPI_Put(src, 4, MPI_INT, next, 1, 1, vec3, win));
  OK(MPI_Win_fence(0, win));
  for (int j = 0; j < 4; ++j) want[1 + 3 * j] = prev * 1000 + j;
  EQA("contiguous -> target vector", tb, want, T);

  /* c: origin 6 ints, target indexed {2,1,3} at {0,5,9}, displacement 2;
   * and d: origin 2 x contiguous(3) into 6 target ints at 20 (same type
   * signature, other types); and e: origin hvector into target
   * indexed_block at 30, all in one epoch. */
  resetTarget();
  OK(MPI_Win_fence(0, win));
  OK(MPI_Put(src, 6, MPI_INT, next, 2, 1, idx, win));
  OK(MPI_Put(src, 2, cont3, next, 20, 6, MPI_INT, win));
  OK(MPI_Put(src, 1, hvec, next, 30, 1, iblock, win));
  OK(MPI_Win_fence(0, win));
  expectFromPrev(2, (int[]){0, 1}, 2);
  expectFromPrev(7, (int[]){2}, 1);
  expectFromPrev(11, (int[]){3, 4, 5}, 3);
  expectFromPrev(20, (int[]){0, 1, 2, 3, 4, 5}, 6);
  expectFromPrev(30, (int[]){0, 1}, 2);
  expectFromPrev(34, (int[]){4, 5}, 2);
  expectFromPrev(38, (int[]){8, 9}, 2);
  EQA("indexed, contiguous(3) x 2, hvector -> indexed_block", tb, want, T);

  /* f: Get from next: target vector (5 ints, stride 2, from KEEP) into
   * an origin indexed type {1 at 0, 4 at 10}. */
  int rb[16], rw[16];
  for (int i = 0; i < 16; ++i) rb[i] = rw[i] = -3;
  OK(MPI_Win_fence(0, win));
  OK(MPI_Get(rb, 1, oidx, next, KEEP, 1, vec5, win));
  OK(MPI_Win_fence(0, win));
  rw[0] = next * 1000 + 500 + KEEP;
  for (int j = 1; j < 5; ++j) rw[9 + j] = next * 1000 + 500 + KEEP + 2 * j;
  EQA("Get target vector -> origin indexed", rb, rw, 16);

#if MPI_VERSION >= 4
  /* g: the large-count forms at small counts, a derived type too. */
  resetTarget();
  for (int i = 0; i < 16; ++i) rb[i] = rw[i] = -3;
  OK(MPI_Win_fence(0, win));
  OK(MPI_Put_c(src, (MPI_Count)5, MPI_INT, next, 3, (MPI_Count)5, MPI_INT, win));
  OK(MPI_Put_c(src, (MPI_Count)1, vec2, next, 10, (MPI_Count)1, vec3, win));
  OK(MPI_Get_c(rb, (MPI_Count)6, MPI_INT, prev, KEEP + 4, (MPI_Count)6, MPI_INT, win));
  OK(MPI_Win_fence(0, win));
  expectFromPrev(3, (int[]){0, 1, 2, 3, 4}, 5);
  for (int j = 0; j < 4; ++j) want[10 + 3 * j] = prev * 1000 + 2 * j;
  EQA("MPI_Put_c", tb, want, T);
  for (int j = 0; j < 6; ++j) rw[j] = prev * 1000 + 500 + KEEP + 4 + j;
  EQA("MPI_Get_c", rb, rw, 16);
#endif
  OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  for (int i = 0; i < 8; ++i) OK(MPI_Type_free(&all[i]));
  OK(MPI_Win_free(&win));
}

/* The window object: group, name, info, keyvals, error handlers. */
static int deletes = 0, lastDeleted = 0, extraSeen = 0, badDelete = 0;
static int extraState = 42;
static MPI_Win objWin;

static int onDelete(MPI_Win win, int keyval, void* val, void* extra) {
  (void)keyval;
  ++deletes;
  lastDeleted = *(int*)val;
  if (extra == &extraState) ++extraSeen;
  if (win != objWin) ++badDelete;
  return MPI_SUCCESS;
}

static int handled = 0, handledCode = 0, handledWin = 0;
static void onError(MPI_Win* win, int* code, ...) {
  ++handled;
  handledCode = *code;
  handledWin = *win == objWin;
}

static void object(void) {
  int buf[4];
  MPI_Info info;
  OK(MPI_Info_create(&info));
  OK(MPI_Info_set(info, "no_locks", "false"));
  OK(MPI_Info_set(info, "accumulate_ordering", "rar,raw,war,waw"));
  OK(MPI_Win_create(buf, sizeof buf, sizeof(int), info, MPI_COMM_WORLD, &objWin));
  OK(MPI_Info_free(&info));
  OK(MPI_Win_set_errhandler(objWin, MPI_ERRORS_RETURN));

  /* Group: the communicator's. */
  MPI_Group wg, cg;
  int cmp = -1;
  OK(MPI_Win_get_group(objWin, &wg));
  OK(MPI_Comm_group(MPI_COMM_WORLD, &cg));
  OK(MPI_Group_compare(wg, cg, &cmp));
  EQ(cmp, MPI_IDENT);
  OK(MPI_Group_free(&wg));
  OK(MPI_Group_free(&cg));

  /* Name. */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  OK(MPI_Win_get_name(objWin, name, &len));
  EQ(len, (int)strlen(name));
  OK(MPI_Win_set_name(objWin, "rma_basic window"));
  OK(MPI_Win_get_name(objWin, name, &len));
  EQ(len, 16);
  CHECK(strcmp(name, "rma_basic window") == 0);

  /* Info: what is reported must be a valid info object; a reported
   * no_locks keeps the value given. */
  MPI_Info used;
  int nkeys = -1, flag = 0;
  OK(MPI_Win_get_info(objWin, &used));
  CHECK(used != MPI_INFO_NULL);
  OK(MPI_Info_get_nkeys(used, &nkeys));
  CHECK(nkeys >= 0);
  char val[MPI_MAX_INFO_VAL + 1];
#if MPI_VERSION >= 4
  int vlen = MPI_MAX_INFO_VAL + 1;
  OK(MPI_Info_get_string(used, "no_locks", &vlen, val, &flag));
#else
  OK(MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, val, &flag));
#endif
  if (flag) CHECK(strcmp(val, "false") == 0);
  OK(MPI_Info_free(&used));
  OK(MPI_Info_create(&info));
  OK(MPI_Info_set(info, "no_locks", "false"));
  OK(MPI_Win_set_info(objWin, info));
  OK(MPI_Info_free(&info));
  OK(MPI_Win_get_info(objWin, &used));
  CHECK(used != MPI_INFO_NULL);
  OK(MPI_Info_free(&used));

  /* Keyvals: replaced, deleted, set again, keyval freed, then the
   * attribute goes with MPI_Win_free. */
  int kv = MPI_KEYVAL_INVALID, v1 = 11, v2 = 22, v3 = 33, *pv = NULL;
  OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, onDelete, &kv, &extraState));
  CHECK(kv != MPI_KEYVAL_INVALID);
  OK(MPI_Win_get_attr(objWin, kv, &pv, &flag));
  EQ(flag, 0);
  OK(MPI_Win_set_attr(objWin, kv, &v1));
  OK(MPI_Win_get_attr(objWin, kv, &pv, &flag));
  CHECK(flag && pv == &v1);
  OK(MPI_Win_set_attr(objWin, kv, &v2)); /* replaces: v1 deleted */
  EQ(deletes, 1);
  EQ(lastDeleted, 11);
  OK(MPI_Win_get_attr(objWin, kv, &pv, &flag));
  CHECK(flag && pv == &v2);
  OK(MPI_Win_delete_attr(objWin, kv));
  EQ(deletes, 2);
  EQ(lastDeleted, 22);
  OK(MPI_Win_get_attr(objWin, kv, &pv, &flag));
  EQ(flag, 0);
  OK(MPI_Win_set_attr(objWin, kv, &v3));
  OK(MPI_Win_free_keyval(&kv));
  EQ(kv, MPI_KEYVAL_INVALID);
  EQ(deletes, 2);

  /* Error handlers. */
  MPI_Errhandler eh, got;
  OK(MPI_Win_create_errhandler(onError, &eh));
  OK(MPI_Win_set_errhandler(objWin, eh));
  OK(MPI_Win_get_errhandler(objWin, &got));
  CHECK(got == eh);
  OK(MPI_Errhandler_free(&got));
  OK(MPI_Win_call_errhandler(objWin, MPI_ERR_OTHER));
  EQ(handled, 1);
  EQ(handledCode, MPI_ERR_OTHER);
  EQ(handledWin, 1);
  OK(MPI_Errhandler_free(&eh)); /* still in use by the window */
  OK(MPI_Win_call_errhandler(objWin, MPI_ERR_RMA_SYNC));
  EQ(handled, 2);
  EQ(handledCode, MPI_ERR_RMA_SYNC);
  OK(MPI_Win_set_errhandler(objWin, MPI_ERRORS_RETURN));
  OK(MPI_Win_get_errhandler(objWin, &got));
  CHECK(got == MPI_ERRORS_RETURN);
  OK(MPI_Errhandler_free(&got));

  OK(MPI_Win_free(&objWin));
  EQ(deletes, 3);
  EQ(lastDeleted, 33);
  EQ(extraSeen, 3);
  EQ(badDelete, 0);
}

int main(int argc, char** argv) {
  prog = "rma_basic";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  next = (me + 1) % np;
  prev = (me + np - 1) % np;
  created(1, "MPI_Win_create, disp_unit 1");
  created(4, "MPI_Win_create, disp_unit 4");
  created(8, "MPI_Win_create, disp_unit 8");
  mixedUnits();
  allocated(0, "MPI_Win_allocate");
  /* MPICH 4.0.2 (ch4) at 2+ ranks returns a baseptr 8 bytes off
   * MPI_WIN_BASE (where remote accesses land) in some such windows: not
   * tried under RMA_PEER_LAX. */
  if (!lax()) allocated(4 * (me % 3) + 8, "MPI_Win_allocate, sizes by rank");
  dynamic();
#if MPI_VERSION >= 4
  largeCount();
#endif
  datatypes();
  object();
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Finalize());
  passed();
  return 0;
}
