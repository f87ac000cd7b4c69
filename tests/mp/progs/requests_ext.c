/* requests_ext: MPI_Request_get_status_all/_any/_some (statuses reported,
 * requests untouched), MPI_Isendrecv and MPI_Isendrecv_replace around a
 * ring (small and rendezvous-sized, MPI_PROC_NULL), generalized requests
 * (query_fn at completion, free_fn at free, cancel_fn on MPI_Cancel, errors
 * from query_fn), and the MPI_Status accessors; wrong arguments under
 * MPI_ERRORS_RETURN. Prints "requests_ext: rank R: N checks passed". */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm_checks.h"

static int p;

static int classOf(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* A handle that points at zeros: not a request. */
static _Alignas(64) char notARequest[256];

static void getStatus(void) {
  int flag = -1, idx = -1, out = -1, ind[3], v = 0, w = 42;
  MPI_Status st[3];
  MPI_Request rq[3];
  /* A receive from self with nothing sent yet. */
  OK(MPI_Irecv(&v, 1, MPI_INT, wrank, 5, MPI_COMM_WORLD, &rq[0]));
  rq[1] = MPI_REQUEST_NULL;
  OK(MPI_Request_get_status_all(2, rq, &flag, st));
  CHECK(flag == 0);
  OK(MPI_Request_get_status_any(2, rq, &idx, &flag, &st[0]));
  CHECK(flag == 0 && idx == MPI_UNDEFINED);
  OK(MPI_Request_get_status_some(2, rq, &out, ind, st));
  CHECK(out == 0);
  /* The message arrives: reported, and the requests stay. */
  OK(MPI_Isend(&w, 1, MPI_INT, wrank, 5, MPI_COMM_WORLD, &rq[2]));
  for (flag = 0; !flag;) OK(MPI_Request_get_status_all(3, rq, &flag, st));
  CHECK(rq[0] != MPI_REQUEST_NULL && rq[2] != MPI_REQUEST_NULL);
  CHECK(st[0].MPI_SOURCE == wrank && st[0].MPI_TAG == 5 && v == 42);
  int n = -1;
  OK(MPI_Get_count(&st[0], MPI_INT, &n));
  CHECK(n == 1);
  CHECK(st[1].MPI_SOURCE == MPI_ANY_SOURCE && st[1].MPI_TAG == MPI_ANY_TAG);
  OK(MPI_Request_get_status_any(3, rq, &idx, &flag, &st[0]));
  CHECK(flag == 1 && idx == 0 && st[0].MPI_TAG == 5 && rq[0] != MPI_REQUEST_NULL);
  OK(MPI_Request_get_status_some(3, rq, &out, ind, st));
  CHECK(out == 2 && ind[0] == 0 && ind[1] == 2 && st[0].MPI_SOURCE == wrank);
  CHECK(rq[0] != MPI_REQUEST_NULL && rq[2] != MPI_REQUEST_NULL);
  /* Still there to be completed. */
  OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
  CHECK(rq[0] == MPI_REQUEST_NULL && rq[2] == MPI_REQUEST_NULL);
  /* All null: done, nothing to report. */
  OK(MPI_Request_get_status_any(3, rq, &idx, &flag, &st[0]));
  CHECK(flag == 1 && idx == MPI_UNDEFINED);
  OK(MPI_Request_get_status_some(3, rq, &out, ind, st));
  CHECK(out == MPI_UNDEFINED);
  OK(MPI_Request_get_status_all(3, rq, &flag, MPI_STATUSES_IGNORE));
  CHECK(flag == 1);
  OK(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE));

  /* Wrong arguments. */
  MPI_Request bad[2] = {MPI_REQUEST_NULL, (MPI_Request)(void*)notARequest};
  CHECK(classOf(MPI_Request_get_status_some(2, bad, &out, ind, st)) == MPI_ERR_REQUEST);
  CHECK(classOf(MPI_Request_get_status_any(2, bad, &idx, &flag, st)) == MPI_ERR_REQUEST);
  CHECK(classOf(MPI_Request_get_status_all(2, bad, &flag, st)) == MPI_ERR_REQUEST);
  CHECK(classOf(MPI_Request_get_status_some(-1, rq, &out, ind, st)) == MPI_ERR_COUNT);
  CHECK(classOf(MPI_Request_get_status_some(2, rq, NULL, ind, st)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Request_get_status_some(2, rq, &out, NULL, st)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Request_get_status_any(2, rq, NULL, &flag, st)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Request_get_status_all(2, rq, NULL, st)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Request_get_status_all(2, NULL, &flag, st)) == MPI_ERR_ARG);
}

static void isendrecv(int n) {
  const int right = (wrank + 1) % p, left = (wrank + p - 1) % p;
  int* s = malloc(sizeof(int) * n);
  int* r = malloc(sizeof(int) * n);
  for (int i = 0; i < n; ++i) {
    s[i] = wrank * 100000 + i;
    r[i] = -1;
  }
  MPI_Request rq;
  MPI_Status st;
  OK(MPI_Isendrecv(s, n, MPI_INT, right, 11, r, n, MPI_INT, left, 11, MPI_COMM_WORLD, &rq));
  OK(MPI_Wait(&rq, &st));
  CHECK(rq == MPI_REQUEST_NULL);
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 11);
  int c = -1;
  OK(MPI_Get_count(&st, MPI_INT, &c));
  CHECK(c == n);
  for (int i = 0; i < n; ++i) CHECK(r[i] == left * 100000 + i);

  /* Replace, with a derived type freed right after the call. */
  MPI_Datatype pair;
  OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  OK(MPI_Type_commit(&pair));
  for (int i = 0; i < n; ++i) s[i] = wrank * 100000 + i;
  OK(MPI_Isendrecv_replace(s, n / 2, pair, right, 12, left, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
  OK(MPI_Type_free(&pair));
  int flag = 0;
  while (!flag) OK(MPI_Test(&rq, &flag, &st));
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 12);
  for (int i = 0; i < n / 2 * 2; ++i) CHECK(s[i] == left * 100000 + i);

  /* MPI_PROC_NULL on both sides: done at once, the PROC_NULL status. */
  OK(MPI_Isendrecv(s, n, MPI_INT, MPI_PROC_NULL, 1, r, n, MPI_INT, MPI_PROC_NULL, 1,
                   MPI_COMM_WORLD, &rq));
  OK(MPI_Wait(&rq, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  OK(MPI_Get_count(&st, MPI_INT, &c));
  CHECK(c == 0);
  /* Only a send (to the right), only a receive (from the left). */
  MPI_Request two[2];
  s[0] = wrank * 100000;
  OK(MPI_Isendrecv(s, 1, MPI_INT, right, 13, r, 1, MPI_INT, MPI_PROC_NULL, 13, MPI_COMM_WORLD,
                   &two[0]));
  OK(MPI_Isendrecv_replace(r, 1, MPI_INT, MPI_PROC_NULL, 13, left, 13, MPI_COMM_WORLD, &two[1]));
  MPI_Status sts[2];
  OK(MPI_Waitall(2, two, sts));
  CHECK(sts[0].MPI_SOURCE == MPI_PROC_NULL && sts[1].MPI_SOURCE == left);
  CHECK(r[0] == left * 100000);
  free(s);
  free(r);
}

static void isendrecvErrors(void) {
  int x = 0;
  MPI_Request rq;
  CHECK(classOf(MPI_Isendrecv(&x, 1, MPI_INT, p, 0, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
                              &rq)) == MPI_ERR_RANK);
  CHECK(classOf(MPI_Isendrecv(&x, 1, MPI_INT, 0, -3, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
                              &rq)) == MPI_ERR_TAG);
  CHECK(classOf(MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
                              NULL)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Isendrecv_replace(&x, -1, MPI_INT, 0, 0, 0, 0, MPI_COMM_WORLD, &rq)) ==
        MPI_ERR_COUNT);
  CHECK(classOf(MPI_Isendrecv_replace(&x, 1, MPI_DATATYPE_NULL, 0, 0, 0, 0, MPI_COMM_WORLD,
                                      &rq)) == MPI_ERR_TYPE);
  CHECK(classOf(MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, 0, 0, 0, MPI_COMM_NULL, &rq)) ==
        MPI_ERR_COMM);
}

/* ---- generalized requests ---- */

struct greq {
  int queries, frees, cancels, lastComplete, queryRc;
};

static int gQuery(void* extra, MPI_Status* st) {
  struct greq* g = extra;
  ++g->queries;
  MPI_Status_set_source(st, 7);
  MPI_Status_set_tag(st, 9);
  MPI_Status_set_elements(st, MPI_INT, 3);
  MPI_Status_set_cancelled(st, g->cancels > 0);
  return g->queryRc;
}
static int gFree(void* extra) {
  ++((struct greq*)extra)->frees;
  return MPI_SUCCESS;
}
static int gCancel(void* extra, int complete) {
  struct greq* g = extra;
  ++g->cancels;
  g->lastComplete = complete;
  return MPI_SUCCESS;
}

static void generalized(void) {
  struct greq g = {0, 0, 0, -1, MPI_SUCCESS};
  MPI_Request rq, keep;
  MPI_Status st;
  int flag = -1, c = -1;
  OK(MPI_Grequest_start(gQuery, gFree, gCancel, &g, &rq));
  OK(MPI_Test(&rq, &flag, &st));
  CHECK(flag == 0 && g.queries == 0 && rq != MPI_REQUEST_NULL);
  OK(MPI_Request_get_status(rq, &flag, &st));
  CHECK(flag == 0);
  OK(MPI_Grequest_complete(rq));
  OK(MPI_Request_get_status(rq, &flag, &st));
  CHECK(flag == 1 && g.queries == 1 && g.frees == 0 && st.MPI_SOURCE == 7 && st.MPI_TAG == 9);
  OK(MPI_Wait(&rq, &st));
  CHECK(rq == MPI_REQUEST_NULL && g.queries == 2 && g.frees == 1);
  CHECK(st.MPI_SOURCE == 7 && st.MPI_TAG == 9);
  OK(MPI_Get_count(&st, MPI_INT, &c));
  CHECK(c == 3);
  OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 0);

  /* Cancel: cancel_fn told whether it completed; query reports it. */
  memset(&g, 0, sizeof g);
  OK(MPI_Grequest_start(gQuery, gFree, gCancel, &g, &rq));
  OK(MPI_Cancel(&rq));
  CHECK(g.cancels == 1 && g.lastComplete == 0);
  OK(MPI_Grequest_complete(rq));
  OK(MPI_Cancel(&rq));
  CHECK(g.cancels == 2 && g.lastComplete == 1);
  OK(MPI_Wait(&rq, &st));
  OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1 && g.frees == 1);

  /* Freed before completion: free_fn at once, the request lives until
   * MPI_Grequest_complete (through a copy of the handle). */
  memset(&g, 0, sizeof g);
  OK(MPI_Grequest_start(gQuery, gFree, gCancel, &g, &rq));
  keep = rq;
  OK(MPI_Request_free(&rq));
  CHECK(rq == MPI_REQUEST_NULL && g.frees == 1);
  OK(MPI_Grequest_complete(keep));
  CHECK(g.queries == 0 && g.frees == 1);

  /* Mixed with point-to-point in the multiple-completion calls. */
  memset(&g, 0, sizeof g);
  int v = 0, w = 5;
  MPI_Request mix[2];
  MPI_Status sts[2];
  OK(MPI_Grequest_start(gQuery, gFree, gCancel, &g, &mix[0]));
  OK(MPI_Isendrecv(&w, 1, MPI_INT, wrank, 3, &v, 1, MPI_INT, wrank, 3, MPI_COMM_WORLD, &mix[1]));
  OK(MPI_Request_get_status_all(2, mix, &flag, sts));
  CHECK(flag == 0);
  OK(MPI_Grequest_complete(mix[0]));
  for (flag = 0; !flag;) OK(MPI_Request_get_status_all(2, mix, &flag, sts));
  CHECK(sts[0].MPI_TAG == 9 && sts[1].MPI_TAG == 3 && g.frees == 0);
  OK(MPI_Waitall(2, mix, sts));
  CHECK(sts[0].MPI_SOURCE == 7 && sts[1].MPI_SOURCE == wrank && v == 5 && g.frees == 1);

  /* query_fn's error is the request's. */
  memset(&g, 0, sizeof g);
  g.queryRc = MPI_ERR_OTHER;
  OK(MPI_Grequest_start(gQuery, gFree, gCancel, &g, &rq));
  OK(MPI_Grequest_complete(rq));
  CHECK(classOf(MPI_Wait(&rq, &st)) == MPI_ERR_OTHER);
  CHECK(g.frees == 1);
  memset(&g, 0, sizeof g);
  g.queryRc = MPI_ERR_OTHER;
  OK(MPI_Grequest_start(gQuery, gFree, gCancel, &g, &mix[0]));
  mix[1] = MPI_REQUEST_NULL;
  OK(MPI_Grequest_complete(mix[0]));
  CHECK(classOf(MPI_Waitall(2, mix, sts)) == MPI_ERR_IN_STATUS);
  CHECK(sts[0].MPI_ERROR == MPI_ERR_OTHER && sts[1].MPI_ERROR == MPI_SUCCESS);

  /* Wrong calls. */
  OK(MPI_Grequest_start(gQuery, gFree, gCancel, &g, &rq));
  OK(MPI_Grequest_complete(rq));
  CHECK(classOf(MPI_Grequest_complete(rq)) == MPI_ERR_REQUEST);
  g.queryRc = MPI_SUCCESS;
  OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK(classOf(MPI_Grequest_complete(MPI_REQUEST_NULL)) == MPI_ERR_REQUEST);
  OK(MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq));
  CHECK(classOf(MPI_Grequest_complete(rq)) == MPI_ERR_REQUEST);
  OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK(classOf(MPI_Grequest_start(gQuery, gFree, gCancel, &g, NULL)) == MPI_ERR_ARG);
}

static void statusAccessors(void) {
  MPI_Status st;
  int v = -1, flag = -1;
  MPI_Count cx = -1;
  memset(&st, 0, sizeof st);
  OK(MPI_Status_set_elements(&st, MPI_INT, 5));
  OK(MPI_Get_count(&st, MPI_INT, &v));
  CHECK(v == 5);
  OK(MPI_Get_elements(&st, MPI_INT, &v));
  CHECK(v == 5);
  /* A struct of an int and a double: 3 basic elements = 1 whole + 1. */
  int bl[2] = {1, 1};
  MPI_Aint d[2] = {0, 8};
  MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, s;
  OK(MPI_Type_create_struct(2, bl, d, ty, &s));
  OK(MPI_Type_commit(&s));
  OK(MPI_Status_set_elements(&st, s, 3));
  OK(MPI_Get_elements(&st, s, &v));
  CHECK(v == 3);
  OK(MPI_Get_count(&st, s, &v));
  CHECK(v == MPI_UNDEFINED);
  OK(MPI_Status_set_elements_x(&st, s, 4));
  OK(MPI_Get_elements_x(&st, s, &cx));
  CHECK(cx == 4);
  OK(MPI_Get_count(&st, s, &v));
  CHECK(v == 2);
  OK(MPI_Type_free(&s));
  OK(MPI_Status_set_cancelled(&st, 1));
  OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1);
  OK(MPI_Status_set_cancelled(&st, 0));
  OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 0);
  OK(MPI_Status_set_source(&st, 3));
  OK(MPI_Status_set_tag(&st, 77));
  OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
  OK(MPI_Status_get_source(&st, &v));
  CHECK(v == 3 && st.MPI_SOURCE == 3);
  OK(MPI_Status_get_tag(&st, &v));
  CHECK(v == 77);
  OK(MPI_Status_get_error(&st, &v));
  CHECK(v == MPI_ERR_TAG);

  CHECK(classOf(MPI_Status_set_elements(NULL, MPI_INT, 1)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1)) == MPI_ERR_TYPE);
  CHECK(classOf(MPI_Status_set_elements(&st, MPI_INT, -1)) == MPI_ERR_COUNT);
  CHECK(classOf(MPI_Status_set_cancelled(NULL, 1)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Status_get_source(NULL, &v)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Status_get_tag(&st, NULL)) == MPI_ERR_ARG);
  CHECK(classOf(MPI_Status_set_error(NULL, 0)) == MPI_ERR_ARG);
}

int main(int argc, char** argv) {
  prog = "requests_ext";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  getStatus();
  isendrecv(7);
  isendrecv(300000); /* rendezvous-sized */
  isendrecvErrors();
  generalized();
  statusAccessors();
  MPI_Barrier(MPI_COMM_WORLD);
  passed();
  MPI_Finalize();
  return 0;
}
