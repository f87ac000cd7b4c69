/* Shared by the rma_* test programs (one-sided communication), on top of
 * comm_checks.h: EQ names what was compared, what came and what was
 * expected; expectErr checks an error class; lax() is true under
 * RMA_PEER_LAX=1, used only when the programs are validated against other
 * MPI implementations (Open MPI, MPICH) that do not detect some erroneous
 * calls the standard names: a missed detection is then noted on stderr
 * instead of failing. Loom's tests never set it. */
#ifndef RMA_CHECKS_H
#define RMA_CHECKS_H
#include <string.h>

#include "comm_checks.h"

#define EQ(got, want)                                                                      \
  do {                                                                                     \
    ++checks;                                                                              \
    long long g_ = (long long)(got), w_ = (long long)(want);                               \
    if (g_ != w_) {                                                                        \
      fprintf(stderr, "%s: rank %d: %s:%d: %s is %lld, expected %s = %lld\n", prog, wrank, \
              __FILE__, __LINE__, #got, g_, #want, w_);                                    \
      fflush(stderr);                                                                      \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                        \
    }                                                                                      \
  } while (0)

/* An int array against its expected values: the first difference named. */
#define EQA(what, got, want, n)                                                                    \
  do {                                                                                             \
    ++checks;                                                                                      \
    for (long i_ = 0; i_ < (long)(n); ++i_)                                                        \
      if ((long long)(got)[i_] != (long long)(want)[i_]) {                                         \
        fprintf(stderr, "%s: rank %d: %s:%d: %s: element %ld is %lld, expected %lld\n", prog,      \
                wrank, __FILE__, __LINE__, what, i_, (long long)(got)[i_], (long long)(want)[i_]); \
        fflush(stderr);                                                                            \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
      }                                                                                            \
  } while (0)

/* OK with the error string of what the call returned. */
#undef OK
#define OK(call)                                                                          \
  do {                                                                                    \
    ++checks;                                                                             \
    int rc_ = (call);                                                                     \
    if (rc_ != MPI_SUCCESS) {                                                             \
      char s_[MPI_MAX_ERROR_STRING] = "";                                                 \
      int l_ = 0;                                                                         \
      MPI_Error_string(rc_, s_, &l_);                                                     \
      fprintf(stderr, "%s: rank %d: %s:%d: %s returned %d (%s)\n", prog, wrank, __FILE__, \
              __LINE__, #call, rc_, s_);                                                  \
      fflush(stderr);                                                                     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
    }                                                                                     \
  } while (0)

static inline int lax(void) {
  const char* e = getenv("RMA_PEER_LAX");
  return e && *e && strcmp(e, "0") != 0;
}

static inline const char* className(int cls) {
  switch (cls) {
    case MPI_SUCCESS:
      return "MPI_SUCCESS";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG";
    case MPI_ERR_WIN:
      return "MPI_ERR_WIN";
    case MPI_ERR_RMA_SYNC:
      return "MPI_ERR_RMA_SYNC";
    case MPI_ERR_RMA_RANGE:
      return "MPI_ERR_RMA_RANGE";
    case MPI_ERR_RMA_FLAVOR:
      return "MPI_ERR_RMA_FLAVOR";
    case MPI_ERR_RMA_CONFLICT:
      return "MPI_ERR_RMA_CONFLICT";
    case MPI_ERR_RMA_ATTACH:
      return "MPI_ERR_RMA_ATTACH";
    case MPI_ERR_RMA_SHARED:
      return "MPI_ERR_RMA_SHARED";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE";
    case MPI_ERR_DISP:
      return "MPI_ERR_DISP";
    case MPI_ERR_INTERN:
      return "MPI_ERR_INTERN";
    case MPI_ERR_OTHER:
      return "MPI_ERR_OTHER";
    default:
      return "another class";
  }
}

/* rc must be an error of class want. Returns 1 when it was (or, under
 * lax(), when the peer's miss was only noted), so the caller can tell. */
#define expectErr(rc, want, what) expectErrAt((rc), (want), (what), __LINE__)
static inline int expectErrAt(int rc, int want, const char* what, int line) {
  int cls = rc;
  ++checks;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls == want) return 1;
  fprintf(stderr, "%s: rank %d: line %d: %s: got %s (class %d, code %d), expected %s (%d)%s\n",
          prog, wrank, line, what, className(cls), cls, rc, className(want), want,
          lax() ? " [RMA_PEER_LAX: not counted]" : "");
  fflush(stderr);
  if (!lax()) MPI_Abort(MPI_COMM_WORLD, 1);
  return 0;
}
#endif
