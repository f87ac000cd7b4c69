/* lt_client: a plain PMIx client that behaves (or misbehaves) on request,
 * to test loomrun without the MPI library.
 *
 *   lt_client MODE [ARGS...] [--marker=TEXT]
 *
 * Every mode except "nopmix-*" calls PMIx_Init and a collecting PMIx_Fence
 * first. "R" is the rank that misbehaves; the others wait (pause) until
 * loomrun's teardown kills them. A trailing --marker=... is ignored: tests
 * pass a unique one so `pgrep -f` can find leftovers of their job.
 *
 *   hello                 print "hello from rank r of n", finalize
 *   info                  print what PMIx says about this rank, finalize
 *   exit R CODE           rank R exits CODE (without finalize)
 *   exit-finalized R CODE rank R finalizes, then exits CODE
 *   segv R                rank R raises SIGSEGV
 *   abort R CODE MSG      rank R calls PMIx_Abort(CODE, MSG)
 *   nofinalize R          rank R exits 0 without PMIx_Finalize
 *   sleep                 print "ready r", wait forever
 *   stubborn              ignore SIGTERM, print "ready r", wait forever
 *   lines COUNT LEN       COUNT lines of LEN bytes to stdout and stderr
 *                         (stdio fully buffered: pipe reads split lines)
 *   stdin                 rank 0 echoes stdin lines as "echo: ...", the
 *                         others report whether stdin is at EOF
 *   env VAR...            print VAR=value or "VAR unset" for each
 *   partial               print a line without newline, finalize
 *   shm R                 rank R creates /dev/shm/loom-<nspace>-lt, then
 *                         raises SIGSEGV
 *   orphan                start a child (same process group) that holds
 *                         stdout and sleeps; finalize and exit 0
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;
static int size = -1;

static void die(const char *what, pmix_status_t rc) {
  fprintf(stderr, "lt_client: %s failed: %s\n", what, PMIx_Error_string(rc));
  exit(99);
}

static void init(void) {
  pmix_status_t rc = PMIx_Init(&me, NULL, 0);
  if (rc != PMIX_SUCCESS) die("PMIx_Init", rc);
  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t *val = NULL;
  rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
  if (rc != PMIX_SUCCESS) die("PMIx_Get(PMIX_JOB_SIZE)", rc);
  size = (int)val->data.uint32;
  PMIX_VALUE_RELEASE(val);
  pmix_info_t info;
  int collect = 1;
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  rc = PMIx_Fence(NULL, 0, &info, 1);
  if (rc != PMIX_SUCCESS) die("PMIx_Fence", rc);
}

static void finalize(void) {
  pmix_status_t rc = PMIx_Finalize(NULL, 0);
  if (rc != PMIX_SUCCESS) die("PMIx_Finalize", rc);
}

static void waitForever(void) {
  for (;;) pause();
}

static int rank(void) { return (int)me.rank; }

/* Reads one PMIx key of this rank (or of the job with `wildcard`) as text. */
static void printKey(const char *name, const char *key, int wildcard) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, me.nspace, wildcard ? PMIX_RANK_WILDCARD : me.rank);
  pmix_value_t *v = NULL;
  pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
  if (rc != PMIX_SUCCESS) {
    printf("rank %d %s=ERROR(%s)\n", rank(), name, PMIx_Error_string(rc));
    return;
  }
  switch (v->type) {
    case PMIX_STRING: printf("rank %d %s=%s\n", rank(), name, v->data.string); break;
    case PMIX_UINT32: printf("rank %d %s=%u\n", rank(), name, v->data.uint32); break;
    case PMIX_UINT16: printf("rank %d %s=%u\n", rank(), name, v->data.uint16); break;
    case PMIX_PROC_RANK: printf("rank %d %s=%u\n", rank(), name, v->data.rank); break;
    default: printf("rank %d %s=<type %d>\n", rank(), name, v->type); break;
  }
  PMIX_VALUE_RELEASE(v);
}

int main(int argc, char **argv) {
  /* Drop the marker so it never counts as an argument. */
  if (argc > 1 && strncmp(argv[argc - 1], "--marker=", 9) == 0) argc--;
  if (argc < 2) {
    fprintf(stderr, "usage: lt_client MODE [ARGS...]\n");
    return 98;
  }
  const char *mode = argv[1];
  int target = argc > 2 ? atoi(argv[2]) : 0;

  if (strcmp(mode, "stubborn") == 0) signal(SIGTERM, SIG_IGN);
  init();

  if (strcmp(mode, "hello") == 0) {
    printf("hello from rank %d of %d\n", rank(), size);
  } else if (strcmp(mode, "info") == 0) {
    printKey("job_size", PMIX_JOB_SIZE, 1);
    printKey("univ_size", PMIX_UNIV_SIZE, 1);
    printKey("local_size", PMIX_LOCAL_SIZE, 1);
    printKey("local_peers", PMIX_LOCAL_PEERS, 1);
    printKey("local_rank", PMIX_LOCAL_RANK, 0);
    printKey("node_rank", PMIX_NODE_RANK, 0);
    printKey("nodeid", PMIX_NODEID, 0);
    printKey("hostname", PMIX_HOSTNAME, 0);
  } else if (strcmp(mode, "exit") == 0 || strcmp(mode, "exit-finalized") == 0) {
    if (rank() == target) {
      if (mode[4] == '-') finalize();
      fflush(stdout);
      _exit(atoi(argv[3]));
    }
    waitForever();
  } else if (strcmp(mode, "segv") == 0) {
    if (rank() == target) {
      signal(SIGSEGV, SIG_DFL);
      raise(SIGSEGV);
    }
    waitForever();
  } else if (strcmp(mode, "abort") == 0) {
    if (rank() == target) {
      int code = atoi(argv[3]);
      PMIx_Abort(code, argc > 4 ? argv[4] : "", NULL, 0);
      _exit(code);
    }
    waitForever();
  } else if (strcmp(mode, "nofinalize") == 0) {
    if (rank() == target) _exit(0);
    waitForever();
  } else if (strcmp(mode, "sleep") == 0 || strcmp(mode, "stubborn") == 0) {
    printf("ready %d\n", rank());
    fflush(stdout);
    waitForever();
  } else if (strcmp(mode, "lines") == 0) {
    int count = atoi(argv[2]);
    int len = atoi(argv[3]);
    char *body = malloc((size_t)len + 1);
    for (int i = 0; i < len; ++i) body[i] = (char)('a' + (rank() + i) % 26);
    body[len] = '\0';
    for (int i = 0; i < count; ++i) {
      printf("<%d:%d:%s>\n", rank(), i, body);
      fprintf(stderr, "{%d:%d:%s}\n", rank(), i, body);
    }
    free(body);
  } else if (strcmp(mode, "stdin") == 0) {
    char line[4096];
    if (rank() == 0) {
      while (fgets(line, sizeof line, stdin)) printf("echo: %s", line);
      printf("rank 0 stdin done\n");
    } else {
      printf("rank %d stdin %s\n", rank(), fgets(line, sizeof line, stdin) ? "data" : "eof");
    }
  } else if (strcmp(mode, "env") == 0) {
    for (int i = 2; i < argc; ++i) {
      const char *v = getenv(argv[i]);
      if (v)
        printf("rank %d %s=%s\n", rank(), argv[i], v);
      else
        printf("rank %d %s unset\n", rank(), argv[i]);
    }
  } else if (strcmp(mode, "partial") == 0) {
    printf("partial from rank %d", rank());
  } else if (strcmp(mode, "shm") == 0) {
    if (rank() == target) {
      char path[512];
      snprintf(path, sizeof path, "/dev/shm/loom-%s-lt", me.nspace);
      int fd = open(path, O_CREAT | O_RDWR, 0600);
      if (fd < 0) perror(path);
      signal(SIGSEGV, SIG_DFL);
      raise(SIGSEGV);
    }
    waitForever();
  } else if (strcmp(mode, "orphan") == 0) {
    fflush(stdout);
    if (fork() == 0) {
      /* Keeps the rank's stdout open and outlives it; being a fork, its
       * command line still carries the test's marker. */
      for (;;) pause();
    }
  } else {
    fprintf(stderr, "lt_client: unknown mode %s\n", mode);
    return 98;
  }
  fflush(stdout);
  finalize();
  return 0;
}
