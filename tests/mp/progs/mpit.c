/* mpit: the MPI tools interface. MPI_T before MPI_Init (not initialized,
 * then reference-counted init), every control variable (names, info, index
 * round trip, read, write refused), categories, the absent events and
 * enumerations, wrong indices and handles; after MPI_Init the performance
 * variables; after MPI_Finalize MPI_T still works until MPI_T_finalize.
 *
 *   mpit [EAGER [TRANSPORT]]
 * EAGER: the value LOOM_SHM_EAGER_MAX must read (default "16k");
 * TRANSPORT: how ranks 0 and 1 talk, "shm" (default) or "ofi". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks = 0;
static int wrank = -1;

static void fail(const char* what, int line, int got, int want) {
  int init = 0, fin = 0;
  fprintf(stderr, "mpit: rank %d: line %d: %s (got %d, expected %d)\n", wrank, line, what, got,
          want);
  fflush(stderr);
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}
#define CHECK(cond)                                  \
  do {                                               \
    ++checks;                                        \
    if (!(cond)) fail("CHECK(" #cond ")", __LINE__, 0, 1); \
  } while (0)
#define EXPECT(call, code)                                  \
  do {                                                      \
    int rc_ = (call);                                       \
    ++checks;                                               \
    if (rc_ != (code)) fail(#call, __LINE__, rc_, (code));  \
  } while (0)
#define OK(call) EXPECT(call, MPI_SUCCESS)

/* ---- Before MPI_T_init_thread: every call says "not initialized". */
static void not_initialized(void) {
  int n = 0, idx = 0, prov = 0;
  MPI_T_cvar_handle ch = MPI_T_CVAR_HANDLE_NULL;
  MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
  EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_cvar_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_cvar_get_index("LOOM_DEBUG", &idx), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_cvar_handle_alloc(0, NULL, &ch, &n), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_pvar_session_create(&s), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_category_changed(&n), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_source_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, NULL, NULL), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL), MPI_T_ERR_INVALID);
  EXPECT(MPI_T_init_thread(12345, &prov), MPI_T_ERR_INVALID);
}

/* ---- Control variables. */
static void cvars(const char* eager) {
  int num = 0, i, found_eager = 0;
  OK(MPI_T_cvar_get_num(&num));
  CHECK(num >= 20);
  for (i = 0; i < num; ++i) {
    char name[128], desc[1024], value[1024];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity = -1, bind = -1, scope = -1;
    int idx = -1, count = -1, len0 = 0;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_T_enum et = (MPI_T_enum)1;
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    OK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &et, desc, &desc_len, &bind,
                           &scope));
    CHECK(strncmp(name, "LOOM_", 5) == 0);
    CHECK(name_len == (int)strlen(name) + 1);
    CHECK(desc_len == (int)strlen(desc) + 1 && desc_len > 10);
    CHECK(dt == MPI_CHAR && et == MPI_T_ENUM_NULL);
    CHECK(bind == MPI_T_BIND_NO_OBJECT && scope == MPI_T_SCOPE_READONLY);
    CHECK(verbosity == MPI_T_VERBOSITY_USER_BASIC || verbosity == MPI_T_VERBOSITY_USER_DETAIL ||
          verbosity == MPI_T_VERBOSITY_TUNER_BASIC ||
          verbosity == MPI_T_VERBOSITY_TUNER_DETAIL ||
          verbosity == MPI_T_VERBOSITY_MPIDEV_BASIC ||
          verbosity == MPI_T_VERBOSITY_MPIDEV_DETAIL);
    /* The string convention: length only (zero length or NULL buffer). */
    OK(MPI_T_cvar_get_info(i, NULL, &len0, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(len0 == name_len);
    len0 = 0;
    OK(MPI_T_cvar_get_info(i, name, &len0, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(len0 == name_len);
    OK(MPI_T_cvar_get_index(name, &idx));
    CHECK(idx == i);
    OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    CHECK(h != MPI_T_CVAR_HANDLE_NULL && count >= 1 && count <= (int)sizeof value);
    memset(value, 'x', sizeof value);
    OK(MPI_T_cvar_read(h, value));
    CHECK((int)strlen(value) == count - 1);
    if (strcmp(name, "LOOM_SHM_EAGER_MAX") == 0) {
      found_eager = 1;
      CHECK(strcmp(value, eager) == 0);
      CHECK(verbosity == MPI_T_VERBOSITY_TUNER_BASIC);
    }
    if (strcmp(name, "LOOM_DEBUG") == 0) CHECK(verbosity == MPI_T_VERBOSITY_USER_BASIC);
    EXPECT(MPI_T_cvar_write(h, value), MPI_T_ERR_CVAR_SET_NEVER);
    OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL);
  }
  CHECK(found_eager);
  {
    /* A short buffer: truncated, NUL-terminated, length of what was copied. */
    char small[6];
    int len = sizeof small, idx = -1;
    OK(MPI_T_cvar_get_index("LOOM_SHM_EAGER_MAX", &idx));
    OK(MPI_T_cvar_get_info(idx, small, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(strcmp(small, "LOOM_") == 0 && len == 6);
  }
  {
    /* Wrong arguments. */
    int idx = -1, count = 0;
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL, dead;
    char buf[64];
    EXPECT(MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_index("LOOM_NO_SUCH_PARAMETER", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_cvar_get_index("loom_shm_eager_max", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_cvar_get_index(NULL, &idx), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_cvar_handle_alloc(num, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, buf), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_write(MPI_T_CVAR_HANDLE_NULL, buf), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_handle_free(&h), MPI_T_ERR_INVALID_HANDLE);
    OK(MPI_T_cvar_handle_alloc(0, NULL, &h, &count));
    dead = h;
    OK(MPI_T_cvar_handle_free(&h));
    EXPECT(MPI_T_cvar_read(dead, buf), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_handle_free(&dead), MPI_T_ERR_INVALID_HANDLE);
  }
}

/* ---- Categories: every cvar in exactly one, the pvars in one, no events. */
static void categories(void) {
  int ncat = 0, ncvar = 0, npvar = 0, c, i, stamp = -1, stamp2 = -2, total_cvars = 0;
  int total_pvars = 0;
  int seen[256] = {0};
  OK(MPI_T_category_get_num(&ncat));
  OK(MPI_T_cvar_get_num(&ncvar));
  OK(MPI_T_pvar_get_num(&npvar));
  CHECK(ncat >= 5 && ncvar < 256);
  OK(MPI_T_category_changed(&stamp));
  for (c = 0; c < ncat; ++c) {
    char name[64], desc[256];
    int name_len = sizeof name, desc_len = sizeof desc, nc = -1, np = -1, nsub = -1, idx = -1;
    int ne = -1, ind[256];
    OK(MPI_T_category_get_info(c, name, &name_len, desc, &desc_len, &nc, &np, &nsub));
    CHECK(strncmp(name, "loom_", 5) == 0 && desc_len > 10 && nsub == 0);
    OK(MPI_T_category_get_index(name, &idx));
    CHECK(idx == c);
    CHECK(nc >= 0 && nc <= 256);
    OK(MPI_T_category_get_cvars(c, nc, ind));
    for (i = 0; i < nc; ++i) {
      CHECK(ind[i] >= 0 && ind[i] < ncvar);
      ++seen[ind[i]];
    }
    total_cvars += nc;
    total_pvars += np;
    if (np > 0) {
      OK(MPI_T_category_get_pvars(c, np, ind));
      for (i = 0; i < np; ++i) CHECK(ind[i] >= 0 && ind[i] < npvar);
    }
    OK(MPI_T_category_get_categories(c, 0, NULL));
    OK(MPI_T_category_get_num_events(c, &ne));
    CHECK(ne == 0);
    OK(MPI_T_category_get_events(c, 4, ind));
    EXPECT(MPI_T_category_get_cvars(c, -1, ind), MPI_T_ERR_INVALID);
  }
  CHECK(total_cvars == ncvar && total_pvars == npvar);
  for (i = 0; i < ncvar; ++i) CHECK(seen[i] == 1);
  {
    /* The shm parameters are together. */
    int idx = -1, cat = -1, nc = 0, ind[64], has = 0, eager = -1;
    OK(MPI_T_category_get_index("loom_p2p_shm", &cat));
    OK(MPI_T_cvar_get_index("LOOM_SHM_EAGER_MAX", &eager));
    OK(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, &nc, NULL, NULL));
    OK(MPI_T_category_get_cvars(cat, nc, ind));
    for (i = 0; i < nc; ++i) {
      char name[64];
      int len = sizeof name;
      OK(MPI_T_cvar_get_info(ind[i], name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
      CHECK(strncmp(name, "LOOM_SHM_", 9) == 0);
      has |= ind[i] == eager;
    }
    CHECK(has);
    EXPECT(MPI_T_category_get_index("no_such_category", &idx), MPI_T_ERR_INVALID_NAME);
  }
  EXPECT(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_category_get_cvars(-1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_category_get_pvars(ncat, 0, NULL), MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_category_get_categories(ncat, 0, NULL), MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_category_get_num_events(ncat, &i), MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_category_get_events(ncat, 0, NULL), MPI_T_ERR_INVALID_INDEX);
  OK(MPI_T_category_changed(&stamp2));
  CHECK(stamp == stamp2);
}

/* ---- No events, no sources, no enumerations. */
static void no_events(void) {
  int n = -1, v = 0, idx = 0;
  MPI_T_event_registration reg = (MPI_T_event_registration)0;
  MPI_Count ts = 0;
  OK(MPI_T_event_get_num(&n));
  CHECK(n == 0);
  n = -1;
  OK(MPI_T_source_get_num(&n));
  CHECK(n == 0);
  EXPECT(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL),
         MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_event_get_index("anything", &idx), MPI_T_ERR_INVALID_NAME);
  EXPECT(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL),
         MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_event_read((MPI_T_event_instance)0, 0, &v), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_source_get_timestamp(0, &ts), MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &v, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
}

/* ---- Performance variables. */
static int pvar_index(const char* name, int cls) {
  int idx = -1;
  OK(MPI_T_pvar_get_index(name, cls, &idx));
  return idx;
}

static unsigned long long rd(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  unsigned long long v = ~0ull;
  OK(MPI_T_pvar_read(s, h, &v));
  return v;
}

static MPI_T_pvar_handle alloc(MPI_T_pvar_session s, const char* name, int cls) {
  MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
  int count = 0;
  OK(MPI_T_pvar_handle_alloc(s, pvar_index(name, cls), NULL, &h, &count));
  CHECK(h != MPI_T_PVAR_HANDLE_NULL && count == 1);
  return h;
}

static void pvar_info(void) {
  int num = 0, i;
  OK(MPI_T_pvar_get_num(&num));
  CHECK(num >= 10);
  for (i = 0; i < num; ++i) {
    char name[128], desc[512];
    int name_len = sizeof name, desc_len = sizeof desc, verb = -1, cls = -1, bind = -1;
    int ro = -1, cont = -1, atomic = -1;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_T_enum et = (MPI_T_enum)1;
    OK(MPI_T_pvar_get_info(i, name, &name_len, &verb, &cls, &dt, &et, desc, &desc_len, &bind,
                           &ro, &cont, &atomic));
    CHECK(strncmp(name, "loom_", 5) == 0 && name_len == (int)strlen(name) + 1);
    CHECK(dt == MPI_UNSIGNED_LONG_LONG && et == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT);
    CHECK(cls == MPI_T_PVAR_CLASS_COUNTER || cls == MPI_T_PVAR_CLASS_LEVEL ||
          cls == MPI_T_PVAR_CLASS_HIGHWATERMARK);
    CHECK(atomic == 0 && (cont == 0 || cont == 1) && (ro == 0 || ro == 1));
    CHECK(pvar_index(name, cls) == i);
  }
  {
    int idx = -1;
    EXPECT(MPI_T_pvar_get_index("loom_p2p_shm_messages_sent", MPI_T_PVAR_CLASS_LEVEL, &idx),
           MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_index("no_such_pvar", MPI_T_PVAR_CLASS_COUNTER, &idx),
           MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_pvar_get_num(NULL), MPI_T_ERR_INVALID);
  }
}

/* Wrong sessions and handles, start/stop/write/reset refused where they
 * must be, MPI_T_PVAR_ALL_HANDLES. */
static void pvar_errors(void) {
  MPI_T_pvar_session s1, s2, dead;
  MPI_T_pvar_handle c1, lvl, h;
  unsigned long long v = 0;
  int count = 0, num = 0;
  OK(MPI_T_pvar_get_num(&num));
  OK(MPI_T_pvar_session_create(&s1));
  OK(MPI_T_pvar_session_create(&s2));
  CHECK(s1 != s2 && s1 != MPI_T_PVAR_SESSION_NULL);
  c1 = alloc(s1, "loom_p2p_shm_messages_sent", MPI_T_PVAR_CLASS_COUNTER);
  lvl = alloc(s1, "loom_p2p_unexpected_length", MPI_T_PVAR_CLASS_LEVEL);
  EXPECT(MPI_T_pvar_handle_alloc(s1, num, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_pvar_handle_alloc(s1, -1, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
  EXPECT(MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0, NULL, &h, &count),
         MPI_T_ERR_INVALID_SESSION);
  /* A handle of another session. */
  EXPECT(MPI_T_pvar_read(s2, c1, &v), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_pvar_start(s2, c1), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_pvar_handle_free(s2, &c1), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, c1, &v), MPI_T_ERR_INVALID_SESSION);
  EXPECT(MPI_T_pvar_read(s1, MPI_T_PVAR_HANDLE_NULL, &v), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_pvar_read(s1, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_pvar_readreset(s1, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
  EXPECT(MPI_T_pvar_handle_free(s1, &(MPI_T_pvar_handle){MPI_T_PVAR_ALL_HANDLES}),
         MPI_T_ERR_INVALID_HANDLE);
  /* Writes are refused; the level can be neither started, stopped nor reset. */
  EXPECT(MPI_T_pvar_write(s1, c1, &v), MPI_T_ERR_PVAR_NO_WRITE);
  EXPECT(MPI_T_pvar_write(s1, lvl, &v), MPI_T_ERR_PVAR_NO_WRITE);
  EXPECT(MPI_T_pvar_start(s1, lvl), MPI_T_ERR_PVAR_NO_STARTSTOP);
  EXPECT(MPI_T_pvar_stop(s1, lvl), MPI_T_ERR_PVAR_NO_STARTSTOP);
  EXPECT(MPI_T_pvar_reset(s1, lvl), MPI_T_ERR_PVAR_NO_WRITE);
  EXPECT(MPI_T_pvar_readreset(s1, lvl, &v), MPI_T_ERR_PVAR_NO_WRITE);
  /* All handles: the level is skipped. */
  OK(MPI_T_pvar_start(s1, MPI_T_PVAR_ALL_HANDLES));
  OK(MPI_T_pvar_reset(s1, MPI_T_PVAR_ALL_HANDLES));
  OK(MPI_T_pvar_stop(s1, MPI_T_PVAR_ALL_HANDLES));
  CHECK(rd(s1, c1) == 0); /* nothing sent while it ran */
  EXPECT(MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES),
         MPI_T_ERR_INVALID_SESSION);
  OK(MPI_T_pvar_handle_free(s1, &c1));
  CHECK(c1 == MPI_T_PVAR_HANDLE_NULL);
  /* Freeing a session frees its handles. */
  dead = s1;
  OK(MPI_T_pvar_session_free(&s1));
  CHECK(s1 == MPI_T_PVAR_SESSION_NULL);
  EXPECT(MPI_T_pvar_read(dead, lvl, &v), MPI_T_ERR_INVALID_SESSION);
  EXPECT(MPI_T_pvar_session_free(&dead), MPI_T_ERR_INVALID_SESSION);
  OK(MPI_T_pvar_session_free(&s2));
}

/* Messages to oneself move the self counters. */
static void pvar_self(void) {
  MPI_T_pvar_session s;
  MPI_T_pvar_handle msgs, bytes, rmsgs;
  int i, data[16] = {0};
  MPI_Request req;
  OK(MPI_T_pvar_session_create(&s));
  msgs = alloc(s, "loom_p2p_self_messages_sent", MPI_T_PVAR_CLASS_COUNTER);
  bytes = alloc(s, "loom_p2p_self_bytes_sent", MPI_T_PVAR_CLASS_COUNTER);
  rmsgs = alloc(s, "loom_p2p_messages_received", MPI_T_PVAR_CLASS_COUNTER);
  OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
  for (i = 0; i < 3; ++i) {
    OK(MPI_Isend(data, 16, MPI_INT, wrank, 5, MPI_COMM_WORLD, &req));
    OK(MPI_Recv(data, 16, MPI_INT, wrank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  }
  CHECK(rd(s, msgs) == 3 && rd(s, bytes) == 3 * 16 * sizeof(int) && rd(s, rmsgs) == 3);
  OK(MPI_T_pvar_session_free(&s));
}

/* Ranks 0 and 1: counters move by exactly what was sent while a handle is
 * started, stay put while stopped, restart at reset; the unexpected queue
 * grows with messages sent before their receives are posted. */
enum { N = 7, B = 100, NBIG = 3, BIG = 200000 };
static void pvar_pair(const char* transport) {
  char mname[64], bname[64];
  MPI_T_pvar_session s;
  MPI_T_pvar_handle msgs, bytes, msgs2, other, rmsgs;
  static char buf[BIG];
  int i;
  unsigned long long v = 0;
  snprintf(mname, sizeof mname, "loom_p2p_%s_messages_sent", transport);
  snprintf(bname, sizeof bname, "loom_p2p_%s_bytes_sent", transport);
  OK(MPI_T_pvar_session_create(&s));
  msgs = alloc(s, mname, MPI_T_PVAR_CLASS_COUNTER);
  bytes = alloc(s, bname, MPI_T_PVAR_CLASS_COUNTER);
  msgs2 = alloc(s, mname, MPI_T_PVAR_CLASS_COUNTER);
  other = alloc(s, strcmp(transport, "shm") == 0 ? "loom_p2p_ofi_messages_sent"
                                                 : "loom_p2p_shm_messages_sent",
                MPI_T_PVAR_CLASS_COUNTER);
  /* Rank 1 counts what arrives from before the barrier on: rank 0's
   * messages may arrive while rank 1 is still in it. */
  rmsgs = alloc(s, "loom_p2p_messages_received", MPI_T_PVAR_CLASS_COUNTER);
  if (wrank == 1) OK(MPI_T_pvar_start(s, rmsgs));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  if (wrank == 0) {
    CHECK(rd(s, msgs) == 0); /* not started yet */
    OK(MPI_T_pvar_start(s, msgs));
    OK(MPI_T_pvar_start(s, bytes));
    OK(MPI_T_pvar_start(s, other));
    for (i = 0; i < N; ++i) OK(MPI_Send(buf, B, MPI_CHAR, 1, 1, MPI_COMM_WORLD));
    CHECK(rd(s, msgs) == N);
    CHECK(rd(s, bytes) == (unsigned long long)N * B);
    CHECK(rd(s, msgs2) == 0); /* never started */
    CHECK(rd(s, other) == 0);
    /* Rendezvous-sized messages count once each, with all their bytes. */
    OK(MPI_T_pvar_readreset(s, bytes, &v));
    CHECK(v == (unsigned long long)N * B);
    OK(MPI_T_pvar_start(s, msgs2));
    for (i = 0; i < NBIG; ++i) OK(MPI_Send(buf, BIG, MPI_CHAR, 1, 2, MPI_COMM_WORLD));
    CHECK(rd(s, msgs) == N + NBIG && rd(s, msgs2) == NBIG);
    CHECK(rd(s, bytes) == (unsigned long long)NBIG * BIG);
    /* Stopped: no change; started again: counting resumes. */
    OK(MPI_T_pvar_stop(s, msgs));
    OK(MPI_Send(buf, B, MPI_CHAR, 1, 3, MPI_COMM_WORLD));
    CHECK(rd(s, msgs) == N + NBIG && rd(s, msgs2) == NBIG + 1);
    OK(MPI_T_pvar_start(s, msgs));
    OK(MPI_Send(buf, B, MPI_CHAR, 1, 3, MPI_COMM_WORLD));
    CHECK(rd(s, msgs) == N + NBIG + 1 && rd(s, msgs2) == NBIG + 2);
    OK(MPI_T_pvar_reset(s, msgs));
    CHECK(rd(s, msgs) == 0);
    CHECK(rd(s, other) == 0);
  } else if (wrank == 1) {
    for (i = 0; i < N; ++i) OK(MPI_Recv(buf, B, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (i = 0; i < NBIG; ++i)
      OK(MPI_Recv(buf, BIG, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (i = 0; i < 2; ++i) OK(MPI_Recv(buf, B, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(rd(s, rmsgs) >= N + NBIG + 2);
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));

  /* Unexpected messages: rank 0 sends N messages then one more with
   * another tag; rank 1 receives that one first, so the N wait. */
  {
    MPI_T_pvar_handle len = alloc(s, "loom_p2p_unexpected_length", MPI_T_PVAR_CLASS_LEVEL);
    MPI_T_pvar_handle peak =
        alloc(s, "loom_p2p_unexpected_peak", MPI_T_PVAR_CLASS_HIGHWATERMARK);
    unsigned long long before = rd(s, len), during, after, p;
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* rank 1 read `before` first */
    if (wrank == 0) {
      for (i = 0; i < N; ++i) OK(MPI_Send(buf, B, MPI_CHAR, 1, 10, MPI_COMM_WORLD));
      OK(MPI_Send(buf, B, MPI_CHAR, 1, 11, MPI_COMM_WORLD));
    } else if (wrank == 1) {
      OK(MPI_T_pvar_start(s, peak));
      OK(MPI_Recv(buf, B, MPI_CHAR, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      during = rd(s, len);
      CHECK(during >= before + N);
      p = rd(s, peak);
      CHECK(p >= during);
      for (i = 0; i < N; ++i) OK(MPI_Recv(buf, B, MPI_CHAR, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      after = rd(s, len);
      CHECK(after + N <= during);
      CHECK(rd(s, peak) == p); /* the peak stays */
      OK(MPI_T_pvar_stop(s, peak));
      OK(MPI_T_pvar_reset(s, peak));
      CHECK(rd(s, peak) == rd(s, len));
    }
  }
  OK(MPI_T_pvar_session_free(&s));
  OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void pvars(const char* transport, int size) {
  pvar_info();
  pvar_errors();
  pvar_self();
  if (size >= 2) pvar_pair(transport);
}

int main(int argc, char** argv) {
  const char* eager = argc > 1 ? argv[1] : "16k";
  const char* transport = argc > 2 ? argv[2] : "shm";
  int prov = -1, prov2 = -1, size = 0, n = 0;
  char buf[64];
  MPI_T_cvar_handle h;

  not_initialized();
  OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &prov));
  CHECK(prov >= MPI_THREAD_SINGLE && prov <= MPI_THREAD_MULTIPLE);
  OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov2)); /* reference counted */
  CHECK(prov2 == MPI_THREAD_SINGLE);
  OK(MPI_T_finalize());
  cvars(eager);
  categories();
  no_events();

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  cvars(eager);
  pvars(transport, size);
  MPI_Finalize();

  /* After MPI_Finalize the tools interface is still there. */
  OK(MPI_T_cvar_get_num(&n));
  OK(MPI_T_cvar_handle_alloc(0, NULL, &h, &n));
  CHECK(n <= (int)sizeof buf);
  OK(MPI_T_cvar_read(h, buf));
  /* The last MPI_T_finalize frees what is left (h) and closes it. */
  OK(MPI_T_finalize());
  EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT(MPI_T_cvar_read(h, buf), MPI_T_ERR_NOT_INITIALIZED);
  /* And may be initialized again. */
  OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov));
  EXPECT(MPI_T_cvar_read(h, buf), MPI_T_ERR_INVALID_HANDLE);
  OK(MPI_T_finalize());
  printf("mpit: rank %d: %d checks passed\n", wrank < 0 ? 0 : wrank, checks);
  fflush(stdout);
  return 0;
}
