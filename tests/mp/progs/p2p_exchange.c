/* p2p_exchange: ping-pong between neighbours (rank ^ 1, or oneself when the
 * neighbour does not exist) and a ring shift, over sizes that straddle every
 * protocol threshold, in every send mode (standard, synchronous, ready,
 * buffered) and every form (blocking, nonblocking, persistent), checking
 * content, status and that nothing is written past the receive buffer.
 *
 *   p2p_exchange [--vector | --indexed | --struct] [--max BYTES]
 *
 * --vector sends a non-contiguous derived type of tiny blocks: 4 blocks of
 * 3 bytes in a 24-byte extent (12 data bytes), built as MPI_Type_vector of
 * bytes (stride 7); --indexed places the blocks irregularly
 * (MPI_Type_indexed), --struct makes each block a different basic type
 * (MPI_Type_create_struct of chars, signed/unsigned chars and bytes). The
 * ping-pong receives with the same type (gaps must stay untouched), the
 * ring as plain bytes; up to 16 MB, i.e. 5.6 M blocks per message. --max
 * skips the sizes above BYTES.
 * Prints "p2p_exchange: rank R ok". */
#include "p2p_util.h"

static const long kSizes[] = {0,     1,     7,     24,    25,    39,           40,      41,
                              4095,  16383, 16384, 16385, 65537, (1 << 20) + 3, 16 << 20};
enum { kNumSizes = sizeof kSizes / sizeof kSizes[0] };
enum Mode { STANDARD, SYNC, READY, BUFFERED, NMODES };
enum Form { BLOCKING, NONBLOCKING, PERSISTENT, NFORMS };
static const char* kModeName[] = {"standard", "sync", "ready", "buffered"};
static const char* kFormName[] = {"blocking", "nonblocking", "persistent"};

enum { kTokenTag = 30000, kGuard = 64, kVecBlocks = 4, kVecLen = 3 };
static const int kVecSize = kVecBlocks * kVecLen;                          /* 12 */
static const int kVecExtent = 24;                                         /* resized */
static const unsigned char kFillByte = 0xEE;

/* Where the 3-byte blocks of one element lie, per layout. */
static const int kVectorOffsets[kVecBlocks] = {0, 7, 14, 21};  /* stride 7 */
static const int kIndexedOffsets[kVecBlocks] = {1, 6, 12, 20};
static const int kStructOffsets[kVecBlocks] = {0, 4, 9, 17};

static int g_vector = 0; /* a derived layout is in use */
static const char* g_layoutName = "";
static const int* g_off = kVectorOffsets;
static MPI_Datatype g_vec = MPI_DATATYPE_NULL;
/* Scratch for a derived layout's packed stream and expected memory image,
 * allocated once: 16 MB buffers per message cost more in page faults than
 * the transfer. */
static unsigned char* g_stream;
static unsigned char* g_image;

/* Builds g_vec for the layout named by g_layoutName. */
static void buildLayout(void) {
  MPI_Datatype v;
  if (!strcmp(g_layoutName, "vector")) {
    MPI_OK(MPI_Type_vector(kVecBlocks, kVecLen, kVectorOffsets[1], MPI_BYTE, &v));
  } else if (!strcmp(g_layoutName, "indexed")) {
    g_off = kIndexedOffsets;
    int bl[kVecBlocks] = {kVecLen, kVecLen, kVecLen, kVecLen};
    MPI_OK(MPI_Type_indexed(kVecBlocks, bl, kIndexedOffsets, MPI_BYTE, &v));
  } else {
    g_off = kStructOffsets;
    int bl[kVecBlocks] = {kVecLen, kVecLen, kVecLen, kVecLen};
    MPI_Aint d[kVecBlocks];
    for (int b = 0; b < kVecBlocks; ++b) d[b] = kStructOffsets[b];
    MPI_Datatype ty[kVecBlocks] = {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE};
    MPI_OK(MPI_Type_create_struct(kVecBlocks, bl, d, ty, &v));
  }
  MPI_OK(MPI_Type_create_resized(v, 0, kVecExtent, &g_vec));
  MPI_OK(MPI_Type_free(&v));
  MPI_OK(MPI_Type_commit(&g_vec));
  int sz;
  MPI_Aint lb, ext;
  MPI_OK(MPI_Type_size(g_vec, &sz));
  MPI_OK(MPI_Type_get_extent(g_vec, &lb, &ext));
  CHECK(sz == kVecSize && lb == 0 && ext == kVecExtent);
}

/* The memory image of `elems` elements whose stream is `stream`, gaps set
 * to `gap`. */
static void scatter(unsigned char* mem, const unsigned char* stream, size_t elems,
                    unsigned char gap) {
  memset(mem, gap, elems * kVecExtent);
  for (size_t e = 0; e < elems; ++e)
    for (int b = 0; b < kVecBlocks; ++b)
      memcpy(mem + e * kVecExtent + g_off[b], stream + e * kVecSize + b * kVecLen, kVecLen);
}

/* One side of a message: buffer, count, type. */
typedef struct {
  void* buf;
  int count;
  MPI_Datatype type;
} Side;

/* Message of `bytes` stream bytes: fills the send buffer so that its stream
 * is pattern(seed). */
static void prepareSend(Side* s, unsigned char* mem, size_t bytes, int vec, uint32_t seed) {
  if (!vec) {
    fill(mem, bytes, seed);
    s->buf = mem;
    s->count = (int)bytes;
    s->type = MPI_BYTE;
    return;
  }
  size_t elems = bytes / kVecSize;
  fill(g_stream, elems * kVecSize, seed);
  scatter(mem, g_stream, elems, 0x5A);
  s->buf = mem;
  s->count = (int)elems;
  s->type = g_vec;
}

static void prepareRecv(Side* s, unsigned char* mem, size_t bytes, int vec) {
  size_t span = vec ? (bytes / kVecSize) * kVecExtent : bytes;
  memset(mem, kFillByte, span + kGuard);
  s->buf = mem;
  s->count = vec ? (int)(bytes / kVecSize) : (int)bytes;
  s->type = vec ? g_vec : MPI_BYTE;
}

static void checkRecv(const unsigned char* mem, size_t bytes, int vec, uint32_t seed,
                      const char* what) {
  if (!vec) {
    long long bad = verify(mem, bytes, seed);
    CHECKF(bad < 0, "%s: %zu bytes, wrong byte at %lld", what, bytes, bad);
    for (int g = 0; g < kGuard; ++g)
      CHECKF(mem[bytes + g] == kFillByte, "%s: %zu bytes, written past the buffer", what, bytes);
    return;
  }
  /* Compare with the expected image (data blocks, untouched gaps) in one
   * memcmp; locate the first difference only on failure. */
  size_t elems = bytes / kVecSize;
  unsigned char* image = g_image;
  fill(g_stream, elems * kVecSize, seed);
  scatter(image, g_stream, elems, kFillByte);
  if (memcmp(mem, image, elems * kVecExtent)) {
    size_t i = 0;
    while (mem[i] == image[i]) ++i;
    size_t e = i / kVecExtent, at = i % kVecExtent;
    int inBlock = 0;
    for (int b = 0; b < kVecBlocks; ++b)
      inBlock |= at >= (size_t)g_off[b] && at < (size_t)g_off[b] + kVecLen;
    CHECKF(0, "%s: %zu bytes, %s byte %zu of element %zu", what, bytes,
           inBlock ? "wrong data" : "written gap", at, e);
  }
  for (size_t g = 0; g < kGuard; ++g)
    CHECKF(mem[elems * kVecExtent + g] == kFillByte, "%s: %zu bytes, written past the buffer",
           what, bytes);
}

static void startSendReq(const Side* s, int dest, int tag, int mode, MPI_Request* req) {
  switch (mode) {
    case STANDARD: MPI_OK(MPI_Send_init(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD, req)); break;
    case SYNC: MPI_OK(MPI_Ssend_init(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD, req)); break;
    case READY: MPI_OK(MPI_Rsend_init(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD, req)); break;
    default: MPI_OK(MPI_Bsend_init(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD, req)); break;
  }
}

static void isendMode(const Side* s, int dest, int tag, int mode, MPI_Request* req) {
  switch (mode) {
    case STANDARD: MPI_OK(MPI_Isend(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD, req)); break;
    case SYNC: MPI_OK(MPI_Issend(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD, req)); break;
    case READY: MPI_OK(MPI_Irsend(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD, req)); break;
    default: MPI_OK(MPI_Ibsend(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD, req)); break;
  }
}

static void sendMode(const Side* s, int dest, int tag, int mode) {
  switch (mode) {
    case STANDARD: MPI_OK(MPI_Send(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD)); break;
    case SYNC: MPI_OK(MPI_Ssend(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD)); break;
    case READY: MPI_OK(MPI_Rsend(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD)); break;
    default: MPI_OK(MPI_Bsend(s->buf, s->count, s->type, dest, tag, MPI_COMM_WORLD)); break;
  }
}

static void checkStatus(const MPI_Status* st, int src, int tag, size_t bytes, const char* what) {
  int count = -1;
  MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
  if (src == MPI_PROC_NULL) {
    CHECKF(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0,
           "%s: PROC_NULL status source=%d tag=%d count=%d", what, st->MPI_SOURCE, st->MPI_TAG,
           count);
    return;
  }
  CHECKF(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == (int)bytes,
         "%s: status source=%d tag=%d count=%d, expected %d %d %zu", what, st->MPI_SOURCE,
         st->MPI_TAG, count, src, tag, bytes);
}

/* Sends `snd` to dest and receives `rcv` from src (either may be
 * MPI_PROC_NULL) in the given mode and form. A ready send is preceded by a
 * token from the receiver saying its receive is posted. */
static void transfer(const Side* snd, int dest, const Side* rcv, int src, int tag, int mode,
                     int form, size_t rbytes, const char* what) {
  MPI_Status st;
  MPI_Request rreq, sreq;
  int self = dest == g_rank && src == g_rank;
  /* Blocking form without a ready token or self loop: plain send then
   * receive (one of them is MPI_PROC_NULL in a ping-pong step). */
  if (form == BLOCKING && mode != READY && !self && (dest == MPI_PROC_NULL || src == MPI_PROC_NULL)) {
    sendMode(snd, dest, tag, mode);
    MPI_OK(MPI_Recv(rcv->buf, rcv->count, rcv->type, src, tag, MPI_COMM_WORLD, &st));
    checkStatus(&st, src, tag, rbytes, what);
    return;
  }
  if (form == BLOCKING && mode == STANDARD) {
    MPI_OK(MPI_Sendrecv(snd->buf, snd->count, snd->type, dest, tag, rcv->buf, rcv->count,
                        rcv->type, src, tag, MPI_COMM_WORLD, &st));
    checkStatus(&st, src, tag, rbytes, what);
    return;
  }
  /* A persistent pair runs twice: the second start reuses both requests. */
  const int reps = form == PERSISTENT ? 2 : 1;
  if (form == PERSISTENT) {
    MPI_OK(MPI_Recv_init(rcv->buf, rcv->count, rcv->type, src, tag, MPI_COMM_WORLD, &rreq));
    startSendReq(snd, dest, tag, mode, &sreq);
  }
  for (int rep = 0; rep < reps; ++rep) {
    if (form == PERSISTENT)
      MPI_OK(MPI_Start(&rreq));
    else
      MPI_OK(MPI_Irecv(rcv->buf, rcv->count, rcv->type, src, tag, MPI_COMM_WORLD, &rreq));
    if (mode == READY) {
      MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, src, kTokenTag, MPI_COMM_WORLD));
      MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, dest, kTokenTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    switch (form) {
      case BLOCKING:
        sendMode(snd, dest, tag, mode);
        break;
      case NONBLOCKING:
        isendMode(snd, dest, tag, mode, &sreq);
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        CHECK(sreq == MPI_REQUEST_NULL);
        break;
      default:
        MPI_OK(MPI_Start(&sreq));
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        CHECK(sreq != MPI_REQUEST_NULL); /* persistent: inactive, not freed */
        break;
    }
    MPI_OK(MPI_Wait(&rreq, &st));
    checkStatus(&st, src, tag, rbytes, what);
    CHECK(form == PERSISTENT ? rreq != MPI_REQUEST_NULL : rreq == MPI_REQUEST_NULL);
  }
  if (form == PERSISTENT) {
    MPI_OK(MPI_Request_free(&rreq));
    MPI_OK(MPI_Request_free(&sreq));
    CHECK(rreq == MPI_REQUEST_NULL && sreq == MPI_REQUEST_NULL);
  }
}

int main(int argc, char** argv) {
  long maxBytes = 16 << 20;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--vector") || !strcmp(argv[i], "--indexed") ||
        !strcmp(argv[i], "--struct")) {
      g_vector = 1;
      g_layoutName = argv[i] + 2;
    } else if (!strcmp(argv[i], "--max") && i + 1 < argc) maxBytes = atol(argv[++i]);
  }
  p2p_init(&argc, &argv, "p2p_exchange");
  if (g_vector) buildLayout();
  size_t cap = (size_t)maxBytes * (g_vector ? 2 : 1) + 64 + kGuard;
  unsigned char* sbuf = malloc(cap);
  unsigned char* rbuf = malloc(cap);
  CHECK(sbuf && rbuf);
  if (g_vector) {
    g_stream = malloc((size_t)maxBytes + 1);
    g_image = malloc((size_t)maxBytes * 2 + 1);
    CHECK(g_stream && g_image);
  }
  /* Room for four buffered messages in flight at the largest size: a
   * buffered message holds its space until the receiver has taken it. */
  int bsize = (int)(4 * ((size_t)maxBytes + MPI_BSEND_OVERHEAD) + 4096);
  void* battach = malloc((size_t)bsize);
  CHECK(battach);
  MPI_OK(MPI_Buffer_attach(battach, bsize));

  const int partner = (g_rank ^ 1) < g_size ? (g_rank ^ 1) : g_rank;
  const int right = (g_rank + 1) % g_size, left = (g_rank - 1 + g_size) % g_size;
  char what[160];
  int tag = 0;
  for (int si = 0; si < kNumSizes; ++si) {
    size_t bytes = (size_t)kSizes[si];
    if ((long)bytes > maxBytes) continue;
    if (g_vector) bytes = (bytes / kVecSize) * kVecSize;
    for (int mode = 0; mode < NMODES; ++mode) {
      for (int form = 0; form < NFORMS; ++form) {
        tag = (tag + 1) % 1000;
        Side s, r;
        /* Ping-pong: the lower rank sends first; a rank without a
         * neighbour plays both parts itself. */
        snprintf(what, sizeof what, "ping-pong %s %s %zu B %s", kModeName[mode], kFormName[form],
                 bytes, g_layoutName);
        for (int step = 0; step < 2; ++step) {
          int sender = step == 0 ? (g_rank < partner ? g_rank : partner)
                                 : (g_rank < partner ? partner : g_rank);
          uint32_t seed = (uint32_t)(si * 1000 + mode * 100 + form * 10 + step) ^
                          (uint32_t)sender << 20;
          int iSend = sender == g_rank, iRecv = partner == g_rank || sender != g_rank;
          prepareSend(&s, sbuf, iSend ? bytes : 0, g_vector, seed);
          prepareRecv(&r, rbuf, iRecv ? bytes : 0, g_vector);
          transfer(&s, iSend ? partner : MPI_PROC_NULL, &r, iRecv ? sender : MPI_PROC_NULL, tag,
                   mode, form, bytes, what);
          if (iRecv) checkRecv(rbuf, bytes, g_vector, seed, what);
        }
        /* Ring: everyone sends right and receives from the left; the
         * vector variant receives the stream as plain bytes. */
        snprintf(what, sizeof what, "ring %s %s %zu B %s", kModeName[mode], kFormName[form], bytes,
                 g_layoutName);
        uint32_t seed = (uint32_t)(si * 7919 + mode * 31 + form * 3);
        prepareSend(&s, sbuf, bytes, g_vector, seed ^ (uint32_t)g_rank << 20);
        prepareRecv(&r, rbuf, bytes, 0);
        transfer(&s, right, &r, left, tag, mode, form, bytes, what);
        checkRecv(rbuf, bytes, 0, seed ^ (uint32_t)left << 20, what);
      }
    }
  }
  void* back;
  int backSize;
  MPI_OK(MPI_Buffer_detach(&back, &backSize));
  CHECK(back == battach && backSize == bsize);
  free(battach);
  if (g_vector) MPI_OK(MPI_Type_free(&g_vec));
  free(g_stream);
  free(g_image);
  free(sbuf);
  free(rbuf);
  p2p_barrier(MPI_COMM_WORLD);
  p2p_done();
  return 0;
}
