/* p2p_stress: randomized traffic, reproducible from a seed.
 *
 *   p2p_stress [seed] [seconds]     (defaults: 12345, 4)
 *
 * Every rank derives the same plan from the seed: per round, each rank
 * sends M messages of random size (0..256 KB, most of them small) to random
 * destinations (itself included) with random tags; each destination picks
 * one receive style for the round: fully specific, MPI_ANY_SOURCE,
 * MPI_ANY_TAG or both wildcards, posting its receives in a shuffled order.
 * The round either pre-posts nonblocking receives and then sends with a mix
 * of MPI_Send, MPI_Ssend, MPI_Isend and MPI_Issend (completing with
 * MPI_Waitall, MPI_Waitany or MPI_Testsome), or sends nonblocking and
 * receives with blocking MPI_Recv. A receive must hold the oldest message
 * from its status's source that its tag accepts (MPI's non-overtaking rule),
 * checked byte for byte. Rounds stop after `seconds` (rank 0 decides and
 * tells the others through the round barrier).
 * Prints "p2p_stress: rank R ok (N rounds, B bytes)". */
#include "p2p_util.h"

enum { M = 6, MAXB = 256 * 1024, NTAGS = 4 };

typedef struct {
  int src, dest, tag, bytes, seq; /* seq: index among src's messages in the round */
  int taken;
} Msg;

typedef struct {
  int source, tag; /* what the receive asks for (may be wildcards) */
} Want;

static int randomSize(uint64_t* s) {
  switch (rng_below(s, 10)) {
    case 0: return 0;
    case 1: case 2: case 3: case 4: return (int)rng_below(s, 64);
    case 5: case 6: return (int)rng_below(s, 20000);
    default: return (int)rng_below(s, MAXB + 1);
  }
}

static uint32_t seedOf(int round, int src, int seq) {
  return (uint32_t)(round * 7919 + src * 104729 + seq * 31);
}

/* The barrier that ends a round; rank 0 also says whether to go on. */
static int endRound(MPI_Comm side, int goOn) {
  p2p_barrier(side);
  int flag = goOn;
  if (g_rank == 0) {
    for (int r = 1; r < g_size; ++r) MPI_OK(MPI_Send(&flag, 1, MPI_INT, r, 1, side));
  } else {
    MPI_OK(MPI_Recv(&flag, 1, MPI_INT, 0, 1, side, MPI_STATUS_IGNORE));
  }
  return flag;
}

int main(int argc, char** argv) {
  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 12345;
  double seconds = argc > 2 ? atof(argv[2]) : 4.0;
  p2p_init(&argc, &argv, "p2p_stress");
  MPI_Comm side;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &side));
  const int total = g_size * M;
  Msg* msgs = malloc(sizeof(Msg) * (size_t)total);
  Want* wants = malloc(sizeof(Want) * (size_t)total);
  int* order = malloc(sizeof(int) * (size_t)total);
  unsigned char** sbufs = malloc(sizeof(void*) * M);
  unsigned char** rbufs = malloc(sizeof(void*) * (size_t)total);
  MPI_Request* rreqs = malloc(sizeof(MPI_Request) * (size_t)total);
  MPI_Request* sreqs = malloc(sizeof(MPI_Request) * M);
  MPI_Status* sts = malloc(sizeof(MPI_Status) * (size_t)total);
  int* idx = malloc(sizeof(int) * (size_t)total);
  CHECK(msgs && wants && order && sbufs && rbufs && rreqs && sreqs && sts && idx);
  for (int i = 0; i < M; ++i) CHECK((sbufs[i] = malloc(MAXB)));
  for (int i = 0; i < total; ++i) CHECK((rbufs[i] = malloc(MAXB)));

  double start = MPI_Wtime();
  long long moved = 0;
  int round = 0;
  for (int goOn = 1; goOn; ++round) {
    uint64_t s = seed * 1000003 + (uint64_t)round + 1;
    for (int i = 0; i < total; ++i) {
      Msg* m = &msgs[i];
      m->src = i / M;
      m->seq = i % M;
      m->dest = (int)rng_below(&s, (uint64_t)g_size);
      m->tag = (int)rng_below(&s, NTAGS);
      m->bytes = randomSize(&s);
      m->taken = 0;
    }
    const int style = (int)rng_below(&s, 4);      /* receive wildcards, see below */
    const int prepost = (int)rng_below(&s, 2);    /* 1: Irecv first; 0: Isend first */
    const int completion = (int)rng_below(&s, 3); /* Waitall, Waitany, Testsome */
    uint64_t mine = s ^ (uint64_t)(g_rank + 1) * 0x9E3779B97F4A7C15ull; /* rank-local choices */

    /* My receives: one per message addressed to me, in shuffled order. */
    int nin = 0;
    for (int i = 0; i < total; ++i)
      if (msgs[i].dest == g_rank) order[nin++] = i;
    for (int i = nin - 1; i > 0; --i) {
      int j = (int)rng_below(&mine, (uint64_t)i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (int k = 0; k < nin; ++k) {
      const Msg* m = &msgs[order[k]];
      wants[k].source = (style == 1 || style == 3) ? MPI_ANY_SOURCE : m->src;
      wants[k].tag = (style == 2 || style == 3) ? MPI_ANY_TAG : m->tag;
    }

    /* My sends. */
    int sendKinds[M];
    for (int k = 0; k < M; ++k) {
      const Msg* m = &msgs[g_rank * M + k];
      fill(sbufs[k], (size_t)m->bytes, seedOf(round, g_rank, k));
      sendKinds[k] = prepost ? (int)rng_below(&mine, 4) : 2 + (int)rng_below(&mine, 2);
    }
    if (prepost)
      for (int k = 0; k < nin; ++k)
        MPI_OK(MPI_Irecv(rbufs[k], MAXB, MPI_BYTE, wants[k].source, wants[k].tag,
                         MPI_COMM_WORLD, &rreqs[k]));
    for (int k = 0; k < M; ++k) {
      const Msg* m = &msgs[g_rank * M + k];
      sreqs[k] = MPI_REQUEST_NULL;
      /* A blocking send to oneself would wait for a receive posted later. */
      int kind = m->dest == g_rank && sendKinds[k] < 2 ? 2 : sendKinds[k];
      switch (kind) {
        case 0: MPI_OK(MPI_Send(sbufs[k], m->bytes, MPI_BYTE, m->dest, m->tag, MPI_COMM_WORLD)); break;
        case 1: MPI_OK(MPI_Ssend(sbufs[k], m->bytes, MPI_BYTE, m->dest, m->tag, MPI_COMM_WORLD)); break;
        case 2: MPI_OK(MPI_Isend(sbufs[k], m->bytes, MPI_BYTE, m->dest, m->tag, MPI_COMM_WORLD, &sreqs[k])); break;
        default: MPI_OK(MPI_Issend(sbufs[k], m->bytes, MPI_BYTE, m->dest, m->tag, MPI_COMM_WORLD, &sreqs[k])); break;
      }
    }
    if (!prepost) {
      for (int k = 0; k < nin; ++k)
        MPI_OK(MPI_Recv(rbufs[k], MAXB, MPI_BYTE, wants[k].source, wants[k].tag, MPI_COMM_WORLD,
                        &sts[k]));
    } else if (completion == 0) {
      MPI_OK(MPI_Waitall(nin, rreqs, sts));
    } else if (completion == 1) {
      for (int k = 0; k < nin; ++k) {
        int i;
        MPI_Status st;
        MPI_OK(MPI_Waitany(nin, rreqs, &i, &st));
        CHECK(i >= 0 && i < nin);
        sts[i] = st;
      }
    } else {
      for (int left = nin; left > 0;) {
        int out;
        MPI_Status tmp[M * 64];
        MPI_OK(MPI_Testsome(nin, rreqs, &out, idx, nin <= M * 64 ? tmp : MPI_STATUSES_IGNORE));
        CHECK(out != MPI_UNDEFINED);
        for (int j = 0; j < out; ++j) sts[idx[j]] = tmp[j];
        left -= out;
      }
    }
    MPI_OK(MPI_Waitall(M, sreqs, MPI_STATUSES_IGNORE));

    /* Check in posting order: each receive holds the oldest not yet taken
     * message from its status's source that its tag accepts. */
    for (int k = 0; k < nin; ++k) {
      int src = sts[k].MPI_SOURCE, got;
      MPI_OK(MPI_Get_count(&sts[k], MPI_BYTE, &got));
      CHECKF(src >= 0 && src < g_size, "round %d: receive %d status source %d", round, k, src);
      CHECKF(wants[k].source == MPI_ANY_SOURCE || wants[k].source == src,
             "round %d: receive %d from %d got %d", round, k, wants[k].source, src);
      Msg* m = NULL;
      for (int seq = 0; seq < M; ++seq) {
        Msg* c = &msgs[src * M + seq];
        if (c->dest == g_rank && !c->taken && (wants[k].tag == MPI_ANY_TAG || wants[k].tag == c->tag)) {
          m = c;
          break;
        }
      }
      CHECKF(m, "round %d: receive %d: no message from %d was expected", round, k, src);
      m->taken = 1;
      CHECKF(sts[k].MPI_TAG == m->tag && got == m->bytes,
             "round %d (seed %llu): receive %d (want src %d tag %d) got src %d tag %d %d bytes; "
             "expected message %d: tag %d %d bytes (order violated?)",
             round, (unsigned long long)seed, k, wants[k].source, wants[k].tag, src,
             sts[k].MPI_TAG, got, m->seq, m->tag, m->bytes);
      long long bad = verify(rbufs[k], (size_t)got, seedOf(round, src, m->seq));
      CHECKF(bad < 0, "round %d: message %d from %d wrong at byte %lld", round, m->seq, src, bad);
      moved += got;
    }
    goOn = endRound(side, MPI_Wtime() - start < seconds);
  }

  MPI_OK(MPI_Comm_free(&side));
  for (int i = 0; i < M; ++i) free(sbufs[i]);
  for (int i = 0; i < total; ++i) free(rbufs[i]);
  free(msgs); free(wants); free(order); free(sbufs); free(rbufs);
  free(rreqs); free(sreqs); free(sts); free(idx);
  printf("p2p_stress: rank %d ok (%d rounds, %lld bytes)\n", g_rank, round, moved);
  fflush(stdout);
  MPI_OK(MPI_Finalize());
  return 0;
}
