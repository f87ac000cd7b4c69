/* Datatype attributes (MPI_Type_create_keyval ... MPI_Type_delete_attr):
 * copy callbacks on MPI_Type_dup, delete callbacks on replace, delete and
 * MPI_Type_free, the predefined callbacks, failing callbacks, keyvals of
 * the wrong kind; and the deprecated MPI-1 names for communicator
 * attributes (MPI_Keyval_create/free, MPI_Attr_put/get/delete). */
#include <string.h>

#include "comm_checks.h"

static int copies, deletes;
static void* lastDeleted;
static MPI_Datatype lastDeletedType;

static int copyPlusOne(MPI_Datatype old, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)old, (void)keyval;
  CHECK(extra == (void*)&copies);
  ++copies;
  *(void**)out = (char*)in + 1;
  *flag = 1;
  return MPI_SUCCESS;
}
static int copyRefuse(MPI_Datatype old, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)old, (void)keyval, (void)extra, (void)in, (void)out;
  *flag = 0;
  return MPI_SUCCESS;
}
static int copyFail(MPI_Datatype old, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)old, (void)keyval, (void)extra, (void)in, (void)out, (void)flag;
  return MPI_ERR_OTHER;
}
static int recordDelete(MPI_Datatype t, int keyval, void* value, void* extra) {
  (void)keyval, (void)extra;
  ++deletes;
  lastDeleted = value;
  lastDeletedType = t;
  return MPI_SUCCESS;
}
static int failDelete(MPI_Datatype t, int keyval, void* value, void* extra) {
  (void)t, (void)keyval, (void)value, (void)extra;
  return MPI_ERR_OTHER;
}

static int commCopies, commDeletes;
static int commCopy(MPI_Comm old, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)old, (void)keyval, (void)extra;
  ++commCopies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}
static int commDelete(MPI_Comm c, int keyval, void* value, void* extra) {
  (void)c, (void)keyval, (void)value, (void)extra;
  ++commDeletes;
  return MPI_SUCCESS;
}

static void* get(MPI_Datatype t, int key, int* flag) {
  void* v = NULL;
  OK(MPI_Type_get_attr(t, key, &v, flag));
  return v;
}

int main(int argc, char** argv) {
  prog = "dtype_attr";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char base[16];
  int flag;

  int key, dupKey, nullKey;
  OK(MPI_Type_create_keyval(copyPlusOne, recordDelete, &key, &copies));
  OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &dupKey, NULL));
  OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, recordDelete, &nullKey, NULL));
  CHECK(key != dupKey && key != nullKey && key != MPI_KEYVAL_INVALID);

  MPI_Datatype t, d;
  OK(MPI_Type_contiguous(2, MPI_INT, &t));
  get(t, key, &flag);
  CHECK(!flag);
  OK(MPI_Type_set_attr(t, key, base));
  OK(MPI_Type_set_attr(t, dupKey, base + 5));
  OK(MPI_Type_set_attr(t, nullKey, base + 9));
  CHECK(get(t, key, &flag) == base && flag);
  CHECK(get(t, dupKey, &flag) == base + 5 && flag);

  /* Replacing a value runs the delete callback on the old one. */
  OK(MPI_Type_set_attr(t, key, base + 2));
  CHECK(deletes == 1 && lastDeleted == base && lastDeletedType == t);
  CHECK(get(t, key, &flag) == base + 2);

  /* MPI_Type_dup: the user copy callback, MPI_TYPE_DUP_FN copies as is,
   * MPI_TYPE_NULL_COPY_FN does not copy. */
  OK(MPI_Type_dup(t, &d));
  CHECK(copies == 1);
  CHECK(get(d, key, &flag) == base + 3 && flag);
  CHECK(get(d, dupKey, &flag) == base + 5 && flag);
  get(d, nullKey, &flag);
  CHECK(!flag);

  /* Delete: the callback runs; deleting an absent attribute is fine. */
  deletes = 0;
  OK(MPI_Type_delete_attr(d, key));
  CHECK(deletes == 1 && lastDeleted == base + 3 && lastDeletedType == d);
  get(d, key, &flag);
  CHECK(!flag);
  OK(MPI_Type_delete_attr(d, key));
  CHECK(deletes == 1);

  /* A freed keyval can no longer set attributes, but the attribute still
   * stored with it can be read, freeing the keyval again is harmless, and
   * its delete callback still runs when the type holding it goes. */
  int key2 = key;
  OK(MPI_Type_free_keyval(&key2));
  CHECK(key2 == MPI_KEYVAL_INVALID);
  OK(MPI_Type_get_attr(t, key, &base, &flag));
  CHECK(flag);
  CHECK(MPI_Type_set_attr(t, key, base) == MPI_ERR_KEYVAL);
  key2 = key;
  OK(MPI_Type_free_keyval(&key2));
  deletes = 0;
  MPI_Datatype tt = t;
  OK(MPI_Type_free(&t));
  CHECK(deletes == 2); /* key (freed keyval) and nullKey */
  CHECK(lastDeletedType == tt);
  OK(MPI_Type_free(&d));

  /* Attributes on a predefined type. */
  OK(MPI_Type_set_attr(MPI_INT, dupKey, base + 1));
  CHECK(get(MPI_INT, dupKey, &flag) == base + 1 && flag);
  OK(MPI_Type_delete_attr(MPI_INT, dupKey));
  get(MPI_INT, dupKey, &flag);
  CHECK(!flag);

  /* A copy callback that declines, and one that fails (no new type). */
  int declineKey, failKey, failDelKey;
  OK(MPI_Type_create_keyval(copyRefuse, MPI_TYPE_NULL_DELETE_FN, &declineKey, NULL));
  OK(MPI_Type_create_keyval(copyFail, MPI_TYPE_NULL_DELETE_FN, &failKey, NULL));
  OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, failDelete, &failDelKey, NULL));
  OK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &t));
  OK(MPI_Type_set_attr(t, declineKey, base));
  OK(MPI_Type_dup(t, &d));
  get(d, declineKey, &flag);
  CHECK(!flag);
  OK(MPI_Type_free(&d));
  OK(MPI_Type_set_attr(t, failKey, base));
  d = MPI_DATATYPE_NULL;
  CHECK(MPI_Type_dup(t, &d) == MPI_ERR_OTHER);
  CHECK(d == MPI_DATATYPE_NULL);
  OK(MPI_Type_delete_attr(t, failKey));
  /* A failing delete callback fails the delete, and MPI_Type_free. */
  OK(MPI_Type_set_attr(t, failDelKey, base));
  CHECK(MPI_Type_delete_attr(t, failDelKey) == MPI_ERR_OTHER);
  CHECK(MPI_Type_free(&t) == MPI_ERR_OTHER);
  CHECK(t != MPI_DATATYPE_NULL);
  OK(MPI_Type_free_keyval(&failDelKey));

  /* Wrong arguments. */
  CHECK(MPI_Type_set_attr(MPI_DATATYPE_NULL, dupKey, base) == MPI_ERR_TYPE);
  CHECK(MPI_Type_get_attr(MPI_DATATYPE_NULL, dupKey, &base, &flag) == MPI_ERR_TYPE);
  CHECK(MPI_Type_delete_attr(MPI_DATATYPE_NULL, dupKey) == MPI_ERR_TYPE);
  CHECK(MPI_Type_get_attr(MPI_INT, dupKey, NULL, &flag) == MPI_ERR_ARG);
  CHECK(MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &base, &flag) == MPI_ERR_KEYVAL);
  CHECK(MPI_Type_set_attr(MPI_INT, 987654, base) == MPI_ERR_KEYVAL);
  CHECK(MPI_Type_create_keyval(copyRefuse, MPI_TYPE_NULL_DELETE_FN, NULL, NULL) == MPI_ERR_ARG);
  CHECK(MPI_Type_free_keyval(NULL) == MPI_ERR_ARG);
  int commKey;
  OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &commKey, NULL));
  CHECK(MPI_Type_set_attr(MPI_INT, commKey, base) == MPI_ERR_KEYVAL); /* wrong kind */
  CHECK(MPI_Type_free_keyval(&commKey) == MPI_ERR_KEYVAL);
  CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, dupKey, base) == MPI_ERR_KEYVAL);
  CHECK(MPI_Comm_free_keyval(&dupKey) == MPI_ERR_KEYVAL);
  OK(MPI_Comm_free_keyval(&commKey));
  OK(MPI_Type_free_keyval(&dupKey));
  OK(MPI_Type_free_keyval(&nullKey));
  OK(MPI_Type_free_keyval(&declineKey));
  OK(MPI_Type_free_keyval(&failKey));

  /* --- The deprecated MPI-1 names: communicator attributes. */
  int k1, k2;
  OK(MPI_Keyval_create(commCopy, commDelete, &k1, NULL));
  OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k2, NULL));
  MPI_Comm c;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  OK(MPI_Attr_put(c, k1, base + 4));
  OK(MPI_Attr_put(c, k2, base + 6));
  void* v = NULL;
  OK(MPI_Attr_get(c, k1, &v, &flag));
  CHECK(flag && v == base + 4);
  /* The MPI-1 and MPI-2 names see the same attributes. */
  OK(MPI_Comm_get_attr(c, k2, &v, &flag));
  CHECK(flag && v == base + 6);
  MPI_Comm c2;
  OK(MPI_Comm_dup(c, &c2));
  CHECK(commCopies == 1);
  OK(MPI_Attr_get(c2, k1, &v, &flag));
  CHECK(flag && v == base + 4);
  OK(MPI_Attr_get(c2, k2, &v, &flag));
  CHECK(flag && v == base + 6);
  OK(MPI_Attr_delete(c2, k1));
  CHECK(commDeletes == 1);
  OK(MPI_Attr_get(c2, k1, &v, &flag));
  CHECK(!flag);
  OK(MPI_Comm_free(&c2));
  OK(MPI_Comm_free(&c));
  CHECK(commDeletes == 2);
  int *tagUb = NULL;
  OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tagUb, &flag));
  CHECK(flag && *tagUb >= 32767);
  CHECK(MPI_Attr_put(MPI_COMM_WORLD, MPI_TAG_UB, base) == MPI_ERR_KEYVAL);
  CHECK(MPI_Attr_delete(MPI_COMM_WORLD, MPI_TAG_UB) == MPI_ERR_KEYVAL);
  CHECK(MPI_Attr_put(MPI_COMM_NULL, k1, base) == MPI_ERR_COMM);
  CHECK(MPI_Attr_get(MPI_COMM_WORLD, k1, NULL, &flag) == MPI_ERR_ARG);
  OK(MPI_Keyval_free(&k1));
  CHECK(k1 == MPI_KEYVAL_INVALID);
  CHECK(MPI_Keyval_free(&k1) == MPI_ERR_KEYVAL);
  CHECK(MPI_Attr_get(MPI_COMM_WORLD, k2 + 1000, &v, &flag) == MPI_ERR_KEYVAL);
  OK(MPI_Keyval_free(&k2));

  passed();
  MPI_Finalize();
  return 0;
}
