/* train_dp: data-parallel training of a small MLP with gradient bucketing,
 * the way PyTorch DDP does it.
 *
 * The model is y = W3 tanh(W2 tanh(W1 x + b1) + b2) + b3 (16 -> 64 -> 64 -> 4,
 * 5508 float parameters), trained by SGD to imitate a fixed "teacher" network
 * on synthetic inputs; each step draws a fresh global batch of --batch
 * samples, and rank r trains on its slice of it. Every rank holds the full
 * model. The gradients are summed over the ranks while the backward pass is
 * still running:
 *   - the flat gradient vector is laid out in backward order (last layer
 *     first) and cut into buckets of at most --bucket-mb MiB (a tensor may
 *     straddle two buckets; DDP keeps tensors whole, but splitting them lets
 *     this small model have many buckets);
 *   - as soon as a layer's gradients are computed, every bucket they complete
 *     is started with MPI_Iallreduce (in place), and MPI_Test is called on the
 *     buckets in flight, so the reduction proceeds while the earlier layers'
 *     gradients are computed;
 *   - MPI_Waitall before the update, then the sum is divided by p.
 * Uneven slices: each sample's gradient enters its rank's sum with weight
 * p / batch, that is, a rank's mean gradient is weighted by p * (its samples)
 * / batch. Dividing the sum over the ranks by p then gives the mean over the
 * global batch even when p does not divide it; with equal slices the weight
 * of a rank's mean is 1, and this is DDP's plain average.
 *
 * Checks: the loss falls (the last step's loss is below half the first's);
 * all ranks end with bitwise identical weights (element-wise MPI_MAX and
 * MPI_MIN of the weights' bit patterns agree); and the weights match, within
 * float rounding (1e-4 of the largest weight), those of one process training
 * on each whole global batch, which every rank also runs.
 *   build/bin/loomcc -O2 examples/train_dp.c -o train_dp -lm
 *   build/bin/loomrun -n 4 ./train_dp --steps 200 --batch 64 --bucket-mb 0.002
 * Flags: --steps N (200), --batch B (64), --bucket-mb X (25), --lr X (0.1),
 * --log-every K (20). */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DIN = 16, H1 = 64, H2 = 64, DOUT = 4, TEACHER_H = 32 };
/* Offsets in the flat parameter (and gradient) vector, which is in backward
 * order: layer 3 (W3, b3) first, layer 1 last. Layer k ends at Lk_END. */
enum {
  W3 = 0, B3 = W3 + DOUT * H2, L3_END = B3 + DOUT,
  W2 = L3_END, B2 = W2 + H2 * H1, L2_END = B2 + H2,
  W1 = L2_END, B1 = W1 + H1 * DIN, L1_END = B1 + H1,
  NPARAM = L1_END
};

/* A value in [-1, 1) that depends only on (stream, index): splitmix64. */
static float uniform(uint64_t stream, uint64_t index) {
  uint64_t z = stream * 0x9E3779B97F4A7C15ULL + index + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (float)((double)(z >> 11) / (double)(1ULL << 52) - 1.0);
}

/* The teacher: t = C tanh(A x), with fixed random A and C. */
static float teacherA[TEACHER_H * DIN], teacherC[DOUT * TEACHER_H];

static void initTeacher(void) {
  for (int i = 0; i < TEACHER_H * DIN; ++i) teacherA[i] = 0.6f * uniform(4, (uint64_t)i);
  for (int i = 0; i < DOUT * TEACHER_H; ++i) teacherC[i] = 0.4f * uniform(5, (uint64_t)i);
}

/* Sample i of the endless data stream: an input x and the teacher's output t. */
static void sample(long i, float* x, float* t) {
  float h[TEACHER_H];
  for (int k = 0; k < DIN; ++k) x[k] = uniform(3, (uint64_t)i * DIN + (uint64_t)k);
  for (int j = 0; j < TEACHER_H; ++j) {
    float a = 0.0f;
    for (int k = 0; k < DIN; ++k) a += teacherA[j * DIN + k] * x[k];
    h[j] = tanhf(a);
  }
  for (int o = 0; o < DOUT; ++o) {
    float a = 0.0f;
    for (int j = 0; j < TEACHER_H; ++j) a += teacherC[o * TEACHER_H + j] * h[j];
    t[o] = a;
  }
}

/* Weights uniform in [-1, 1) / sqrt(fan-in), biases zero. */
static void initWeights(float* w) {
  for (int i = 0; i < NPARAM; ++i) {
    float scale = 0.0f;
    if (i >= W3 && i < B3) scale = 1.0f / sqrtf(H2);
    if (i >= W2 && i < B2) scale = 1.0f / sqrtf(H1);
    if (i >= W1 && i < B1) scale = 1.0f / sqrtf(DIN);
    w[i] = scale * uniform(1, (uint64_t)i);
  }
}

/* Activations and deltas for up to `cap` samples. */
typedef struct {
  float *x, *t, *h1, *h2, *dy, *d2, *d1;
} Work;

static void* alloc(size_t bytes) {
  void* a = calloc(bytes ? bytes : 1, 1);
  if (!a) {
    fprintf(stderr, "train_dp: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return a;
}

static Work newWork(int cap) {
  Work k;
  k.x = alloc(sizeof(float) * (size_t)cap * DIN);
  k.t = alloc(sizeof(float) * (size_t)cap * DOUT);
  k.h1 = alloc(sizeof(float) * (size_t)cap * H1);
  k.h2 = alloc(sizeof(float) * (size_t)cap * H2);
  k.dy = alloc(sizeof(float) * (size_t)cap * DOUT);
  k.d2 = alloc(sizeof(float) * (size_t)cap * H2);
  k.d1 = alloc(sizeof(float) * (size_t)cap * H1);
  return k;
}

static void freeWork(Work* k) {
  free(k->x);
  free(k->t);
  free(k->h1);
  free(k->h2);
  free(k->dy);
  free(k->d2);
  free(k->d1);
}

/* Called when g[0, ready) holds final gradients. */
typedef void (*ReadyFn)(int ready, void* ctx);

/* Forward and backward over samples first .. first+n-1 of the stream. Each
 * sample's loss 0.5 |y - t|^2 enters the gradient with the given weight;
 * g[] gets the gradient (every element is written), and ready() is called
 * after each layer. Returns the sum of the n losses. */
static double forwardBackward(const float* w, float* g, long first, int n, float weight, Work* k,
                              ReadyFn ready, void* ctx) {
  double loss = 0.0;
  for (int b = 0; b < n; ++b) {
    float *x = k->x + b * DIN, *t = k->t + b * DOUT, *h1 = k->h1 + b * H1, *h2 = k->h2 + b * H2;
    sample(first + b, x, t);
    for (int j = 0; j < H1; ++j) {
      float a = w[B1 + j];
      for (int i = 0; i < DIN; ++i) a += w[W1 + j * DIN + i] * x[i];
      h1[j] = tanhf(a);
    }
    for (int j = 0; j < H2; ++j) {
      float a = w[B2 + j];
      for (int i = 0; i < H1; ++i) a += w[W2 + j * H1 + i] * h1[i];
      h2[j] = tanhf(a);
    }
    for (int o = 0; o < DOUT; ++o) {
      float y = w[B3 + o];
      for (int i = 0; i < H2; ++i) y += w[W3 + o * H2 + i] * h2[i];
      loss += 0.5 * (double)(y - t[o]) * (double)(y - t[o]);
      k->dy[b * DOUT + o] = (y - t[o]) * weight;
    }
  }
  /* Layer 3. */
  for (int o = 0; o < DOUT; ++o) {
    float gb = 0.0f;
    for (int b = 0; b < n; ++b) gb += k->dy[b * DOUT + o];
    g[B3 + o] = gb;
    for (int i = 0; i < H2; ++i) {
      float s = 0.0f;
      for (int b = 0; b < n; ++b) s += k->dy[b * DOUT + o] * k->h2[b * H2 + i];
      g[W3 + o * H2 + i] = s;
    }
  }
  if (ready) ready(L3_END, ctx);
  /* Layer 2. */
  for (int b = 0; b < n; ++b)
    for (int i = 0; i < H2; ++i) {
      float s = 0.0f;
      for (int o = 0; o < DOUT; ++o) s += w[W3 + o * H2 + i] * k->dy[b * DOUT + o];
      float h = k->h2[b * H2 + i];
      k->d2[b * H2 + i] = s * (1.0f - h * h);
    }
  for (int j = 0; j < H2; ++j) {
    float gb = 0.0f;
    for (int b = 0; b < n; ++b) gb += k->d2[b * H2 + j];
    g[B2 + j] = gb;
    for (int i = 0; i < H1; ++i) {
      float s = 0.0f;
      for (int b = 0; b < n; ++b) s += k->d2[b * H2 + j] * k->h1[b * H1 + i];
      g[W2 + j * H1 + i] = s;
    }
  }
  if (ready) ready(L2_END, ctx);
  /* Layer 1. */
  for (int b = 0; b < n; ++b)
    for (int i = 0; i < H1; ++i) {
      float s = 0.0f;
      for (int j = 0; j < H2; ++j) s += w[W2 + j * H1 + i] * k->d2[b * H2 + j];
      float h = k->h1[b * H1 + i];
      k->d1[b * H1 + i] = s * (1.0f - h * h);
    }
  for (int j = 0; j < H1; ++j) {
    float gb = 0.0f;
    for (int b = 0; b < n; ++b) gb += k->d1[b * H1 + j];
    g[B1 + j] = gb;
    for (int i = 0; i < DIN; ++i) {
      float s = 0.0f;
      for (int b = 0; b < n; ++b) s += k->d1[b * H1 + j] * k->x[b * DIN + i];
      g[W1 + j * DIN + i] = s;
    }
  }
  if (ready) ready(L1_END, ctx);
  return loss;
}

/* The buckets: bucket i is g[i * cap, min((i + 1) * cap, NPARAM)). */
typedef struct {
  float* g;
  int cap, count, launched;
  MPI_Request* req;
  long finishedEarly; /* buckets MPI_Test found complete before MPI_Waitall */
} Buckets;

static void launchReady(int ready, void* ctx) {
  Buckets* bk = ctx;
  while (bk->launched < bk->count) {
    int lo = bk->launched * bk->cap, hi = lo + bk->cap < NPARAM ? lo + bk->cap : NPARAM;
    if (hi > ready) break;
    MPI_Iallreduce(MPI_IN_PLACE, bk->g + lo, hi - lo, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                   &bk->req[bk->launched++]);
  }
  for (int i = 0; i < bk->launched; ++i) {
    if (bk->req[i] == MPI_REQUEST_NULL) continue;
    int done;
    MPI_Test(&bk->req[i], &done, MPI_STATUS_IGNORE);
    if (done) ++bk->finishedEarly;
  }
}

static int parseArgs(int argc, char** argv, long* steps, int* batch, double* bucketMb,
                     double* lr, long* logEvery) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    char* end = NULL;
    if (i + 1 >= argc) return 0;
    const char* v = argv[++i];
    if (!strcmp(a, "--steps")) *steps = strtol(v, &end, 10);
    else if (!strcmp(a, "--batch")) *batch = (int)strtol(v, &end, 10);
    else if (!strcmp(a, "--bucket-mb")) *bucketMb = strtod(v, &end);
    else if (!strcmp(a, "--lr")) *lr = strtod(v, &end);
    else if (!strcmp(a, "--log-every")) *logEvery = strtol(v, &end, 10);
    else return 0;
    if (!end || *end || end == v) return 0;
  }
  return *steps >= 1 && *batch >= 1 && *bucketMb > 0.0 && *lr > 0.0 && *logEvery >= 1;
}

int main(int argc, char** argv) {
  int rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  long steps = 200, logEvery = 20;
  int batch = 64;
  double bucketMb = 25.0, lr = 0.1;
  if (!parseArgs(argc, argv, &steps, &batch, &bucketMb, &lr, &logEvery)) {
    if (rank == 0)
      fprintf(stderr, "usage: train_dp [--steps N] [--batch B] [--bucket-mb X] [--lr X] "
                      "[--log-every K]\n");
    MPI_Finalize();
    return 2;
  }
  /* This rank's slice of each global batch. */
  const int lo = (int)((long)batch * rank / p), hi = (int)((long)batch * (rank + 1) / p);
  const float weight = (float)p / (float)batch; /* = 1/(hi-lo) when p divides batch */

  double capBytes = bucketMb * 1024.0 * 1024.0;
  Buckets bk = {0};
  bk.cap = capBytes / sizeof(float) >= NPARAM ? NPARAM : (int)(capBytes / sizeof(float));
  if (bk.cap < 1) bk.cap = 1;
  bk.count = (NPARAM + bk.cap - 1) / bk.cap;
  bk.req = alloc(sizeof(MPI_Request) * (size_t)bk.count);

  float *w = alloc(sizeof(float) * NPARAM), *g = alloc(sizeof(float) * NPARAM);
  float *wRef = alloc(sizeof(float) * NPARAM), *gRef = alloc(sizeof(float) * NPARAM);
  initTeacher();
  initWeights(w);
  initWeights(wRef);
  bk.g = g;
  Work work = newWork(hi - lo), workRef = newWork(batch);

  if (rank == 0)
    printf("train_dp: %d ranks, MLP %d-%d-%d-%d (%d parameters), global batch %d, %d bucket%s "
           "of up to %d floats (--bucket-mb %g)\n",
           p, DIN, H1, H2, DOUT, NPARAM, batch, bk.count, bk.count == 1 ? "" : "s", bk.cap,
           bucketMb);
  double firstLoss = 0.0, loss = 0.0, seconds = 0.0; /* seconds: the distributed steps only */
  for (long step = 0; step < steps; ++step) {
    long first = step * batch;
    double t0 = MPI_Wtime();
    bk.launched = 0;
    double local = forwardBackward(w, g, first + lo, hi - lo, weight, &work, launchReady, &bk);
    MPI_Waitall(bk.count, bk.req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < NPARAM; ++i) w[i] -= (float)lr * (g[i] / (float)p);
    MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    seconds += MPI_Wtime() - t0;
    loss = local / batch;
    if (step == 0) firstLoss = loss;
    if (rank == 0 && (step % logEvery == 0 || step == steps - 1))
      printf("step %4ld  loss %.5f\n", step, loss);

    /* The single-process reference: the same step on the whole batch. */
    forwardBackward(wRef, gRef, first, batch, 1.0f / (float)batch, &workRef, NULL, NULL);
    for (int i = 0; i < NPARAM; ++i) wRef[i] -= (float)lr * gRef[i];
  }

  /* Identical on all ranks: the element-wise max and min of the bit patterns agree. */
  unsigned *bits = alloc(sizeof(unsigned) * NPARAM), *bmax = alloc(sizeof(unsigned) * NPARAM),
           *bmin = alloc(sizeof(unsigned) * NPARAM);
  for (int i = 0; i < NPARAM; ++i) {
    uint32_t u;
    memcpy(&u, &w[i], sizeof u);
    bits[i] = u;
  }
  MPI_Allreduce(bits, bmax, NPARAM, MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(bits, bmin, NPARAM, MPI_UNSIGNED, MPI_MIN, MPI_COMM_WORLD);
  int differing = 0;
  for (int i = 0; i < NPARAM; ++i) differing += bmax[i] != bmin[i];
  double maxDiff = 0.0, maxW = 0.0;
  for (int i = 0; i < NPARAM; ++i) {
    maxDiff = fmax(maxDiff, fabs((double)w[i] - (double)wRef[i]));
    maxW = fmax(maxW, fabs((double)w[i]));
  }
  long early = 0, launches = steps * bk.count;
  MPI_Reduce(&bk.finishedEarly, &early, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

  /* Float sums in another order drift apart by a few ulps a step; 1e-4 of the
   * largest weight is far below any real error. */
  int falls = loss < 0.5 * firstLoss, identical = differing == 0;
  int matches = maxDiff <= 1e-4 * fmax(maxW, 1.0) && !isnan(maxDiff);
  int ok = falls && identical && matches, allOk;
  if (!falls)
    fprintf(stderr, "train_dp: rank %d: the loss did not halve: %.5f -> %.5f\n", rank, firstLoss,
            loss);
  if (!identical)
    fprintf(stderr, "train_dp: rank %d: %d of %d weights differ between ranks\n", rank, differing,
            NPARAM);
  if (!matches)
    fprintf(stderr, "train_dp: rank %d: weights differ from the single-process reference by %.3e\n",
            rank, maxDiff);
  MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%.3f ms a step; on average %ld of the %ld bucket reductions finished during the "
           "backward pass\n", 1e3 * seconds / (double)steps, early / p, launches);
    printf("train_dp: %d ranks, %ld steps, loss %.3g -> %.3g, weights %s on all ranks, %s "
           "single-process reference (max diff %.1e): %s\n",
           p, steps, firstLoss, loss, identical ? "identical" : "DIFFERENT",
           matches ? "match" : "DO NOT MATCH", maxDiff, allOk ? "ok" : "WRONG");
  }
  freeWork(&work);
  freeWork(&workRef);
  free(w);
  free(g);
  free(wRef);
  free(gRef);
  free(bk.req);
  free(bits);
  free(bmax);
  free(bmin);
  MPI_Finalize();
  return allOk ? 0 : 1;
}
