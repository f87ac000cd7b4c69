/* comm_attr: attribute caching. Copy and delete callbacks are counted;
 * predefined attributes of MPI_COMM_WORLD have the documented values. */
#include <stdint.h>

#include "comm_checks.h"

static int copies = 0, deletes = 0, lastDeleted = -1;
static int extraSeen = 0;

/* Copies value+1; the extra state must be the one given at creation. */
static int copyPlusOne(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)oldcomm;
  (void)keyval;
  if (extra == &extraSeen) ++extraSeen;
  ++copies;
  *(void**)out = (void*)((intptr_t)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}

static int copyNothing(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
  ++copies;
  *flag = 0;
  return MPI_SUCCESS;
}

static int copyFails(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out, (void)flag;
  return MPI_ERR_OTHER;
}

static int countDelete(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)extra;
  ++deletes;
  lastDeleted = (int)(intptr_t)value;
  return MPI_SUCCESS;
}

static int refuseDelete(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  return MPI_ERR_OTHER;
}

static int typeDelete(MPI_Datatype t, int keyval, void* value, void* extra) {
  (void)t, (void)keyval, (void)extra;
  ++deletes;
  lastDeleted = (int)(intptr_t)value;
  return MPI_SUCCESS;
}

static int winDelete(MPI_Win w, int keyval, void* value, void* extra) {
  (void)w, (void)keyval, (void)extra;
  ++deletes;
  lastDeleted = (int)(intptr_t)value;
  return MPI_SUCCESS;
}

static int errClass(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* A keyval the user freed while an attribute uses it: the attribute can
 * still be read and deleted (its delete callback runs), freeing the keyval
 * again meanwhile is harmless, and once the attribute is gone the keyval
 * is invalid. For communicator, datatype and window keyvals. */
static void freedKeyvalInUse(void) {
  int k, kk, flag = 0;
  void* v = NULL;
  MPI_Comm c;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, countDelete, &k, NULL));
  OK(MPI_Comm_set_attr(c, k, (void*)(intptr_t)700));
  kk = k;
  OK(MPI_Comm_free_keyval(&kk));
  OK(MPI_Comm_get_attr(c, k, &v, &flag));
  CHECK(flag && (intptr_t)v == 700);
  kk = k;
  OK(MPI_Comm_free_keyval(&kk));
  deletes = 0;
  OK(MPI_Comm_delete_attr(c, k));
  CHECK(deletes == 1 && lastDeleted == 700);
  CHECK(errClass(MPI_Comm_set_attr(c, k, NULL)) == MPI_ERR_KEYVAL);
  kk = k;
  CHECK(errClass(MPI_Comm_free_keyval(&kk)) == MPI_ERR_KEYVAL);
  /* The same through the MPI-1 names. */
  OK(MPI_Keyval_create(MPI_NULL_COPY_FN, countDelete, &k, NULL));
  OK(MPI_Attr_put(c, k, (void*)(intptr_t)701));
  kk = k;
  OK(MPI_Keyval_free(&kk));
  deletes = 0;
  OK(MPI_Attr_delete(c, k));
  CHECK(deletes == 1 && lastDeleted == 701);
  OK(MPI_Comm_free(&c));

  MPI_Datatype t;
  OK(MPI_Type_dup(MPI_INT, &t));
  OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, typeDelete, &k, NULL));
  OK(MPI_Type_set_attr(t, k, (void*)(intptr_t)702));
  kk = k;
  OK(MPI_Type_free_keyval(&kk));
  OK(MPI_Type_get_attr(t, k, &v, &flag));
  CHECK(flag && (intptr_t)v == 702);
  kk = k;
  OK(MPI_Type_free_keyval(&kk));
  deletes = 0;
  OK(MPI_Type_delete_attr(t, k));
  CHECK(deletes == 1 && lastDeleted == 702);
  kk = k;
  CHECK(errClass(MPI_Type_free_keyval(&kk)) == MPI_ERR_KEYVAL);
  OK(MPI_Type_free(&t));

  MPI_Win w;
  OK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_SELF, &w));
  OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
  OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, winDelete, &k, NULL));
  OK(MPI_Win_set_attr(w, k, (void*)(intptr_t)703));
  kk = k;
  OK(MPI_Win_free_keyval(&kk));
  OK(MPI_Win_get_attr(w, k, &v, &flag));
  CHECK(flag && (intptr_t)v == 703);
  deletes = 0;
  OK(MPI_Win_delete_attr(w, k));
  CHECK(deletes == 1 && lastDeleted == 703);
  CHECK(errClass(MPI_Win_set_attr(w, k, NULL)) == MPI_ERR_KEYVAL);
  OK(MPI_Win_free(&w));
}

static void* get(MPI_Comm comm, int keyval, int* flag) {
  void* v = NULL;
  OK(MPI_Comm_get_attr(comm, keyval, &v, flag));
  return v;
}

int main(int argc, char** argv) {
  int size, flag, k1, k2, k3, k4, k5;
  MPI_Comm dup, dup2;
  void* v;
  prog = "comm_attr";

  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

  /* Predefined attributes: pointers to ints. */
  int* p = get(MPI_COMM_WORLD, MPI_TAG_UB, &flag);
  CHECK(flag && *p == 1073741823);
  p = get(MPI_COMM_WORLD, MPI_HOST, &flag);
  CHECK(flag && *p == MPI_PROC_NULL);
  p = get(MPI_COMM_WORLD, MPI_IO, &flag);
  CHECK(flag && *p == MPI_ANY_SOURCE);
  p = get(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag);
  CHECK(flag && (*p == 0 || *p == 1));
  p = get(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &flag);
  CHECK(!flag || *p >= size);
  p = get(MPI_COMM_WORLD, MPI_APPNUM, &flag);
  CHECK(!flag || *p == 0);

  /* A keyval with copy and delete callbacks. */
  OK(MPI_Comm_create_keyval(copyPlusOne, countDelete, &k1, &extraSeen));
  CHECK(k1 != MPI_KEYVAL_INVALID);
  v = get(MPI_COMM_WORLD, k1, &flag);
  CHECK(!flag);
  OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k1, (void*)(intptr_t)100));
  v = get(MPI_COMM_WORLD, k1, &flag);
  CHECK(flag && (intptr_t)v == 100);

  /* MPI_COMM_DUP_FN copies the value as is, MPI_COMM_NULL_COPY_FN not at
   * all, a callback setting flag=0 not either. */
  OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, countDelete, &k2, NULL));
  OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL));
  OK(MPI_Comm_create_keyval(copyNothing, countDelete, &k4, NULL));
  OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k2, (void*)(intptr_t)200));
  OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k3, (void*)(intptr_t)300));
  OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k4, (void*)(intptr_t)400));

  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK(copies == 2 && extraSeen == 1); /* copyPlusOne and copyNothing */
  v = get(dup, k1, &flag);
  CHECK(flag && (intptr_t)v == 101);
  v = get(dup, k2, &flag);
  CHECK(flag && (intptr_t)v == 200);
  v = get(dup, k3, &flag);
  CHECK(!flag);
  v = get(dup, k4, &flag);
  CHECK(!flag);

  /* A dup of the dup copies again. */
  OK(MPI_Comm_dup(dup, &dup2));
  v = get(dup2, k1, &flag);
  CHECK(flag && (intptr_t)v == 102);
  CHECK(copies == 3);

  /* Freeing runs the delete callbacks of what is attached (k1, k2). */
  deletes = 0;
  OK(MPI_Comm_free(&dup2));
  CHECK(deletes == 2);

  /* Setting over a value deletes the old one. */
  deletes = 0;
  OK(MPI_Comm_set_attr(dup, k1, (void*)(intptr_t)500));
  CHECK(deletes == 1 && lastDeleted == 101);
  v = get(dup, k1, &flag);
  CHECK(flag && (intptr_t)v == 500);

  /* Explicit delete; deleting what is not there is harmless. */
  OK(MPI_Comm_delete_attr(dup, k1));
  CHECK(deletes == 2 && lastDeleted == 500);
  v = get(dup, k1, &flag);
  CHECK(!flag);
  OK(MPI_Comm_delete_attr(dup, k1));
  CHECK(deletes == 2);

  /* A freed keyval stays alive for the attributes that use it. */
  OK(MPI_Comm_set_attr(dup, k1, (void*)(intptr_t)600));
  {
    int kk = k1;
    OK(MPI_Comm_free_keyval(&kk));
    CHECK(kk == MPI_KEYVAL_INVALID);
  }
  deletes = 0;
  OK(MPI_Comm_free(&dup));
  CHECK(deletes == 2); /* k1 (600) and k2 (200); order: newest first */
  CHECK(lastDeleted == 200);

  /* A failing copy callback fails the dup. */
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  freedKeyvalInUse();
  OK(MPI_Comm_create_keyval(copyFails, MPI_COMM_NULL_DELETE_FN, &k5, NULL));
  OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k5, NULL));
  dup = MPI_COMM_WORLD;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_ERR_OTHER);
  CHECK(dup == MPI_COMM_NULL);
  OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k5));
  OK(MPI_Comm_free_keyval(&k5));

  /* A refusing delete callback fails the free, which can be retried after
   * the attribute is gone another way. */
  {
    int kr;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, refuseDelete, &kr, NULL));
    OK(MPI_Comm_set_attr(dup, kr, NULL));
    CHECK(MPI_Comm_free(&dup) == MPI_ERR_OTHER);
    CHECK(dup != MPI_COMM_NULL);
    CHECK(MPI_Comm_delete_attr(dup, kr) == MPI_ERR_OTHER);
    OK(MPI_Comm_free_keyval(&kr));
    /* Still refused: the keyval lives on for the attribute. Leave it: the
     * communicator is simply never freed. */
  }

  /* Attributes on MPI_COMM_SELF. */
  deletes = 0;
  OK(MPI_Comm_set_attr(MPI_COMM_SELF, k2, (void*)(intptr_t)7));
  v = get(MPI_COMM_SELF, k2, &flag);
  CHECK(flag && (intptr_t)v == 7);
  OK(MPI_Comm_delete_attr(MPI_COMM_SELF, k2));
  CHECK(deletes == 1 && lastDeleted == 7);

  /* Clean up what is on MPI_COMM_WORLD (k1's keyval is already freed, so
   * its attribute stays until the end). */
  OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k2));
  OK(MPI_Comm_free_keyval(&k2));
  OK(MPI_Comm_free_keyval(&k3));
  OK(MPI_Comm_free_keyval(&k4));

  passed();
  OK(MPI_Finalize());
  return 0;
}
