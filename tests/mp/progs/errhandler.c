/* errhandler: user error handlers on communicators (create, set, get, call,
 * free while attached, inherited by MPI_Comm_dup, replaced from inside the
 * handler) and user error classes, codes and strings (add, class, string,
 * MPI_LASTUSEDCODE, remove), with the wrong calls under MPI_ERRORS_RETURN.
 * Prints "errhandler: rank R: N checks passed". */
#include <mpi.h>
#include <string.h>

#include "comm_checks.h"

static int calls = 0, lastCode = 0;
static MPI_Comm lastComm = MPI_COMM_NULL;

static void handler(MPI_Comm* comm, int* code, ...) {
  ++calls;
  lastCode = *code;
  lastComm = *comm;
}

/* Replaces itself on its communicator by MPI_ERRORS_RETURN. */
static void handlerOnce(MPI_Comm* comm, int* code, ...) {
  ++calls;
  lastCode = *code;
  MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
}

static int classOf(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

static void handlers(void) {
  MPI_Errhandler eh, got;
  MPI_Comm dup, dup2;
  OK(MPI_Comm_create_errhandler(handler, &eh));
  CHECK(eh != MPI_ERRHANDLER_NULL);
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  OK(MPI_Comm_set_errhandler(dup, eh));
  /* Freed while attached: the communicator keeps it. */
  OK(MPI_Errhandler_free(&eh));
  CHECK(eh == MPI_ERRHANDLER_NULL);

  /* An error on `dup` reaches the handler, then returns its code. */
  int rc = MPI_Comm_rank(dup, NULL);
  CHECK(classOf(rc) == MPI_ERR_ARG);
  CHECK(calls == 1 && lastCode == rc && lastComm == dup);
  /* A collective's argument error, on every rank. */
  int x = 0;
  rc = MPI_Bcast(&x, 1, MPI_INT, -5, dup);
  CHECK(classOf(rc) == MPI_ERR_ROOT);
  CHECK(calls == 2 && lastCode == rc && lastComm == dup);
  /* Not on other communicators. */
  rc = MPI_Comm_rank(MPI_COMM_WORLD, NULL);
  CHECK(classOf(rc) == MPI_ERR_ARG && calls == 2);

  /* get: a new reference to the same handler. */
  OK(MPI_Comm_get_errhandler(dup, &got));
  CHECK(got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_RETURN);
  /* Inherited by MPI_Comm_dup. */
  OK(MPI_Comm_dup(dup, &dup2));
  rc = MPI_Comm_size(dup2, NULL);
  CHECK(calls == 3 && lastComm == dup2);
  /* Set on another communicator through the handle get returned. */
  MPI_Comm self;
  OK(MPI_Comm_dup(MPI_COMM_SELF, &self));
  OK(MPI_Comm_set_errhandler(self, got));
  OK(MPI_Errhandler_free(&got));
  rc = MPI_Comm_rank(self, NULL);
  CHECK(calls == 4 && lastComm == self);

  /* MPI_Comm_call_errhandler: the handler sees the code as given. */
  OK(MPI_Comm_call_errhandler(dup, MPI_ERR_TAG));
  CHECK(calls == 5 && lastCode == MPI_ERR_TAG && lastComm == dup);

  /* Freeing the communicators drops the last references. */
  OK(MPI_Comm_free(&dup));
  OK(MPI_Comm_free(&dup2));
  OK(MPI_Comm_free(&self));

  /* A handler that replaces itself while running. */
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  OK(MPI_Comm_create_errhandler(handlerOnce, &eh));
  OK(MPI_Comm_set_errhandler(dup, eh));
  OK(MPI_Errhandler_free(&eh));
  rc = MPI_Comm_rank(dup, NULL);
  CHECK(calls == 6 && classOf(rc) == MPI_ERR_ARG);
  rc = MPI_Comm_rank(dup, NULL);
  CHECK(calls == 6 && classOf(rc) == MPI_ERR_ARG);
  OK(MPI_Comm_get_errhandler(dup, &got));
  CHECK(got == MPI_ERRORS_RETURN);
  OK(MPI_Errhandler_free(&got)); /* balances the get */
  CHECK(got == MPI_ERRHANDLER_NULL);
  OK(MPI_Comm_free(&dup));

  /* Wrong calls (MPI_COMM_WORLD returns errors). */
  MPI_Errhandler pre = MPI_ERRORS_RETURN;
  CHECK(classOf(MPI_Errhandler_free(&pre)) == MPI_ERR_ARG);
  CHECK(pre == MPI_ERRORS_RETURN);
  pre = MPI_ERRORS_ARE_FATAL;
  CHECK(classOf(MPI_Errhandler_free(&pre)) == MPI_ERR_ARG);
  pre = MPI_ERRHANDLER_NULL;
  CHECK(classOf(MPI_Errhandler_free(&pre)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Errhandler_free(NULL)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Comm_create_errhandler(NULL, &eh)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Comm_create_errhandler(handler, NULL)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN)) == MPI_ERR_COMM);
  CHECK(classOf(MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL)) == MPI_ERR_ARG);
  CHECK(calls == 6);
}

static int lastUsed(void) {
  int* v = NULL;
  int flag = 0;
  OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
  CHECK(flag && v);
  return *v;
}

static void codes(void) {
  char s[MPI_MAX_ERROR_STRING];
  int len, cls, c1, c2, e1, e2, e3;
  CHECK(lastUsed() >= MPI_ERR_LASTCODE);
  const int before = lastUsed();

  OK(MPI_Add_error_class(&c1));
  CHECK(c1 > MPI_ERR_LASTCODE && lastUsed() == c1);
  OK(MPI_Add_error_code(c1, &e1));
  CHECK(e1 > c1 && lastUsed() == e1);
  OK(MPI_Add_error_code(MPI_ERR_COMM, &e2)); /* a code of a predefined class */
  OK(MPI_Add_error_class(&c2));
  OK(MPI_Add_error_code(c2, &e3));
  CHECK(lastUsed() == e3);

  OK(MPI_Error_class(c1, &cls));
  CHECK(cls == c1);
  OK(MPI_Error_class(e1, &cls));
  CHECK(cls == c1);
  OK(MPI_Error_class(e2, &cls));
  CHECK(cls == MPI_ERR_COMM);
  OK(MPI_Error_class(e3, &cls));
  CHECK(cls == c2);

  /* Strings: empty until added; replaced by a second add. */
  OK(MPI_Error_string(e1, s, &len));
  CHECK(len == 0 && s[0] == '\0');
  OK(MPI_Add_error_string(e1, "first"));
  OK(MPI_Add_error_string(e1, "the e1 failure"));
  OK(MPI_Error_string(e1, s, &len));
  CHECK(strcmp(s, "the e1 failure") == 0 && len == (int)strlen(s));
  OK(MPI_Add_error_string(c1, "class one"));
  OK(MPI_Error_string(c1, s, &len));
  CHECK(strcmp(s, "class one") == 0);
  OK(MPI_Error_string(MPI_ERR_COMM, s, &len));
  CHECK(strstr(s, "MPI_ERR_COMM") != NULL);

  /* A user code through a user handler. */
  MPI_Errhandler eh;
  MPI_Comm dup;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  OK(MPI_Comm_create_errhandler(handler, &eh));
  OK(MPI_Comm_set_errhandler(dup, eh));
  OK(MPI_Errhandler_free(&eh));
  int n = calls;
  OK(MPI_Comm_call_errhandler(dup, e1));
  CHECK(calls == n + 1 && lastCode == e1);
  OK(MPI_Comm_free(&dup));
  /* ...and through MPI_ERRORS_RETURN: the call still returns success. */
  OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, e3));

  /* Wrong calls. */
  CHECK(classOf(MPI_Add_error_class(NULL)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Add_error_code(e3 + 1000, &len)) == MPI_ERR_ARG); /* unknown class */
  CHECK(classOf(MPI_Add_error_code(e1, &len)) == MPI_ERR_ARG);        /* a code, not a class */
  CHECK(classOf(MPI_Add_error_code(c1, NULL)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Add_error_string(MPI_ERR_COMM, "mine")) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Add_error_string(e3 + 1000, "nobody")) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Add_error_string(e1, NULL)) == MPI_ERR_ARG);
  char longer[MPI_MAX_ERROR_STRING + 8];
  memset(longer, 'x', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  CHECK(classOf(MPI_Add_error_string(e1, longer)) == MPI_ERR_ARG);
  CHECK(MPI_Error_class(e3 + 1000, &cls) == MPI_ERR_ARG);
  CHECK(MPI_Error_string(e3 + 1000, s, &len) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Remove_error_class(c1)) == MPI_ERR_ARG);   /* still has e1 */
  CHECK(classOf(MPI_Remove_error_code(e1)) == MPI_ERR_ARG);    /* still has a string */
  CHECK(classOf(MPI_Remove_error_code(c1)) == MPI_ERR_ARG);    /* a class */
  CHECK(classOf(MPI_Remove_error_class(e1)) == MPI_ERR_ARG);   /* a code */
  CHECK(classOf(MPI_Remove_error_class(MPI_ERR_COMM)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Remove_error_code(MPI_ERR_COMM)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Remove_error_string(e3)) == MPI_ERR_ARG);  /* none added */
  CHECK(classOf(MPI_Remove_error_string(MPI_ERR_COMM)) == MPI_ERR_ARG);

  /* Removing, in the order the standard asks. */
  OK(MPI_Remove_error_string(e1));
  OK(MPI_Error_string(e1, s, &len));
  CHECK(len == 0);
  OK(MPI_Remove_error_code(e1));
  CHECK(MPI_Error_class(e1, &cls) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Remove_error_class(c1)) == MPI_ERR_ARG); /* still has its string */
  OK(MPI_Remove_error_string(c1));
  OK(MPI_Remove_error_class(c1));
  CHECK(MPI_Error_class(c1, &cls) == MPI_ERR_ARG);
  CHECK(lastUsed() == e3);
  OK(MPI_Remove_error_code(e3));
  CHECK(lastUsed() == c2);
  OK(MPI_Remove_error_class(c2));
  OK(MPI_Remove_error_code(e2));
  CHECK(lastUsed() == before);
  /* The numbers are free again. */
  int again;
  OK(MPI_Add_error_class(&again));
  CHECK(again == before + 1);
  OK(MPI_Remove_error_class(again));
}

int main(int argc, char** argv) {
  prog = "errhandler";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  handlers();
  codes();
  MPI_Barrier(MPI_COMM_WORLD);
  passed();
  MPI_Finalize();
  return 0;
}
