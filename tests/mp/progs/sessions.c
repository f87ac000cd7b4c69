/* sessions: the sessions model (no MPI_Init), sessions next to MPI_Init in
 * both orders, process sets, MPI_Comm_create_from_group and
 * MPI_Comm_create_group (collective over the group only; disjoint groups at
 * once; the same tag again), and wrong arguments with the right classes.
 *   sessions      sessions only, two at once
 *   world-first   MPI_Init, a session, MPI_Session_finalize, MPI_Finalize
 *   session-first a session, MPI_Init, MPI_Finalize, the session still
 *                 works, MPI_Session_finalize ends the runtime */
#include <string.h>

#include "comm_checks.h"

static void expect(int rc, int cls, int line) {
  int c = -1;
  ++checks;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
  if (c != cls) {
    fprintf(stderr, "sessions: rank %d: line %d: got error %d (class %d), expected %d\n", wrank,
            line, rc, c, cls);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
#define EXPECT(call, cls) expect((call), (cls), __LINE__)

static int value_of(MPI_Info info, const char* key, char* out, int cap) {
  int flag = 0, len = cap;
  out[0] = '\0';
  OK(MPI_Info_get_string(info, key, &len, out, &flag));
  return flag;
}

/* A ring exchange and an allreduce: the communicator really works. */
static void exercise(MPI_Comm c) {
  int r, n, v, got = -1;
  OK(MPI_Comm_rank(c, &r));
  OK(MPI_Comm_size(c, &n));
  OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 5, &got, 1, MPI_INT, (r + n - 1) % n, 5, c,
                  MPI_STATUS_IGNORE));
  CHECK(got == (r + n - 1) % n);
  v = r + 1;
  OK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, c));
  CHECK(v == n * (n + 1) / 2);
  OK(MPI_Barrier(c));
}

/* The world communicator of `s` through the pset, checked and exercised. */
static MPI_Comm world_of(MPI_Session s, const char* tag, int* size) {
  MPI_Group g;
  MPI_Comm c;
  MPI_Info info;
  char v[64];
  int n;
  OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
  CHECK(value_of(info, "mpi_size", v, sizeof v));
  *size = atoi(v);
  OK(MPI_Info_free(&info));
  OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
  OK(MPI_Group_size(g, &n));
  CHECK(n == *size);
  OK(MPI_Group_rank(g, &wrank));
  OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
  OK(MPI_Group_free(&g));
  OK(MPI_Comm_size(c, &n));
  CHECK(n == *size);
  exercise(c);
  return c;
}

static void psets(MPI_Session s) {
  int n, len;
  char name[64];
  MPI_Info info;
  MPI_Group g;
  MPI_Comm self;
  OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
  CHECK(n == 2);
  len = 0;
  OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL));
  CHECK(len == (int)strlen("mpi://WORLD") + 1);
  OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name));
  CHECK(strcmp(name, "mpi://WORLD") == 0);
  len = 5;
  OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1, &len, name));
  CHECK(strcmp(name, "mpi:") == 0 && len == (int)strlen("mpi://SELF") + 1);
  OK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
  CHECK(value_of(info, "mpi_size", name, sizeof name) && strcmp(name, "1") == 0);
  OK(MPI_Info_free(&info));
  OK(MPI_Group_from_session_pset(s, "mpi://self", &g)); /* case-insensitive */
  OK(MPI_Comm_create_from_group(g, "self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &self));
  OK(MPI_Group_free(&g));
  OK(MPI_Comm_size(self, &n));
  CHECK(n == 1);
  exercise(self);
  OK(MPI_Comm_free(&self));
}

/* Groups made of parts of `c`: only their members call. */
static void sub_groups(MPI_Comm c, int world) {
  int r, n, i, k, m;
  MPI_Group all, half, part;
  MPI_Comm sub, sub2;
  int ranks[16];
  OK(MPI_Comm_rank(c, &r));
  OK(MPI_Comm_size(c, &n));
  OK(MPI_Comm_group(c, &all));

  /* Evens and odds at once, same tag: disjoint groups. */
  for (i = r % 2, k = 0; i < n; i += 2) ranks[k++] = i;
  OK(MPI_Group_incl(all, k, ranks, &half));
  OK(MPI_Comm_create_group(c, half, 7, &sub));
  OK(MPI_Comm_size(sub, &m));
  CHECK(m == k);
  exercise(sub);
  /* The same group and tag again, right away. */
  OK(MPI_Comm_create_group(c, half, 7, &sub2));
  exercise(sub2);
  exercise(sub);
  OK(MPI_Comm_free(&sub2));
  OK(MPI_Comm_free(&sub));
  /* The same with string tags. */
  OK(MPI_Comm_create_from_group(half, r % 2 ? "odd" : "even", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                &sub));
  exercise(sub);
  OK(MPI_Comm_free(&sub));
  OK(MPI_Group_free(&half));

  /* Overlapping groups one after the other: {0..n-2}, then {1..n-1}. */
  if (n > 2) {
    for (i = 0; i < n - 1; ++i) ranks[i] = i;
    OK(MPI_Group_incl(all, n - 1, ranks, &part));
    if (r < n - 1) {
      OK(MPI_Comm_create_group(c, part, 3, &sub));
      exercise(sub);
      OK(MPI_Comm_free(&sub));
    } else {
      OK(MPI_Comm_create_group(c, part, 3, &sub)); /* not a member */
      CHECK(sub == MPI_COMM_NULL);
    }
    OK(MPI_Group_free(&part));
    for (i = 0; i < n - 1; ++i) ranks[i] = i + 1;
    OK(MPI_Group_incl(all, n - 1, ranks, &part));
    if (r > 0) {
      OK(MPI_Comm_create_group(c, part, 3, &sub));
      OK(MPI_Comm_rank(sub, &m));
      CHECK(m == r - 1);
      exercise(sub);
      OK(MPI_Comm_free(&sub));
    }
    OK(MPI_Group_free(&part));
  }

  /* Wrong arguments: fail before communicating. */
  /* MPI_COMM_NULL names no handler: MPI_COMM_WORLD's is used, which only
   * returns in the world model (set up by main). */
  if (world) EXPECT(MPI_Comm_create_group(MPI_COMM_NULL, all, 1, &sub), MPI_ERR_COMM);
  OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  EXPECT(MPI_Comm_create_group(c, MPI_GROUP_NULL, 1, &sub), MPI_ERR_GROUP);
  EXPECT(MPI_Comm_create_group(c, all, -1, &sub), MPI_ERR_TAG);
  EXPECT(MPI_Comm_create_group(c, all, 1, NULL), MPI_ERR_ARG);
  OK(MPI_Comm_create_group(c, MPI_GROUP_EMPTY, 1, &sub));
  CHECK(sub == MPI_COMM_NULL);
  EXPECT(MPI_Comm_create_from_group(all, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &sub),
         MPI_ERR_ARG);
  EXPECT(MPI_Comm_create_from_group(MPI_GROUP_NULL, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sub),
         MPI_ERR_GROUP);
  {
    static char longtag[MPI_MAX_STRINGTAG_LEN + 2];
    memset(longtag, 't', MPI_MAX_STRINGTAG_LEN);
    EXPECT(MPI_Comm_create_from_group(all, longtag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &sub),
           MPI_ERR_ARG);
  }
  if (n > 1) {
    MPI_Comm one;
    MPI_Group g1;
    int zero = 0;
    OK(MPI_Group_incl(all, 1, &r, &g1));
    OK(MPI_Comm_create_group(c, g1, 9, &one)); /* a group of one: only me */
    exercise(one);
    OK(MPI_Comm_set_errhandler(one, MPI_ERRORS_RETURN));
    EXPECT(MPI_Comm_create_group(one, all, 1, &sub), MPI_ERR_GROUP); /* not a subset */
    OK(MPI_Comm_free(&one));
    OK(MPI_Group_free(&g1));
    (void)zero;
  }
  OK(MPI_Group_free(&all));
}

/* A user session error handler: records what it was called with. */
static MPI_Session seen_session;
static int seen_code, seen_calls;
static void on_session_error(MPI_Session* session, int* code, ...) {
  seen_session = *session;
  seen_code = *code;
  ++seen_calls;
}

static void user_session_handler(MPI_Session s) {
  MPI_Errhandler eh, got, comm_eh;
  char name[16];
  int len = 16;
  OK(MPI_Session_create_errhandler(on_session_error, &eh));
  OK(MPI_Session_set_errhandler(s, eh));
  OK(MPI_Errhandler_free(&eh)); /* the session keeps its reference */
  CHECK(eh == MPI_ERRHANDLER_NULL);
  seen_calls = 0;
  CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 5, &len, name) == MPI_ERR_ARG);
  CHECK(seen_calls == 1 && seen_session == s && seen_code == MPI_ERR_ARG);
  OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
  CHECK(seen_calls == 2 && seen_code == MPI_ERR_OTHER);
  OK(MPI_Session_get_errhandler(s, &got));
  /* A session handler is not a communicator's, nor the reverse. */
  OK(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function*)on_session_error, &comm_eh));
  EXPECT(MPI_Session_set_errhandler(s, comm_eh), MPI_ERR_ARG); /* through the user handler */
  CHECK(seen_calls == 3);
  OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
  EXPECT(MPI_Session_set_errhandler(s, comm_eh), MPI_ERR_ARG);
  OK(MPI_Errhandler_free(&comm_eh));
  OK(MPI_Errhandler_free(&got));
  EXPECT(MPI_Session_create_errhandler(NULL, &eh), MPI_ERR_ARG);
}

static void session_errors(MPI_Session s) {
  MPI_Session bad = MPI_SESSION_NULL;
  MPI_Errhandler eh;
  MPI_Group g;
  MPI_Info info;
  char name[16];
  int n, len = 16;
  EXPECT(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
  EXPECT(MPI_Session_finalize(&bad), MPI_ERR_SESSION);
  EXPECT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &bad), MPI_ERR_ERRHANDLER);
  OK(MPI_Session_get_errhandler(s, &eh));
  CHECK(eh == MPI_ERRORS_RETURN);
  EXPECT(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &len, name), MPI_ERR_ARG);
  EXPECT(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, name), MPI_ERR_ARG);
  EXPECT(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, NULL, name), MPI_ERR_ARG);
  EXPECT(MPI_Session_get_pset_info(s, "mpi://NOPE", &info), MPI_ERR_ARG);
  EXPECT(MPI_Group_from_session_pset(s, "mpi://NOPE", &g), MPI_ERR_ARG);
  EXPECT(MPI_Group_from_session_pset(s, NULL, &g), MPI_ERR_ARG);
  EXPECT(MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Session_get_info(s, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Session_set_errhandler(s, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
  OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER)); /* returns */
  OK(MPI_Session_set_errhandler(s, MPI_ERRORS_ARE_FATAL));
  OK(MPI_Session_get_errhandler(s, &eh));
  CHECK(eh == MPI_ERRORS_ARE_FATAL);
  OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
}

static MPI_Session open_session(const char* level) {
  MPI_Session s;
  MPI_Info info, used;
  char v[64];
  OK(MPI_Info_create(&info));
  OK(MPI_Info_set(info, "thread_level", level));
  OK(MPI_Info_set(info, "loom_user_key", "x"));
  OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
  OK(MPI_Info_free(&info));
  OK(MPI_Session_get_info(s, &used));
  CHECK(value_of(used, "thread_level", v, sizeof v) && strncmp(v, "MPI_THREAD_", 11) == 0);
  CHECK(value_of(used, "loom_user_key", v, sizeof v));
  OK(MPI_Info_free(&used));
  return s;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "sessions";
  MPI_Session s1, s2;
  MPI_Comm w1, w2;
  int flag, size, res;
  prog = "sessions";

  if (strcmp(mode, "sessions") == 0) {
    s1 = open_session("MPI_THREAD_SINGLE");
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0); /* sessions are not the world model */
    w1 = world_of(s1, "org.loom.test.world", &size);
    s2 = open_session("MPI_THREAD_FUNNELED");
    w2 = world_of(s2, "org.loom.test.world2", &size);
    OK(MPI_Comm_compare(w1, w2, &res));
    CHECK(res == MPI_CONGRUENT);
    psets(s1);
    sub_groups(w1, 0);
    session_errors(s1);
    user_session_handler(s1);
    OK(MPI_Comm_free(&w2));
    OK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL);
    exercise(w1); /* the other session's communicators still work */
    OK(MPI_Comm_free(&w1));
    OK(MPI_Session_finalize(&s1));
    OK(MPI_Finalized(&flag));
    CHECK(flag == 0);
    /* Loom does not start its runtime twice in one process. */
    CHECK(MPI_Init(&argc, &argv) == MPI_ERR_OTHER);
  } else if (strcmp(mode, "world-first") == 0) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    s1 = open_session("MPI_THREAD_SINGLE");
    w1 = world_of(s1, "world-first", &size);
    OK(MPI_Comm_compare(w1, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT);
    sub_groups(MPI_COMM_WORLD, 1);
    OK(MPI_Comm_free(&w1));
    OK(MPI_Session_finalize(&s1));
    exercise(MPI_COMM_WORLD);
    OK(MPI_Finalize());
  } else {
    s1 = open_session("MPI_THREAD_SINGLE");
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1);
    w1 = world_of(s1, "session-first", &size);
    exercise(MPI_COMM_WORLD);
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag == 1);
    exercise(w1); /* the session keeps the runtime up */
    psets(s1);
    OK(MPI_Comm_free(&w1));
    OK(MPI_Session_finalize(&s1));
  }
  passed();
  return 0;
}
